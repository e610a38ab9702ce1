// Holds docs/contract.md §2 Upload doors.

package test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const mib = 1 << 20

func TestUploadStoresEveryAcceptedFormat(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, 100*mib)
		files := []part{
			filePart("befund.pdf", pdfOfSize(1000)),
			filePart("bild.png", pngImage(t)),
			{field: "file[]", filename: "foto.jpg", content: jpegImage(t)},
			filePart("us.dcm", dicomFile()),
			filePart("export.gdt", gdtFile(customer)),
			filePart("notiz.txt", []byte("Blutdruck 120/80\n")),
			filePart("daten.xml", []byte(`<?xml version="1.0"?><befund/>`)),
			filePart("virus.exe", executable()),
			{field: "comment", content: []byte("not a file")},
		}
		for _, path := range []string{"/api/gdt/upload", "/api/sonogdt/upload"} {
			before := s.storageOf(t, c.ID)
			r := s.upload(t, path, gdtHeaders(c, customer), files...)
			if r.status != 200 || r.Status != "success" {
				t.Fatalf("%s: %d %+v", path, r.status, r)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			wantTypes := []string{"application/pdf", "image/png", "image/jpeg", "application/dicom", "application/gdt", "text/plain", "text/xml"}
			if len(r.Files) != len(wantTypes) {
				t.Fatalf("%s: stored %d files, want %d: %+v", path, len(r.Files), len(wantTypes), r.Files)
			}
			var total int64
			for i, f := range r.Files {
				if f.ContentType != wantTypes[i] {
					t.Errorf("%s: %s sniffed as %s, want %s", path, f.Name, f.ContentType, wantTypes[i])
				}
				want := sha256.Sum256(files[i].content)
				if f.SHA256 != hex.EncodeToString(want[:]) || f.Size != int64(len(files[i].content)) || f.Name != files[i].filename {
					t.Errorf("%s: file %d: %+v", path, i, f)
				}
				stored, err := os.ReadFile(filepath.Join(s.blobDir, c.ID, f.ID))
				if err != nil || sha256.Sum256(stored) != want {
					t.Errorf("%s: stored bytes of %s differ: %v", path, f.Name, err)
				}
				total += f.Size
			}
			if len(r.Skipped) != 1 || r.Skipped[0].Name != "virus.exe" {
				t.Errorf("%s: skipped %+v, want virus.exe", path, r.Skipped)
			}
			after := s.storageOf(t, c.ID)
			if after.files-before.files != 7 || after.used-before.used != total || after.objects-before.objects != 7 {
				t.Errorf("%s: storage went from %+v to %+v, want 7 files and %d bytes more", path, before, after, total)
			}
		}
	})
}

func TestUploadHeaders(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 100*mib)
		padded := s.newCustomer(t, c, "--id", "2345")
		pdf := filePart("a.pdf", pdfOfSize(100))
		for name, h := range map[string]map[string]string{
			"sonogdt prefix":       {"x-sonogdt-company": c.ID, "x-sonogdt-customer": "2345", "x-sonogdt-secret": c.Secret},
			"prefixes mixed":       {"x-sonogdt-company": c.ID, "x-gdt-customer": "2345", "x-sonogdt-secret": c.Secret},
			"upper case names":     {"X-GDT-COMPANY": c.ID, "X-Sonogdt-Customer": "2345", "X-Gdt-Secret": c.Secret},
			"leading zeros":        {"x-gdt-company": c.ID, "x-gdt-customer": "0002345", "x-gdt-secret": c.Secret},
			"both prefixes agreed": {"x-gdt-company": c.ID, "x-sonogdt-company": c.ID, "x-gdt-customer": "2345", "x-gdt-secret": c.Secret},
		} {
			if r := s.upload(t, "/api/sonogdt/upload", h, pdf); r.status != 200 {
				t.Errorf("%s: %d %q", name, r.status, r.Message)
			}
		}
		if st := s.storageOf(t, c.ID); st.files != 5 || padded != 2345 {
			t.Errorf("customer %d has %d files, want 5", padded, st.files)
		}
	})
}

