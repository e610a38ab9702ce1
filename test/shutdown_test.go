// Holds docs/contract.md §5 Operations: SIGTERM.

package test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
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

// SIGTERM turns /readyz to 503 at once, keeps serving for
// PRAXIS_SHUTDOWN_DELAY, stops accepting, lets the upload in flight finish
// and be kept; then the process exits 0.
func TestSIGTERMLetsInFlightUploadFinish(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0], "PRAXIS_SHUTDOWN_DELAY=1s", "PRAXIS_SHUTDOWN_GRACE=20s")
	c := s.newCompany(t, 100*mib)
	customer := s.newCustomer(t, c)
	body, contentType := multipartBody(t, filePart("gross.pdf", pdfOfSize(15*mib)))
	slow := &slowReader{r: bytes.NewReader(body), started: make(chan struct{})}

	type result struct {
		status int
		body   string
		err    error
	}
	replies := make(chan result, 1)
	req, err := s.newPost("/api/gdt/upload", contentType, gdtHeaders(c, customer), slow)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			replies <- result{err: err}
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		replies <- result{status: resp.StatusCode, body: string(raw)}
	}()
	<-slow.started
	time.Sleep(150 * time.Millisecond)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if r := s.request(t, "GET", "/readyz", "", ""); r.status != 503 || r.decode(t)["status"] != "shutting_down" {
		t.Errorf("/readyz during shutdown: %d %s, want 503 shutting_down", r.status, r.body)
	}
	if r := s.request(t, "GET", "/livez", "", ""); r.status != 200 {
		t.Errorf("/livez during shutdown: %d", r.status)
	}
	r := <-replies
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, fmt.Sprintf(`"size":%d`, 15*mib)) {
		t.Fatalf("in-flight upload: %d %s %v", r.status, r.body, r.err)
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

// A request that outlasts PRAXIS_SHUTDOWN_GRACE does not hold the process:
// it exits once the grace period is over.
func TestShutdownGraceBoundsTheExit(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0], "PRAXIS_SHUTDOWN_GRACE=1s")
	c := s.newCompany(t, 100*mib)
	customer := s.newCustomer(t, c)
	body, contentType := multipartBody(t, filePart("gross.pdf", pdfOfSize(15*mib)))
	stalled := &stallingReader{r: bytes.NewReader(body[:mib]), started: make(chan struct{})}
	req, err := s.newPost("/api/gdt/upload", contentType, gdtHeaders(c, customer), stalled)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-stalled.started
	time.Sleep(200 * time.Millisecond)
	began := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
		if took := time.Since(began); took > 5*time.Second {
			t.Errorf("exit took %v with a 1s grace period", took)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a stalled upload held the process past its grace period")
	}
	s.exited <- nil
	close(stalled.release)
	if st := s.storageOf(t, c.ID); st.files != 0 || st.used != 0 {
		t.Errorf("the cut-off upload left %+v", st)
	}
}

// stallingReader sends its bytes, then blocks until released.
type stallingReader struct {
	r       io.Reader
	started chan struct{}
	release chan struct{}
	once    bool
}

func (s *stallingReader) Read(p []byte) (int, error) {
	if !s.once {
		s.once = true
		s.release = make(chan struct{})
		close(s.started)
	}
	n, err := s.r.Read(p)
	if errors.Is(err, io.EOF) {
		<-s.release
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// A connection that never sent a request (a browser's preconnect, a spare
// one a client pool dialled) does not hold the shutdown for the grace
// period: the server exits 0 at once, and a kept-alive connection that did
// serve a request does not hold it either.
func TestShutdownClosesConnectionsThatSentNothing(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0]) // the default grace: 30 s
	silent, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	kept := &http.Client{Transport: &http.Transport{}}
	resp, err := kept.Get(s.url + "/livez")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	time.Sleep(200 * time.Millisecond) // both accepted and waiting
	began := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Errorf("exit: %v, want 0\n%s", err, s.log.String())
		}
		if took := time.Since(began); took > 10*time.Second {
			t.Errorf("exit took %v: the silent connection was waited for", took)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("a connection that sent nothing held the process until its grace period")
	}
	s.exited <- nil
	if n, err := silent.Read(make([]byte, 1)); err == nil {
		t.Errorf("the silent connection is still open (read %d bytes)", n)
	}
}
