// Holds docs/contract.md §7 GDT content of uploads.

package test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func gdtRecord(fields ...[2]string) []byte {
	var b strings.Builder
	for _, f := range fields {
		fmt.Fprintf(&b, "%03d%s%s\r\n", len(f[1])+9, f[0], f[1])
	}
	return []byte(b.String())
}

// TestGDTResults: a result filed under its own patient (3000 with leading
// zeros) is stored with its examination metadata and linked to the images it
// names; one naming another patient refuses the whole request.
func TestGDTResults(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, 1<<20)
		other := s.newCustomer(t, c)
		result := func(patient string) []byte {
			return gdtRecord([2]string{"8000", "6310"}, [2]string{"9218", "02.10"}, [2]string{"8316", "SONO1"}, [2]string{"3000", patient},
				[2]string{"6200", "10032026"}, [2]string{"6201", "0915"}, [2]string{"8402", "SONO"}, [2]string{"6220", "Leber unauffällig"},
				[2]string{"8410", "GLU"}, [2]string{"8411", "Glucose"}, [2]string{"8420", "98"}, [2]string{"8421", "mg/dL"},
				[2]string{"6305", `C:\GDT\BILD1.JPG`}, [2]string{"6305", "bild2.png"})
		}
		r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("befund.gdt", result(fmt.Sprintf("000%d", customer))),
			filePart("bild1.jpg", jpegImage(t)), filePart("bild2.png", pngImage(t)))
		if r.status != 200 || len(r.Files) != 3 {
			t.Fatalf("a result of its own patient: %d %q %d files", r.status, r.Message, len(r.Files))
		}
		p := practice{s: s, company: c, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, c, "files:read"))}
		file := p.get(t, "files/"+r.Files[0].ID).decode(t)
		gdt, _ := file["gdt"].(map[string]any)
		if gdt == nil || gdt["record_type"] != "6310" || gdt["examined_at"] != "2026-03-10T09:15:00+01:00" || gdt["procedure_code"] != "SONO" ||
			gdt["findings"] != "Leber unauffällig" || fmt.Sprint(gdt["referenced_files"]) != "[BILD1.JPG bild2.png]" {
			t.Errorf("the GDT metadata: %v", file)
		}
		if tests, _ := gdt["tests"].([]any); len(tests) != 1 || fmt.Sprint(tests[0]) !=
			"map[comments:[] id:GLU limit_indicator:<nil> name:Glucose normal_high:<nil> normal_low:<nil> normal_text:[] result_text:[] status:<nil> unit:mg/dL value:98]" {
			t.Errorf("tests: %v", gdt["tests"])
		}
		if fmt.Sprint(file["related_file_ids"]) != fmt.Sprintf("[%s %s]", r.Files[1].ID, r.Files[2].ID) {
			t.Errorf("the result links %v, want its two images", file["related_file_ids"])
		}
		image := p.get(t, "files/"+r.Files[1].ID).decode(t)
		if image["gdt"] != nil || fmt.Sprint(image["related_file_ids"]) != "["+r.Files[0].ID+"]" {
			t.Errorf("the image: %v", image)
		}

		before := s.storageOf(t, c.ID)
		sent := fmt.Sprintf("00%d", other)
		refused := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("bild.jpg", jpegImage(t)), filePart("befund.gdt", result(sent)))
		want := "Die Patientennummer der GDT-Datei passt nicht zum Kunden: [" + sent + "]"
		if refused.status != http.StatusBadRequest || refused.Message != want {
			t.Errorf("a result of another patient: %d %q, want %q", refused.status, refused.Message, want)
		}
		if after := s.storageOf(t, c.ID); after != before {
			t.Errorf("the refused request left %+v (before %+v)", after, before)
		}
	})
}

