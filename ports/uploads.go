package ports

import (
	"context"
	"io"

	"github.com/praxis-health/praxis/domain"
)

// Uploader is the driving port of the GDT/SonoGdt upload endpoints.
type Uploader interface {
	// Authorize runs the header checks (company, secret, customer) before any
	// byte of the body is read. Refusals are *domain.UploadRefusal.
	Authorize(ctx context.Context, cred UploadCredentials) (UploadTarget, error)
	// Store keeps every accepted part, or none of them.
	Store(ctx context.Context, target UploadTarget, source domain.Source, parts PartSource) (UploadResult, error)
}

// Header is one upload header as received: the value, and whether the request
// carried it with different values (e.g. under both prefixes), which fails its check.
type Header struct {
	Value     string
	Ambiguous bool
}

// UploadCredentials are the three headers of a GDT/SonoGdt upload.
type UploadCredentials struct {
	Company, Customer, Secret Header
	// Grant is the bearer token's, when the request carried one: a
	// device's own credential stands for the secret (docs/contract.md §14).
	// A zero Grant is a token that is not live.
	Grant *domain.Grant
	// Source is the device's network address, which wrong secrets are counted against.
	Source string
}

// UploadTarget is where an authorised upload goes, and how its files are filed.
type UploadTarget struct {
	Company  domain.Company
	Customer domain.CustomerID
	// Category and Description come from POST files; the device endpoints file under "other".
	Category    string
	Description *string
	// IdempotencyKey, when set, makes a retry within 24 h answer the first
	// request's result and store nothing again; the same key with another
	// request (another customer, form field, part name or byte) is refused
	// with domain.ErrIdempotencyKeyReused, and nothing is stored.
	IdempotencyKey string
	// KeyScope is whose keys these are: the OAuth client for POST files;
	// empty for the device endpoints, whose keys are the company's.
	KeyScope domain.ClientID
	// Device is the device whose own credential uploads (docs/contract.md
	// §14); empty for the company's upload secret and POST files.
	Device string
}

// Part is one `file` part of the request body.
type Part struct {
	FileName string
	Body     io.Reader
}

// PartSource yields the `file` parts of a request in order; io.EOF after the
// last. Any other error means the body was malformed or the client went away.
type PartSource interface {
	Next() (Part, error)
}

// SkippedFile is a part that was not stored because its format is not accepted.
type SkippedFile struct {
	Name        string
	ContentType string
}

// UploadResult lists what one request stored and what it skipped.
type UploadResult struct {
	Files   []domain.File
	Skipped []SkippedFile
	// Replayed is true when an Idempotency-Key answered with an earlier request's result.
	Replayed bool
}
