package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// S3 is a real S3-compatible server for one test: Versity Gateway with its
// POSIX backend in a temporary directory, on loopback.
type S3 struct {
	Endpoint          string // http://127.0.0.1:PORT
	AccessKey, Secret string
	Region            string
	root              string
}

// StartS3 starts Versity Gateway from PRAXIS_TEST_VERSITYGW, which `make
// test` sets from .ci/versitygw (built from the Go module proxy and cached).
// Without it the test skips loudly, or fails under CI=true. The server stops
// when the test ends.
func StartS3(t testing.TB) *S3 {
	t.Helper()
	bin := os.Getenv("PRAXIS_TEST_VERSITYGW")
	if bin == "" {
		SkipOrFail(t, "Versity Gateway (S3) missing: PRAXIS_TEST_VERSITYGW is not set: run make test, or PRAXIS_TEST_VERSITYGW=$(.ci/versitygw) go test")
	}
	if _, err := os.Stat(bin); err != nil {
		SkipOrFail(t, fmt.Sprintf("Versity Gateway (S3) missing: %v", err))
	}
	s := &S3{AccessKey: "praxis-test", Secret: "praxis-test-secret", Region: "eu-central-1", root: t.TempDir()}
	addr := FreeAddr(t)
	s.Endpoint = "http://" + addr
	out := &SyncBuffer{}
	cmd := exec.Command(bin, "--port", addr, "--access", s.AccessKey, "--secret", s.Secret, "--region", s.Region, "--quiet",
		"posix", s.root)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Versity Gateway: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint, nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			_ = resp.Body.Close()
			return s // any answer (403 without a signature) means it listens
		}
		select {
		case err := <-exited:
			t.Fatalf("Versity Gateway exited: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Versity Gateway not ready: %v\n%s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Bucket makes an empty bucket (with the POSIX backend: a directory under
// the root) and answers the blob URL praxis opens it with.
func (s *S3) Bucket(t testing.TB, name string) string {
	t.Helper()
	if err := os.Mkdir(filepath.Join(s.root, name), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
	return "s3://" + name + "?endpoint=" + s.Endpoint + "&region=" + s.Region + "&use_path_style=true"
}