// TestUploadRefusals covers each message of the contract and the order of the checks.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 100*mib)
		other := s.newCompany(t, 100*mib)
		tiny := s.newCompany(t, 1000)
		customer := s.newCustomer(t, c)
		otherCustomer := s.newCustomer(t, other)
		tinyCustomer := s.newCustomer(t, tiny)
		unknown := "11111111-2222-4333-8444-555555555555"
		pdf := filePart("a.pdf", pdfOfSize(2000))
		with := func(h map[string]string, kv ...string) map[string]string {
			out := map[string]string{}
			for k, v := range h {
				out[k] = v
			}
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == "" {
					delete(out, kv[i])
					continue
				}
				out[kv[i]] = kv[i+1]
			}
			return out
		}
		ok := gdtHeaders(c, customer)
		many := make([]part, 21)
		for i := range many {
			many[i] = filePart(fmt.Sprintf("%d.pdf", i), pdfOfSize(10))
		}
		for _, tc := range []struct {
			name    string
			headers map[string]string
			parts   []part
			want    string
		}{
			{"company missing", with(ok, "x-gdt-company", ""), []part{pdf}, "UUID forbidden: []"},
			{"company not a UUID", with(ok, "x-gdt-company", "praxis-1"), []part{pdf}, "UUID forbidden: [praxis-1]"},
			{"company unknown", with(ok, "x-gdt-company", unknown), []part{pdf}, "UUID forbidden: [" + unknown + "]"},
			{"company ambiguous", with(ok, "x-sonogdt-company", other.ID), []part{pdf}, "UUID forbidden: [" + c.ID + "]"},
			{"company before secret", with(ok, "x-gdt-company", "x", "x-gdt-secret", "wrong"), []part{pdf}, "UUID forbidden: [x]"},
			{"secret missing", with(ok, "x-gdt-secret", ""), []part{pdf}, "Secret not valid."},
			{"secret wrong", with(ok, "x-gdt-secret", "wrong"), []part{pdf}, "Secret not valid."},
			{"secret of another company", with(ok, "x-gdt-secret", other.Secret), []part{pdf}, "Secret not valid."},
			{"secret ambiguous", with(ok, "x-sonogdt-secret", other.Secret), []part{pdf}, "Secret not valid."},
			{"secret before customer", with(ok, "x-gdt-secret", "wrong", "x-gdt-customer", "x"), []part{pdf}, "Secret not valid."},
			{"customer missing", with(ok, "x-gdt-customer", ""), []part{pdf}, "Customer not found: []"},
			{"customer not a number", with(ok, "x-gdt-customer", "12a"), []part{pdf}, "Customer not found: [12a]"},
			{"customer unknown", with(ok, "x-gdt-customer", "0999999999"), []part{pdf}, "Customer not found: [0999999999]"},
			{"customer of another company", with(ok, "x-gdt-customer", fmt.Sprint(otherCustomer)), []part{pdf}, "Der Kunde gehört nicht zu diesem Account."},
			{"customer before file", with(ok, "x-gdt-customer", fmt.Sprint(otherCustomer)), nil, "Der Kunde gehört nicht zu diesem Account."},
			{"no part", ok, nil, "Keine Datei gefunden."},
			{"only a form field", ok, []part{{field: "comment", content: []byte("x")}}, "Keine Datei gefunden."},
			{"empty file", ok, []part{filePart("empty.pdf", nil)}, "Keine Datei gefunden."},
			{"only unsupported formats", ok, []part{filePart("x.exe", executable())}, "Keine Datei gefunden."},
			{"too large", ok, []part{filePart("big.pdf", pdfOfSize(15*mib+1))}, "Die Datei ist zu groß. (Maximal 15 MB sind erlaubt)"},
			{"too large even unsupported", ok, []part{filePart("big.exe", append(executable(), make([]byte, 15*mib)...))}, "Die Datei ist zu groß. (Maximal 15 MB sind erlaubt)"},
			{"too large before storage", gdtHeaders(tiny, tinyCustomer), []part{pdf, filePart("big.pdf", pdfOfSize(15*mib+1))}, "Die Datei ist zu groß. (Maximal 15 MB sind erlaubt)"},
			{"no room", gdtHeaders(tiny, tinyCustomer), []part{pdf}, "Unzureichender freier Speicherplatz."},
			{"too many files", ok, many, "Zu viele Dateien. (Maximal 20 Dateien sind erlaubt)"},
		} {
			r := s.upload(t, "/api/gdt/upload", tc.headers, tc.parts...)
			if r.status != 400 || r.Status != "error" || r.Message != tc.want {
				t.Errorf("%s: %d %q %q, want 400 error %q", tc.name, r.status, r.Status, r.Message, tc.want)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("%s: Content-Type %q", tc.name, ct)
			}
		}
		for _, co := range []company{c, other, tiny} {
			if st := s.storageOf(t, co.ID); st != (storage{}) {
				t.Errorf("refused requests left %+v for company %s", st, co.ID)
			}
		}
	})
}

