package blobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/adapters/blobstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/ports/porttest"
)

func open(t *testing.T, url string) *blobstore.Store {
	t.Helper()
	s, err := blobstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestBlobStoreFile(t *testing.T) {
	t.Parallel()
	porttest.RunBlobSuite(t, func(t *testing.T) ports.BlobStore {
		return open(t, "file://"+t.TempDir()+"?create_dir=true&no_tmp_dir=true&metadata=skip")
	})
}

func TestBlobStoreMem(t *testing.T) {
	t.Parallel()
	porttest.RunBlobSuite(t, func(t *testing.T) ports.BlobStore { return open(t, "mem://") })
}

// TestFileAbortLeavesNoTempFile: an aborted upload must not leave its spool file on disk.
func TestFileAbortLeavesNoTempFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, "file://"+dir+"?create_dir=true&no_tmp_dir=true&metadata=skip")
	company := domain.NewCompanyID()
	w, err := s.NewWriter(context.Background(), company, "x", "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(strings.Repeat("x", 1<<20))); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	entries, _ := os.ReadDir(filepath.Join(dir, company.String()))
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

func TestHealthCheck(t *testing.T) {
	t.Parallel()
	s := open(t, "mem://")
	if err := (blobstore.HealthCheck{Store: s}).Check(context.Background()); err != nil {
		t.Errorf("mem bucket: %v", err)
	}
}
