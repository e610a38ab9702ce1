// Holds docs/contract.md §4 The resource API: files.

package test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func fieldPart(name, value string) part { return part{field: name, content: []byte(value)} }

// postFiles sends POST files with the given parts.
func (p practice) postFiles(t *testing.T, parts ...part) reply {
	t.Helper()
	body, contentType := multipartBody(t, parts...)
	return p.s.request(t, http.MethodPost, resource+"files", contentType, string(body), p.auth)
}

// TestFilesSection: list, metadata, download with and without Range, POST files and its refusals, another company.
func TestFilesSection(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		other := newPractice(t, s)
		customer := fmt.Sprint(p.customer)

		// A device's upload appears in the Files section for its customer.
		device := s.upload(t, "/api/gdt/upload", gdtHeaders(p.company, customer), filePart("befund.pdf", pdfOfSize(3000)))
		if device.status != http.StatusOK {
			t.Fatalf("device upload: %d %s", device.status, device.Message)
		}
		p.listed(t, "files?customer_id="+customer, device.Files[0].ID)

		pdf := pdfOfSize(100_000)
		for i := range pdf[10:] {
			pdf[10+i] = byte(i % 251) // every byte position distinct enough to catch an off-by-one
		}
		created := p.postFiles(t, fieldPart("customer_id", customer), fieldPart("category", "lab"), fieldPart("description", "Blutbild März"),
			filePart("labor.pdf", pdf), filePart("bild.png", pngImage(t)), filePart("tool.exe", executable()))
		if created.status != http.StatusCreated {
			t.Fatalf("POST files: %d %s", created.status, created.body)
		}
		got := created.decode(t)
		data, skipped := got["data"].([]any), got["skipped"].([]any)
		if len(data) != 2 || len(skipped) != 1 {
			t.Fatalf("stored %d, skipped %d: %s", len(data), len(skipped), created.body)
		}
		file := data[0].(map[string]any)
		id := file["id"].(string)
		sum := sha256.Sum256(pdf)
		if file["category"] != "lab" || file["description"] != "Blutbild März" || file["source"] != "api" || file["sha256"] != hex.EncodeToString(sum[:]) {
			t.Errorf("stored file: %v", file)
		}
		if r := p.get(t, "files/"+id); r.status != http.StatusOK || r.decode(t)["name"] != "labor.pdf" {
			t.Errorf("metadata: %d %s", r.status, r.body)
		}

		download := func(rangeHeader string) reply {
			headers := []string{p.auth}
			if rangeHeader != "" {
				headers = append(headers, "Range: "+rangeHeader)
			}
			return s.request(t, http.MethodGet, resource+"files/"+id+"/download", "", "", headers...)
		}
		whole := download("")
		if whole.status != http.StatusOK || !bytes.Equal(whole.body, pdf) {
			t.Fatalf("download: %d, %d bytes", whole.status, len(whole.body))
		}
		for header, want := range map[string]string{
			"Content-Type": "application/pdf", "X-Content-Type-Options": "nosniff", "ETag": `"` + hex.EncodeToString(sum[:]) + `"`,
			"Content-Disposition": `attachment; filename=labor.pdf`, "Accept-Ranges": "bytes",
		} {
			if got := whole.header.Get(header); got != want {
				t.Errorf("%s: %q, want %q", header, got, want)
			}
		}
		n := len(pdf)
		for spec, want := range map[string][2]int{
			"bytes=0-99": {0, 99}, "bytes=40000-40999": {40000, 40999}, "bytes=-500": {n - 500, n - 1},
			"bytes=99000-": {99000, n - 1}, "bytes=99990-200000": {99990, n - 1},
		} {
			r := download(spec)
			if r.status != http.StatusPartialContent || !bytes.Equal(r.body, pdf[want[0]:want[1]+1]) ||
				r.header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", want[0], want[1], n) {
				t.Errorf("%s: %d, %d bytes, %q", spec, r.status, len(r.body), r.header.Get("Content-Range"))
			}
		}
		if r := download(fmt.Sprintf("bytes=%d-", n)); r.status != http.StatusRequestedRangeNotSatisfiable || r.header.Get("Content-Range") != fmt.Sprintf("bytes */%d", n) {
			t.Errorf("unsatisfiable range: %d %q", r.status, r.header.Get("Content-Range"))
		}
		if r := download("bytes=0-1,5-6"); r.status != http.StatusOK || len(r.body) != n {
			t.Errorf("several ranges are answered whole: %d %d", r.status, len(r.body))
		}

		// Another company sees neither metadata nor bytes.
		if r := other.get(t, "files/"+id); r.status != http.StatusNotFound {
			t.Errorf("another company's metadata: %d", r.status)
		}
		if r := s.request(t, http.MethodGet, resource+"files/"+id+"/download", "", "", other.auth); r.status != http.StatusNotFound {
			t.Errorf("another company's download: %d", r.status)
		}

		// Refusals, each in problem+json, leave storage and the files list as they were.
		before := s.storageOf(t, p.company.ID)
		// On PostgreSQL the feed lists a write once no older transaction of
		// the cluster (another test's too) is open: count once it lists them all.
		listed := func() int { return len(p.get(t, "files?limit=500").decode(t)["data"].([]any)) }
		eventually(t, 10*time.Second, "the feed lists every file", func() bool { return listed() == int(before.files) })
		count := listed()
		huge := pdfOfSize(15<<20 + 1)
		tooMany := []part{fieldPart("customer_id", customer)}
		for range 21 {
			tooMany = append(tooMany, filePart("x.pdf", pdfOfSize(10)))
		}
		for name, tc := range map[string]struct {
			parts  []part
			status int
			field  string
		}{
			"a file over 15 MiB":       {[]part{fieldPart("customer_id", customer), filePart("a.pdf", pdf), filePart("big.pdf", huge)}, 413, ""},
			"no file":                  {[]part{fieldPart("customer_id", customer)}, 422, "file"},
			"only skipped formats":     {[]part{fieldPart("customer_id", customer), filePart("t.exe", executable())}, 422, "file"},
			"21 files":                 {tooMany, 422, "file"},
			"no customer":              {[]part{filePart("a.pdf", pdf)}, 422, "customer_id"},
			"another company's":        {[]part{fieldPart("customer_id", fmt.Sprint(other.customer)), filePart("a.pdf", pdf)}, 422, "customer_id"},
			"an unknown category":      {[]part{fieldPart("customer_id", customer), fieldPart("category", "x"), filePart("a.pdf", pdf)}, 422, "category"},
			"an unknown form field":    {[]part{fieldPart("customer_id", customer), fieldPart("patient", "x"), filePart("a.pdf", pdf)}, 422, "patient"},
			"a multi-line description": {[]part{fieldPart("customer_id", customer), fieldPart("description", "a\nb"), filePart("a.pdf", pdf)}, 422, "description"},
		} {
			r := p.postFiles(t, tc.parts...)
			if r.status != tc.status || r.header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s: %d %s", name, r.status, r.body)
				continue
			}
			if tc.field != "" && !contains(fieldsOf(t, r), tc.field) {
				t.Errorf("%s: errors %s", name, r.body)
			}
		}
		small := s.newCompany(t, 50_000)
		sp := practice{s: s, company: small, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, small, ""))}
		sc := sp.post(t, "customers", `{"first_name":"A","last_name":"B","birth_date":"1990-01-01"}`).decode(t)["id"]
		if r := sp.postFiles(t, fieldPart("customer_id", fmt.Sprint(sc)), filePart("a.pdf", pdf)); r.status != http.StatusInsufficientStorage ||
			!strings.Contains(string(r.body), "insufficient-storage") {
			t.Errorf("over the quota: %d %s", r.status, r.body)
		}
		if after := s.storageOf(t, p.company.ID); after != before {
			t.Errorf("refusals changed the storage: %+v → %+v", before, after)
		}
		if got := len(p.get(t, "files?limit=500").decode(t)["data"].([]any)); got != count {
			t.Errorf("refusals changed the files list: %d → %d", count, got)
		}
	})
}