func TestUploadSizeLimitIsExact(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, 100*mib)
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("limit.pdf", pdfOfSize(15*mib))); r.status != 200 || r.Files[0].Size != 15*mib {
			t.Fatalf("exactly 15 MiB: %d %q", r.status, r.Message)
		}
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("over.pdf", pdfOfSize(15*mib+1))); r.status != 400 {
			t.Fatalf("15 MiB + 1: %d", r.status)
		}
		if st := s.storageOf(t, c.ID); st.files != 1 || st.used != 15*mib || st.objects != 1 {
			t.Errorf("storage %+v, want the one 15 MiB file", st)
		}
	})
}

// A request is all or nothing: a late failure removes what its earlier parts wrote.
func TestFailedMultiFileUploadLeavesNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, 3*mib)
		small := filePart("a.pdf", pdfOfSize(mib))
		for name, parts := range map[string][]part{
			"last file too large":  {small, small, filePart("big.pdf", pdfOfSize(15*mib+1))},
			"together over quota":  {small, small, small, small},
			"twenty-first file":    append([]part{small, small}, repeatPart(filePart("t.txt", []byte("x")), 19)...),
			"over quota, then big": {small, small, small, small, filePart("big.pdf", pdfOfSize(15*mib+1))},
		} {
			if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), parts...); r.status != 400 {
				t.Errorf("%s: %d", name, r.status)
			}
			if st := s.storageOf(t, c.ID); st != (storage{}) {
				t.Errorf("%s left %+v", name, st)
			}
		}
		// The quota is untouched: three files of 1 MiB still fit exactly.
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), small, small, small); r.status != 200 {
			t.Errorf("3 MiB into a fresh 3 MiB quota: %d %q", r.status, r.Message)
		}
	})
}

func repeatPart(p part, n int) []part {
	out := make([]part, n)
	for i := range out {
		out[i] = p
	}
	return out
}

func TestConcurrentUploadsNeverPassTheQuota(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		const size = 100_000
		c := s.newCompany(t, 3*size+size/2) // room for 3, not 4
		customer := s.newCustomer(t, c)
		var wg sync.WaitGroup
		results := make(chan uploadReply, 12)
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart(fmt.Sprintf("%d.pdf", i), pdfOfSize(size)))
			}()
		}
		wg.Wait()
		close(results)
		stored, refused := 0, 0
		for r := range results {
			switch {
			case r.status == 200:
				stored++
			case r.Message == "Unzureichender freier Speicherplatz.":
				refused++
			default:
				t.Errorf("unexpected reply %d %q", r.status, r.Message)
			}
		}
		st := s.storageOf(t, c.ID)
		if stored != 3 || refused != 9 || st.files != 3 || st.used != 3*size || st.objects != 3 {
			t.Errorf("12 racing uploads for room of 3: %d stored, %d refused, storage %+v", stored, refused, st)
		}
	})
}

func TestRotatedUploadSecret(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, mib)
		var rotated company
		s.praxis(t, &rotated, "admin", "company", "rotate-upload-secret", "--company", c.ID, "--json")
		if rotated.ID != c.ID || rotated.Secret == "" || rotated.Secret == c.Secret {
			t.Fatalf("rotate output %+v", rotated)
		}
		pdf := filePart("a.pdf", pdfOfSize(10))
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), pdf); r.Message != "Secret not valid." {
			t.Errorf("old secret: %d %q", r.status, r.Message)
		}
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(rotated, customer), pdf); r.status != 200 {
			t.Errorf("new secret: %d %q", r.status, r.Message)
		}
		if strings.Contains(s.log.String(), rotated.Secret) || strings.Contains(s.log.String(), c.Secret) {
			t.Error("a secret reached the server log")
		}
	})
}
