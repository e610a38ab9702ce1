package test

import (
	"fmt"
	"net/http"
	"strings"
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
		if tests, _ := gdt["tests"].([]any); len(tests) != 1 || fmt.Sprint(tests[0]) != "map[id:GLU name:Glucose unit:mg/dL value:98]" {
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