// TestUploadRetriesWithIdempotencyKey: a device that retries after a lost 200
// gets the first answer; nothing is stored or charged twice, even when the
// twins arrive at once; another company's key is its own.
func TestUploadRetriesWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, 1<<20)
		withKey := func(key string) map[string]string {
			h := gdtHeaders(c, customer)
			h["Idempotency-Key"] = key
			return h
		}
		first := s.upload(t, "/api/gdt/upload", withKey("bundle-1"), filePart("befund.pdf", pdfOfSize(5000)), filePart("t.exe", executable()))
		if first.status != 200 || len(first.Files) != 1 || len(first.Skipped) != 1 {
			t.Fatalf("first: %d %+v", first.status, first)
		}
		before := s.storageOf(t, c.ID)
		again := s.upload(t, "/api/gdt/upload", withKey("bundle-1"), filePart("befund.pdf", pdfOfSize(5000)), filePart("t.exe", executable()))
		if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" || len(again.Files) != 1 || again.Files[0].ID != first.Files[0].ID ||
			len(again.Skipped) != 1 {
			t.Errorf("the retry: %d %+v", again.status, again)
		}
		if after := s.storageOf(t, c.ID); after != before {
			t.Errorf("the retry stored or charged again: %+v → %+v", before, after)
		}

		ids := make(chan string, 5)
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				r := s.upload(t, "/api/gdt/upload", withKey("bundle-2"), filePart("b.pdf", pdfOfSize(7000)))
				if r.status != 200 || len(r.Files) != 1 {
					t.Errorf("a twin: %d %+v", r.status, r)
					return
				}
				ids <- r.Files[0].ID
			})
		}
		wg.Wait()
		close(ids)
		var first2 string
		for id := range ids {
			if first2 == "" {
				first2 = id
			}
			if id != first2 {
				t.Errorf("twins answered different files: %s, %s", first2, id)
			}
		}
		if after := s.storageOf(t, c.ID); after.files != before.files+1 || after.used != before.used+7000 {
			t.Errorf("five twins stored %+v, want one file of 7000 bytes more than %+v", after, before)
		}
		// The same key with another request stores nothing and replays nothing:
		// another patient, other bytes, another file name, one part more.
		otherPatient := s.newCustomer(t, c)
		before = s.storageOf(t, c.ID)
		reused := "Der Idempotency-Key wurde bereits für eine andere Anfrage verwendet."
		for name, tc := range map[string]struct {
			headers map[string]string
			parts   []part
		}{
			"another patient": {gdtHeaders(c, otherPatient), []part{filePart("befund.pdf", pdfOfSize(5000)), filePart("t.exe", executable())}},
			"other bytes":     {withKey("bundle-1"), []part{filePart("befund.pdf", pdfOfSize(5001)), filePart("t.exe", executable())}},
			"another name":    {withKey("bundle-1"), []part{filePart("befund2.pdf", pdfOfSize(5000)), filePart("t.exe", executable())}},
			"one part more":   {withKey("bundle-1"), []part{filePart("befund.pdf", pdfOfSize(5000)), filePart("t.exe", executable()), filePart("b.pdf", pdfOfSize(10))}},
			"the other door":  {withKey("bundle-1"), nil},
		} {
			tc.headers["Idempotency-Key"] = "bundle-1"
			path := "/api/gdt/upload"
			if tc.parts == nil {
				path, tc.parts = "/api/sonogdt/upload", []part{filePart("befund.pdf", pdfOfSize(5000)), filePart("t.exe", executable())}
			}
			r := s.upload(t, path, tc.headers, tc.parts...)
			if r.status != http.StatusBadRequest || r.Message != reused || r.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("%s with a used key: %d %q", name, r.status, r.Message)
			}
		}
		if after := s.storageOf(t, c.ID); after != before {
			t.Errorf("reused keys stored %+v (before %+v)", after, before)
		}
		otherC := s.newCompany(t, 1<<20)
		h := gdtHeaders(otherC, s.newCustomer(t, otherC))
		h["Idempotency-Key"] = "bundle-1"
		if r := s.upload(t, "/api/gdt/upload", h, filePart("befund.pdf", pdfOfSize(5000))); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("another company's same key: %d replayed %q", r.status, r.header.Get("Idempotent-Replayed"))
		}
	})
}

// TestGDTOneFileOnePatient: a file whose later record names another patient
// is refused whole with the contract's answer, whatever its form (leading
// blank lines, a byte-order mark, LF or CR line ends, wrong lengths), and
// nothing of the request is kept.
func TestGDTOneFileOnePatient(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, customer := withPatient(t, b, 1<<20)
		other := s.newCustomer(t, c)
		ours, theirs := fmt.Sprint(customer), fmt.Sprintf("0%d", other)
		twoRecords := string(gdtRecord([2]string{"8000", "6310"}, [2]string{"3000", ours}, [2]string{"6220", "Befund 1"},
			[2]string{"8000", "6310"}, [2]string{"3000", theirs}, [2]string{"6220", "Befund 2"}))
		for name, raw := range map[string]string{
			"CR LF":               twoRecords,
			"leading blank lines": "\r\n\r\n" + twoRecords,
			"byte-order mark":     "\xef\xbb\xbf\n" + twoRecords,
			"LF only":             strings.ReplaceAll(twoRecords, "\r\n", "\n"),
			"CR only, no end":     strings.TrimSuffix(strings.ReplaceAll(twoRecords, "\r\n", "\r"), "\r"),
			"wrong lengths":       strings.ReplaceAll(twoRecords, "\r\n0", "\r\n9"),
		} {
			before := s.storageOf(t, c.ID)
			r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("bild.jpg", jpegImage(t)), filePart("befund.gdt", []byte(raw)))
			want := "Die Patientennummer der GDT-Datei passt nicht zum Kunden: [" + theirs + "]"
			if r.status != http.StatusBadRequest || r.Message != want {
				t.Errorf("%s: %d %q, want 400 %q", name, r.status, r.Message, want)
			}
			if after := s.storageOf(t, c.ID); after != before {
				t.Errorf("%s: the refused request left %+v (before %+v)", name, after, before)
			}
		}
		// Two records of the same patient are one result, stored with both records' findings.
		same := strings.ReplaceAll(twoRecords, theirs, "00"+ours)
		r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("befund.gdt", []byte("\r\n"+same)))
		if r.status != 200 || len(r.Files) != 1 || r.Files[0].ContentType != "application/gdt" {
			t.Fatalf("two records of one patient: %d %q %+v", r.status, r.Message, r.Files)
		}
	})
}
