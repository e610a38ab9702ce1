package test

import (
	"bytes"
	"io"
	"syscall"
	"testing"
	"time"
)

// slowReader sends a body at about 25 MiB/s, so that a 15 MiB request is in flight for over half a second.
type slowReader struct {
	r       io.Reader
	started chan struct{}
	sent    int
}

func (s *slowReader) Read(p []byte) (int, error) {
	if s.sent == 0 {
		close(s.started)
	}
	n, err := s.r.Read(p)
	if s.sent/mib != (s.sent+n)/mib {
		time.Sleep(40 * time.Millisecond)
	}
	s.sent += n
	return n, err
}

// SIGTERM stops accepting but lets the upload in flight finish and be kept; then the process exits 0.
func TestSIGTERMLetsInFlightUploadFinish(t *testing.T) {
	t.Parallel()
	s, c, customer := withPatient(t, backends[0], 100*mib)
	body, contentType := multipartBody(t, filePart("gross.pdf", pdfOfSize(15*mib)))
	slow := &slowReader{r: bytes.NewReader(body), started: make(chan struct{})}

	replies := make(chan uploadReply, 1)
	go func() { replies <- s.post(t, "/api/gdt/upload", contentType, gdtHeaders(c, customer), slow) }()
	<-slow.started
	time.Sleep(150 * time.Millisecond)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := <-replies
	if r.status != 200 || len(r.Files) != 1 || r.Files[0].Size != 15*mib {
		t.Fatalf("in-flight upload: %d %q", r.status, r.Message)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, s.log.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not exit after SIGTERM")
	}
	s.exited <- nil // for the cleanup, which waits on it too
	if st := s.storageOf(t, c.ID); st.files != 1 || st.used != 15*mib || st.objects != 1 {
		t.Errorf("after shutdown: %+v, want the upload kept", st)
	}
}
