package ports

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// BlobStore keeps file bytes. Every object belongs to one company: a name
// written for company A can never be read, or deleted, through company B.
type BlobStore interface {
	// NewWriter starts an object; nothing is visible until Commit.
	NewWriter(ctx context.Context, company domain.CompanyID, name, contentType string) (BlobWriter, error)
	// Open reads length bytes of an object from offset (length -1: to its
	// end); domain.ErrNotFound for a missing object. Nothing is read whole
	// into memory: downloads stream from it.
	Open(ctx context.Context, company domain.CompanyID, name string, offset, length int64) (io.ReadCloser, error)
	// Delete removes an object; a missing one is not an error.
	Delete(ctx context.Context, company domain.CompanyID, name string) error
	// Walk calls fn for every object of the company, unfinished writes included.
	Walk(ctx context.Context, company domain.CompanyID, fn func(BlobInfo) error) error
}

// BlobInfo describes one stored object.
type BlobInfo struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// BlobWriter streams one object.
type BlobWriter interface {
	io.Writer
	// Commit makes the object durable and visible.
	Commit() error
	// Abort discards everything written; the object never appears.
	Abort()
}

// Sniffer names the media type of content from its first bytes.
type Sniffer interface {
	Sniff(head []byte) string
}

// ErrLowDisk is a health check failing because the store's disk is (nearly) full.
var ErrLowDisk = errors.New("low disk")

// HealthCheck is one dependency that /readyz asks.
type HealthCheck interface {
	Name() string
	Check(ctx context.Context) error
}
