package httpkit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/praxis-health/praxis/adapters/fhir"
	"github.com/praxis-health/praxis/adapters/httpapi"
	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/adapters/web"
	"github.com/praxis-health/praxis/domain"
)

// TestEveryDomainErrorThroughTheThreeDoors sends each domain error the use
// cases return, bare and wrapped as they travel, through the API's error
// table, the pages' and FHIR's: the same status from all three, the
// table's, and never a 5xx but for a dependency that failed. Every row of
// the table is sent.
func TestEveryDomainErrorThroughTheThreeDoors(t *testing.T) {
	sent := map[error]bool{}
	cases := []struct {
		err  error
		want int
	}{
		{domain.ErrNotFound, http.StatusNotFound},
		{domain.ErrOtherCompany, http.StatusNotFound},
		{domain.ErrConflict, http.StatusConflict},
		{domain.ErrCompanyDisabled, http.StatusConflict},
		{domain.ErrWebhooksDisabled, http.StatusConflict},
		{domain.ErrOrderClosed, http.StatusConflict},
		{domain.ErrSlotUnavailable, http.StatusConflict},
		{domain.ErrInvalidTransition, http.StatusConflict},
		{domain.ErrNotOpen, http.StatusConflict},
		{domain.ErrInvalid, http.StatusUnprocessableEntity},
		{&domain.ValidationError{Field: "name", Message: "is required"}, http.StatusUnprocessableEntity},
		{domain.FieldErrors{{Field: "a", Message: "b"}}.Err(), http.StatusUnprocessableEntity},
		{domain.ErrIdempotencyKeyReused, http.StatusUnprocessableEntity},
		{domain.ErrMalformedJSON, http.StatusBadRequest},
		{domain.ErrVersionMismatch, http.StatusPreconditionFailed},
		{&domain.StaleVersion{Current: 3}, http.StatusPreconditionFailed},
		{domain.ErrNotADevice, http.StatusForbidden},
		{domain.ErrForbidden, http.StatusForbidden},
		{domain.Grant{}.Require(domain.ScopeWebhooksWrite), http.StatusForbidden},
		{domain.ErrStorageFull, http.StatusInsufficientStorage},
		{domain.ErrUnavailable, http.StatusServiceUnavailable},
		{domain.ErrSearchIndexing, http.StatusServiceUnavailable},
		{domain.Unavailable(errors.New("connection refused")), http.StatusServiceUnavailable},
		{context.DeadlineExceeded, http.StatusServiceUnavailable},
	}
	for _, c := range cases {
		for _, err := range []error{c.err, fmt.Errorf("load: %w", c.err)} {
			api, page, fhirDoor := httpapi.StatusOf(err), web.StatusOf(err), fhir.StatusOf(err)
			if api != c.want || page != c.want || fhirDoor != c.want {
				t.Errorf("%v: the API answers %d, the pages %d, FHIR %d, want %d", err, api, page, fhirDoor, c.want)
			}
			dependency := errors.Is(err, domain.ErrUnavailable) || errors.Is(err, domain.ErrStorageFull) || errors.Is(err, context.DeadlineExceeded)
			if c.want >= 500 && !dependency {
				t.Errorf("%v: a 5xx for what is not a failed dependency", err)
			}
		}
		for _, p := range httpkit.Problems {
			if errors.Is(c.err, p.Err) {
				sent[p.Err] = true
			}
		}
	}
	for _, p := range httpkit.Problems {
		if !sent[p.Err] {
			t.Errorf("the table's row for %v is sent through no door here", p.Err)
		}
	}
	bug := errors.New("a bug")
	if api, page, fhirDoor := httpapi.StatusOf(bug), web.StatusOf(bug), fhir.StatusOf(bug); api != 500 || page != 500 || fhirDoor != 500 {
		t.Errorf("an error no row names: the API %d, the pages %d, FHIR %d, want 500", api, page, fhirDoor)
	}
}
