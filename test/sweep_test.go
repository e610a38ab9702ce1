// Holds docs/contract.md §2 Upload doors: orphaned blobs swept.

package test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestSweepDeletesOnlyOldOrphans: objects without a record (what a crash
// between the object's and the record's commit leaves) go; recorded files and
// recent objects (uploads in flight) stay.
func TestSweepDeletesOnlyOldOrphans(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, a, customer := withPatient(t, b, 100*mib)
		other := s.newCompany(t, mib)
		r := s.upload(t, "/api/gdt/upload", gdtHeaders(a, customer), filePart("befund.pdf", pdfOfSize(1000)))
		if r.status != 200 {
			t.Fatalf("upload: %d %q", r.status, r.Message)
		}
		old := time.Now().Add(-2 * time.Hour)
		place := func(company, name string, mtime time.Time) string {
			path := filepath.Join(s.blobDir, company, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("orphan"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			return path
		}
		kept := filepath.Join(s.blobDir, a.ID, r.Files[0].ID)
		if err := os.Chtimes(kept, old, old); err != nil {
			t.Fatal(err)
		}
		young := place(a.ID, "11111111-1111-4111-8111-111111111111", time.Now())
		gone := []string{
			place(a.ID, "22222222-2222-4222-8222-222222222222", old),
			place(a.ID, "33333333-3333-4333-8333-333333333333.18f3a.tmp", old), // a spool file a crash cut off
			place(other.ID, "44444444-4444-4444-8444-444444444444", old),
		}
		before := s.storageOf(t, a.ID)

		var report map[string]int64
		s.praxis(t, &report, "admin", "blobs", "sweep", "--json")
		want := map[string]int64{"companies": 2, "objects_checked": 5, "orphans_deleted": 3, "orphan_bytes_deleted": 18}
		if !reflect.DeepEqual(report, want) {
			t.Errorf("report %v, want %v", report, want)
		}
		for _, p := range gone {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s survived the sweep", p)
			}
		}
		for _, p := range []string{kept, young} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s was swept: %v", p, err)
			}
		}
		if after := s.storageOf(t, a.ID); after.files != before.files || after.used != before.used {
			t.Errorf("sweep changed records: %+v → %+v", before, after)
		}
		if _, errOut, code := praxisIn(t, s.env, "admin", "blobs", "sweep", "--older-than", "1m"); code == 0 {
			t.Errorf("--older-than 1m: exit 0 (%q), want a refusal that protects uploads in flight", errOut)
		}
	})
}

// TestEmbeddedModeSweepsInProcess: on SQLite the server itself deletes old
// orphans every PRAXIS_SWEEP_INTERVAL; recorded files stay.
func TestEmbeddedModeSweepsInProcess(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0], "PRAXIS_SWEEP_INTERVAL=200ms")
	c := s.newCompany(t, mib)
	customer := s.newCustomer(t, c)
	r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("befund.pdf", pdfOfSize(1000)))
	if r.status != 200 {
		t.Fatalf("upload: %d", r.status)
	}
	old := time.Now().Add(-2 * time.Hour)
	kept := filepath.Join(s.blobDir, c.ID, r.Files[0].ID)
	orphan := filepath.Join(s.blobDir, c.ID, "55555555-5555-4555-8555-555555555555")
	if err := os.WriteFile(orphan, []byte("orphan"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{kept, orphan} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(orphan); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not sweep the old orphan")
		}
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("the recorded file was swept: %v", err)
	}
}
