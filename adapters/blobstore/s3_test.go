package blobstore_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/ports/porttest"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestBlobStoreS3 runs the contract against the s3:// driver and a real
// S3-compatible server, Versity Gateway, on loopback: our writer options
// (part size, abort by cancellation) against the real SDK and server.
func TestBlobStoreS3(t *testing.T) {
	srv := testenv.StartS3(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.Secret)
	var n atomic.Int32
	porttest.RunBlobSuite(t, func(t *testing.T) ports.BlobStore {
		return open(t, srv.Bucket(t, fmt.Sprintf("praxis-%d", n.Add(1))))
	})
}

// TestS3AbortLeavesNoParts: a large upload aborted mid-way leaves no
// incomplete multipart upload behind, as the server itself lists them.
func TestS3AbortLeavesNoParts(t *testing.T) {
	srv := testenv.StartS3(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.Secret)
	store := open(t, srv.Bucket(t, "praxis-abort"))
	ctx := context.Background()
	company := domain.NewCompanyID()
	w, err := store.NewWriter(ctx, company, "aborted", "application/dicom")
	if err != nil {
		t.Fatal(err)
	}
	// 24 MiB: past the SDK's 16 MiB threshold, the upload goes in parts.
	if _, err := w.Write(bytes.Repeat([]byte("DICOM-Serie "), 2<<20)); err != nil {
		t.Fatal(err)
	}
	client := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.Secret, "")})
	uploads := func() int {
		out, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("praxis-abort")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}
	deadline := time.Now().Add(10 * time.Second)
	for uploads() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("no multipart upload in flight: the writer sent the object whole")
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.Abort()
	deadline = time.Now().Add(10 * time.Second)
	for uploads() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("an aborted upload left its parts on the server")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
