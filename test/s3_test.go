// Holds docs/contract.md §5 Operations: files on S3, three replicas.

package test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/praxis-health/praxis/test/testenv"
)

// TestFilesOnS3: the scaled deployment's blob store is S3. Against a real
// S3-compatible server (Versity Gateway) with PostgreSQL and Redis: a
// device's upload, its download whole and by Range through the API, another
// company's 404, and the orphan sweep, which reads the bucket.
func TestFilesOnS3(t *testing.T) {
	t.Parallel()
	srv := testenv.StartS3(t)
	pg := backends[1]
	s := startServer(t, pg, "PRAXIS_BLOB_URL="+srv.Bucket(t, "praxis-files"),
		"AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.Secret)
	p := newPractice(t, s)
	other := newPractice(t, s)
	pdf := pdfOfSize(200_000)
	for i := range pdf[10:] {
		pdf[10+i] = byte(i % 253)
	}
	up := s.upload(t, "/api/gdt/upload", gdtHeaders(p.company, p.customer), filePart("befund.pdf", pdf))
	if up.status != http.StatusOK {
		t.Fatalf("upload to S3: %d %s", up.status, up.Message)
	}
	id := up.Files[0].ID
	download := func(auth string, headers ...string) reply {
		return s.request(t, http.MethodGet, resource+"files/"+id+"/download", "", "", append([]string{auth}, headers...)...)
	}
	if r := download(p.auth); r.status != http.StatusOK || !bytes.Equal(r.body, pdf) {
		t.Fatalf("download from S3: %d, %d bytes", r.status, len(r.body))
	}
	if r := download(p.auth, "Range: bytes=1000-1999"); r.status != http.StatusPartialContent || !bytes.Equal(r.body, pdf[1000:2000]) ||
		r.header.Get("Content-Range") != fmt.Sprintf("bytes 1000-1999/%d", len(pdf)) {
		t.Errorf("a range from S3: %d, %d bytes, %q", r.status, len(r.body), r.header.Get("Content-Range"))
	}
	if r := download(other.auth); r.status != http.StatusNotFound {
		t.Errorf("another company's download: %d, want 404", r.status)
	}
	var sweep struct {
		Checked int `json:"objects_checked"`
		Deleted int `json:"orphans_deleted"`
	}
	s.praxis(t, &sweep, "admin", "blobs", "sweep", "--older-than", "15m", "--json")
	if sweep.Checked < 1 || sweep.Deleted != 0 {
		t.Errorf("sweep of the bucket: %+v, want the object checked and kept", sweep)
	}
}

// TestThreeReplicasOneTruth: three replicas on one PostgreSQL, Redis and
// S3 bucket, driven in turn. A token from one works on the others; a
// device's upload through one is listed and downloaded through the others;
// an Idempotency-Key replays across replicas, and twins sent to two
// replicas at once create once.
func TestThreeReplicasOneTruth(t *testing.T) {
	t.Parallel()
	srv := testenv.StartS3(t)
	first := startServer(t, backends[1], "PRAXIS_BLOB_URL="+srv.Bucket(t, "praxis-replicas"),
		"AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.Secret)
	replicas := []*server{first, first.replica(t), first.replica(t)}
	p := newPractice(t, first)
	on := func(i int) practice { q := p; q.s = replicas[i%3]; return q }
	for i := range replicas {
		if r := on(i).get(t, "company"); r.status != http.StatusOK {
			t.Fatalf("replica %d with the first's token: %d", i, r.status)
		}
	}

	pdf := pdfOfSize(50_000)
	up := replicas[1].upload(t, "/api/gdt/upload", gdtHeaders(p.company, p.customer), filePart("befund.pdf", pdf))
	if up.status != http.StatusOK {
		t.Fatalf("upload through replica 1: %d %s", up.status, up.Message)
	}
	id := up.Files[0].ID
	on(2).listed(t, fmt.Sprintf("files?customer_id=%d", p.customer), id)
	if r := first.request(t, http.MethodGet, resource+"files/"+id+"/download", "", "", p.auth); r.status != http.StatusOK || !bytes.Equal(r.body, pdf) {
		t.Errorf("download through replica 0: %d, %d bytes", r.status, len(r.body))
	}

	post := func(i int, key string) reply {
		body, contentType := multipartBody(t, fieldPart("customer_id", fmt.Sprint(p.customer)), filePart("labor.pdf", pdfOfSize(4000)))
		return replicas[i].request(t, http.MethodPost, resource+"files", contentType, string(body), p.auth, "Idempotency-Key: "+key)
	}
	created := post(0, "replicas-1")
	again := post(1, "replicas-1")
	if created.status != http.StatusCreated || again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" ||
		string(again.body) != string(created.body) {
		t.Errorf("a retry on another replica: %d %s, want the first answer replayed", again.status, again.header.Get("Idempotent-Replayed"))
	}
	twins := make(chan reply, 2)
	for _, i := range []int{1, 2} {
		go func() { twins <- post(i, "replicas-2") }()
	}
	answers := map[string]bool{}
	for range 2 {
		r := <-twins
		if r.status != http.StatusCreated {
			t.Errorf("a twin: %d %s", r.status, r.body)
			continue
		}
		answers[fmt.Sprint(r.decode(t)["data"])] = true
	}
	if len(answers) != 1 {
		t.Errorf("twins on two replicas made %d different files", len(answers))
	}
}
