package ports

import (
	"context"
	"io"

	"github.com/praxis-health/praxis/domain"
)

// FileUpload is a POST files request's form fields.
type FileUpload struct {
	Customer    string
	Category    string
	Description string
	// Set tells which of the fields the request carried.
	HasCategory, HasDescription bool
	// IdempotencyKey is the request's Idempotency-Key header, if any.
	IdempotencyKey string
}

// Files is the driving port of the Files section: the token's company's files.
type Files interface {
	List(ctx context.Context, grant domain.Grant, q domain.ListQuery) (FilePage, error)
	// Batch answers the company's files among ids in the order asked, and the ids not found.
	Batch(ctx context.Context, grant domain.Grant, ids []string) ([]domain.File, []string, error)
	// Get answers a file of the company; domain.ErrNotFound for anything else.
	Get(ctx context.Context, grant domain.Grant, id string) (domain.File, error)
	// Open streams length bytes of a file of the company from offset (-1: to its end).
	Open(ctx context.Context, grant domain.Grant, f domain.File, offset, length int64) (io.ReadCloser, error)
	// Upload checks the form fields, then stores the parts by the upload rules.
	Upload(ctx context.Context, grant domain.Grant, form FileUpload, parts PartSource) (UploadResult, error)
}
