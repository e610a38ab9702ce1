package blobstore_test

import (
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/ports/porttest"
)

// TestBlobStoreS3 runs the contract against the s3:// driver, speaking the S3
// protocol to an in-process S3 implementation on loopback: this checks our
// writer options (part size, abort by cancellation) against the real SDK path.
func TestBlobStoreS3(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "praxis-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "praxis-test")
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	var n atomic.Int32
	porttest.RunBlobSuite(t, func(t *testing.T) ports.BlobStore {
		bucket := fmt.Sprintf("praxis-%d", n.Add(1))
		if err := backend.CreateBucket(bucket); err != nil {
			t.Fatal(err)
		}
		return open(t, "s3://"+bucket+"?endpoint="+srv.URL+"&region=eu-central-1&use_path_style=true")
	})
}
