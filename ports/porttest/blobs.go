package porttest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// blobPayload is 550 kB, several writes of a writer.
var blobPayload = bytes.Repeat([]byte("GDT-Befund "), 50_000)

// RunBlobSuite checks a blob store adapter against the port's contract.
// newStore must return an empty store.

func RunBlobSuite(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, newStore func(t *testing.T) ports.BlobStore)
	}{
		{"committed object round trips", blobRoundTrip},
		{"ranges read exactly their bytes", blobRanges},
		{"another company cannot read or delete it", blobOtherCompany},
		{"an aborted write leaves nothing", blobAborted},
		{"nothing is visible before commit", blobBeforeCommit},
		{"a large object spans parts; aborting one leaves nothing", blobLarge},
		{"walk lists the company's objects only", blobWalk},
		{"delete removes, twice is fine", blobDelete},
		{"names cannot escape the company", blobNames},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore) })
	}
}

func put(t *testing.T, s ports.BlobStore, company domain.CompanyID, name string, data []byte) {
	t.Helper()
	w, err := s.NewWriter(context.Background(), company, name, "application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, s ports.BlobStore, company domain.CompanyID, name string) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), company, name, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func blobRoundTrip(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	a := domain.NewCompanyID()
	s := newStore(t)
	put(t, s, a, "one", blobPayload)
	if got := read(t, s, a, "one"); !bytes.Equal(got, blobPayload) {
		t.Errorf("read back %d bytes, want the %d written", len(got), len(blobPayload))
	}
}

func blobRanges(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	ctx := context.Background()
	a := domain.NewCompanyID()
	s := newStore(t)
	put(t, s, a, "ranged", blobPayload)
	for _, r := range []struct{ offset, length int64 }{{0, 10}, {12345, 777}, {int64(len(blobPayload)) - 5, -1}, {0, -1}} {
		rc, err := s.Open(ctx, a, "ranged", r.offset, r.length)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		_ = rc.Close()
		end := int64(len(blobPayload))
		if r.length >= 0 {
			end = r.offset + r.length
		}
		if err != nil || !bytes.Equal(got, blobPayload[r.offset:end]) {
			t.Errorf("range %d+%d: %d bytes, %v", r.offset, r.length, len(got), err)
		}
	}
}

func blobOtherCompany(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	ctx := context.Background()
	a, b := domain.NewCompanyID(), domain.NewCompanyID()
	s := newStore(t)
	put(t, s, a, "shared-name", blobPayload)
	if _, err := s.Open(ctx, b, "shared-name", 0, -1); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("open through company B: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, b, "shared-name"); err != nil {
		t.Errorf("delete through B: %v", err)
	}
	if got := read(t, s, a, "shared-name"); !bytes.Equal(got, blobPayload) {
		t.Error("company B's delete removed company A's object")
	}
}

func blobAborted(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	ctx := context.Background()
	a := domain.NewCompanyID()
	s := newStore(t)
	w, err := s.NewWriter(ctx, a, "aborted", "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(blobPayload); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if _, err := s.Open(ctx, a, "aborted", 0, -1); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("open after abort: %v, want ErrNotFound", err)
	}
}

func blobBeforeCommit(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	ctx := context.Background()
	a := domain.NewCompanyID()
	s := newStore(t)
	w, err := s.NewWriter(ctx, a, "pending", "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(blobPayload); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, a, "pending", 0, -1); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("open before commit: %v, want ErrNotFound", err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, a, "pending"); !bytes.Equal(got, blobPayload) {
		t.Error("object differs after commit")
	}
}

func blobLarge(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	ctx := context.Background()
	a := domain.NewCompanyID()
	s := newStore(t)
	// 18 MiB: on S3 past the SDK's 16 MiB threshold, so in parts.
	large := bytes.Repeat([]byte("DICOM-Serie "), 3<<19)
	put(t, s, a, "large", large)
	if got := read(t, s, a, "large"); !bytes.Equal(got, large) {
		t.Errorf("read back %d bytes, want %d", len(got), len(large))
	}
	w, err := s.NewWriter(ctx, a, "large-aborted", "application/dicom")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(large); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if _, err := s.Open(ctx, a, "large-aborted", 0, -1); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("open after aborting a large write: %v, want ErrNotFound", err)
	}
}

func blobWalk(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	ctx := context.Background()
	a, b := domain.NewCompanyID(), domain.NewCompanyID()
	s := newStore(t)
	put(t, s, a, "one", blobPayload[:10])
	put(t, s, a, "two", blobPayload[:20])
	put(t, s, b, "three", blobPayload[:30])
	before := time.Now().Add(-time.Minute)
	got := map[string]int64{}
	err := s.Walk(ctx, a, func(obj ports.BlobInfo) error {
		got[obj.Name] = obj.Size
		if obj.ModTime.Before(before) || obj.ModTime.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s: modification time %v", obj.Name, obj.ModTime)
		}
		return nil
	})
	if err != nil || len(got) != 2 || got["one"] != 10 || got["two"] != 20 {
		t.Errorf("walk A: %v, %v; want one (10) and two (20)", got, err)
	}
	stop := errors.New("stop")
	if err := s.Walk(ctx, a, func(ports.BlobInfo) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("an error from fn must end the walk: %v", err)
	}
}

func blobDelete(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	ctx := context.Background()
	a := domain.NewCompanyID()
	s := newStore(t)
	put(t, s, a, "gone", blobPayload)
	for range 2 {
		if err := s.Delete(ctx, a, "gone"); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if _, err := s.Open(ctx, a, "gone", 0, -1); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("open after delete: %v, want ErrNotFound", err)
	}
}

func blobNames(t *testing.T, newStore func(t *testing.T) ports.BlobStore) {
	t.Parallel()
	ctx := context.Background()
	a := domain.NewCompanyID()
	s := newStore(t)
	for _, name := range []string{"", "../x", "a/b", ".."} {
		if _, err := s.NewWriter(ctx, a, name, "text/plain"); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("name %q: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := s.NewWriter(ctx, domain.CompanyID{}, "x", "text/plain"); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("zero company: %v, want ErrInvalid", err)
	}
}