// TestFilesIdempotencyKey: POST files with an Idempotency-Key behaves like
// every other POST: a retry answers the first result and stores nothing,
// twins create once, and the key with another request is a 422 that stores
// nothing; another client's same key is its own.
func TestFilesIdempotencyKey(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		customer := fmt.Sprint(p.customer)
		post := func(key string, parts ...part) reply {
			t.Helper()
			body, contentType := multipartBody(t, parts...)
			return s.request(t, http.MethodPost, resource+"files", contentType, string(body), p.auth, "Idempotency-Key: "+key)
		}
		parts := []part{fieldPart("customer_id", customer), fieldPart("category", "lab"), filePart("labor.pdf", pdfOfSize(4000))}
		first := post("k-1", parts...)
		if first.status != http.StatusCreated || first.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %s", first.status, first.body)
		}
		before := s.storageOf(t, p.company.ID)
		again := post("k-1", parts...)
		if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
			t.Errorf("the retry: %d %s, want the first answer %s", again.status, again.body, first.body)
		}
		for name, other := range map[string][]part{
			"another category": {fieldPart("customer_id", customer), fieldPart("category", "report"), filePart("labor.pdf", pdfOfSize(4000))},
			"other bytes":      {fieldPart("customer_id", customer), fieldPart("category", "lab"), filePart("labor.pdf", pdfOfSize(4001))},
			"a description":    append([]part{fieldPart("description", "x")}, parts...),
		} {
			r := post("k-1", other...)
			if r.status != http.StatusUnprocessableEntity || r.decode(t)["type"] != "idempotency-key-reused" {
				t.Errorf("%s with a used key: %d %s", name, r.status, r.body)
			}
		}
		if after := s.storageOf(t, p.company.ID); after != before {
			t.Errorf("retries and reused keys stored %+v (before %+v)", after, before)
		}
		twins := make(chan reply, 4)
		for range 4 {
			go func() { twins <- post("k-2", fieldPart("customer_id", customer), filePart("b.pdf", pdfOfSize(3000))) }()
		}
		ids := map[string]bool{}
		for range 4 {
			r := <-twins
			if r.status != http.StatusCreated {
				t.Errorf("a twin: %d %s", r.status, r.body)
				continue
			}
			ids[fmt.Sprint(r.decode(t)["data"])] = true
		}
		if after := s.storageOf(t, p.company.ID); len(ids) != 1 || after.files != before.files+1 {
			t.Errorf("four twins: %d answers, %+v stored (before %+v)", len(ids), after, before)
		}
		// Another client of the same company has keys of its own.
		q := practice{s: s, company: p.company, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, "files:write"))}
		body, contentType := multipartBody(t, parts...)
		if r := s.request(t, http.MethodPost, resource+"files", contentType, string(body), q.auth, "Idempotency-Key: k-1"); r.status != http.StatusCreated ||
			r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("another client's same key: %d %s", r.status, r.body)
		}
	})
}
