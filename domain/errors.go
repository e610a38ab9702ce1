// Package domain holds praxis's types and rules. It imports nothing of ours but itself.
package domain

import (
	"errors"
	"fmt"
)

// Sentinel errors. Adapters translate their drivers' errors into these once;
// the HTTP layer maps them to status codes in one place.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrInvalid  = errors.New("invalid")
	// ErrMalformedJSON: a body that does not parse as JSON at all (400);
	// JSON that parses but breaks a rule is ErrInvalid (422).
	ErrMalformedJSON = errors.New("the body is not well-formed JSON")
	// ErrCompanyDisabled: the company has been disabled and takes no new clients.
	ErrCompanyDisabled = fmt.Errorf("company is disabled: %w", ErrConflict)
	// ErrWebhooksDisabled: the installation has no key to seal webhook
	// secrets with (PRAXIS_WEBHOOK_KEY). A setting the operator left out,
	// not an outage: retrying does not help (409, no Retry-After).
	ErrWebhooksDisabled = fmt.Errorf("webhooks are not enabled on this installation: %w", ErrConflict)
	// ErrOrderClosed: a device order that is done, cancelled or failed
	// does not change so (cancelling a done order; assigning to a cancelled one).
	ErrOrderClosed = fmt.Errorf("the device order is closed: %w", ErrConflict)
	// ErrNotADevice: the bridge's calls need a device's own credential.
	ErrNotADevice = errors.New("the token is not a device's credential")
)

// ErrNotPraxisDatabase: a database named as a restore's source holds no
// praxis schema (docs/contract.md §6).
var ErrNotPraxisDatabase = errors.New("the database holds no praxis schema")

// ErrSchemaDiffers: a restore's source was migrated to another schema than
// this build's; it is migrated to production's first.
var ErrSchemaDiffers = errors.New("the database's schema is not this build's")

// ValidationError is a rejected value of one named field.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// Unwrap lets callers match every validation failure with errors.Is(err, ErrInvalid).
func (e *ValidationError) Unwrap() error { return ErrInvalid }

func invalid(field, message string) error { return &ValidationError{Field: field, Message: message} }

// ErrOtherCompany: the object exists but belongs to another company. Only the
// upload check that the spec requires tells this apart from ErrNotFound.
var ErrOtherCompany = errors.New("belongs to another company")

// ErrForbidden: the grant does not hold the scope the request needs (a
// settings viewer's change, a client's call past its scopes). The API's
// bearer guard refuses such a call first, in RFC 6750's words; the use
// cases check again, so that every door is held to the same scopes.
var ErrForbidden = errors.New("the grant does not hold the scope this needs")

// ErrIdempotencyKeyReused: an Idempotency-Key came back with another request than its first.
var ErrIdempotencyKeyReused = errors.New("the Idempotency-Key was used for another request")

// ErrUnavailable: a dependency (the database, the token store, the blob
// store) did not answer in time or at all. Nothing was written; the client
// should try again later (503 with Retry-After), unlike a bug (500).
var ErrUnavailable = errors.New("a dependency is unavailable")

// ErrSearchIndexing: a patient search of a company whose customers are not
// all indexed yet (the backfill after an upgrade is still running): rather
// than answer short, the search is refused for now (503 with Retry-After).
var ErrSearchIndexing = fmt.Errorf("the patient search index is still being built: %w", ErrUnavailable)

// ErrStorageFull: the blob store has no room left (the disk, not the
// company's quota). Nothing was kept; 507, try again later.
var ErrStorageFull = errors.New("the blob store is full")

// RetryAfterUnavailable is what a client is told to wait after ErrUnavailable or ErrStorageFull.
const RetryAfterUnavailable = 5

// Messages of the upload endpoints for failures that are not the request's fault.
const (
	MessageUnavailable = "Der Dienst ist vorübergehend nicht erreichbar. Bitte später erneut versuchen."
	MessageStorageFull = "Der Speicher ist vorübergehend voll. Bitte später erneut versuchen."
)

// Unavailable marks err as a dependency failure, keeping its text for the log.
func Unavailable(err error) error { return fmt.Errorf("%w: %w", ErrUnavailable, err) }
