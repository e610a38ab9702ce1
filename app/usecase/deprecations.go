package usecase

import (
	"context"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
	"github.com/praxis-health/praxis/ports"
)

// Deprecations tells who still calls what is deprecated (docs/contract.md
// §10): the operator's `praxis admin deprecations`, later the practice's
// settings page.
type Deprecations struct{ calls ports.DeprecatedCalls }

// NewDeprecations reads the counts of calls.
func NewDeprecations(calls ports.DeprecatedCalls) *Deprecations { return &Deprecations{calls: calls} }

// List answers the counts of company, or of every company for nil, newest day first.
func (d *Deprecations) List(ctx context.Context, company *domain.CompanyID) ([]release.Calls, error) {
	return d.calls.List(ctx, company)
}
