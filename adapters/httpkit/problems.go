// Package httpkit is what praxis's two HTTP doors share and neither owns:
// the API (adapters/httpapi) and the practice's settings pages
// (adapters/web) answer the same domain errors with the same statuses, read
// bodies with the same bound, send the same security headers, address
// their audit events alike. It may import the domain's packages and nothing
// else of ours, and no adapter; both doors may import it
// (docs/ARCHITECTURE.md, test/architecture_test.go).
package httpkit

import (
	"context"
	"errors"
	"net/http"

	"github.com/praxis-health/praxis/domain"
)

// Problem is how both doors answer one domain error: its status, and for
// the API its RFC 9457 problem type and detail (the pages show their own
// words for the status).
type Problem struct {
	Err    error
	Status int
	Type   string
	Detail string
}

// Problems is the one table from a domain error to its answer, first match
// wins: a more specific error before the one it wraps.
var Problems = []Problem{
	{domain.ErrSearchIndexing, http.StatusServiceUnavailable, "search-index-building",
		"the patient search index is still being built for this company (after an upgrade): try again shortly"},
	{domain.ErrUnavailable, http.StatusServiceUnavailable, "service-unavailable", "a dependency is unavailable: try again later"},
	// A deadline that passed in a wait nothing translated (docs/contract.md §5).
	{context.DeadlineExceeded, http.StatusServiceUnavailable, "service-unavailable", "a dependency is unavailable: try again later"},
	{domain.ErrStorageFull, http.StatusInsufficientStorage, "insufficient-storage", "the file store is full: try again later"},
	{domain.ErrIdempotencyKeyReused, http.StatusUnprocessableEntity, "idempotency-key-reused",
		"this Idempotency-Key was already used for a different request"},
	{domain.ErrMalformedJSON, http.StatusBadRequest, "malformed-json", "the body is not well-formed JSON"},
	{domain.ErrInvalid, http.StatusUnprocessableEntity, "validation-error", "the request has invalid fields"},
	{domain.ErrForbidden, http.StatusForbidden, "insufficient-scope", "this request needs a scope the grant does not hold"},
	{domain.ErrNotFound, http.StatusNotFound, "not-found", "no such object in this company"},
	{domain.ErrOtherCompany, http.StatusNotFound, "not-found", "no such object in this company"},
	{domain.ErrSlotUnavailable, http.StatusConflict, "slot-unavailable", "this start is not, or no longer, a free slot"},
	{domain.ErrInvalidTransition, http.StatusConflict, "invalid-transition",
		"the appointment's status does not allow this change (see the appointments' status table)"},
	{domain.ErrVersionMismatch, http.StatusPreconditionFailed, "version-mismatch",
		"the object has changed since the version If-Match names"},
	{domain.ErrWebhooksDisabled, http.StatusConflict, "webhooks-disabled",
		"webhooks are not enabled on this installation: its operator has set no PRAXIS_WEBHOOK_KEY"},
	{domain.ErrOrderClosed, http.StatusConflict, "order-closed",
		"the device order is done, cancelled or failed: it does not change so"},
	{domain.ErrNotADevice, http.StatusForbidden, "device-credential-required",
		"the bridge's calls take a token of a device's own credential (POST devices/{id}/credential)"},
	{domain.ErrConflict, http.StatusConflict, "conflict", "the request conflicts with an existing object"},
}

// ProblemOf is err's row of Problems; false for an error no row names,
// which both doors answer 500 (a bug: no dependency failure is one).
func ProblemOf(err error) (Problem, bool) {
	for _, p := range Problems {
		if errors.Is(err, p.Err) {
			return p, true
		}
	}
	return Problem{}, false
}
