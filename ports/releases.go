package ports

import (
	"context"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
)

// DeprecatedCalls counts, per OAuth client, operation and day, the calls
// that used something deprecated (docs/contract.md §10), so that an
// operator or the practice knows which integrator to warn before a sunset.
type DeprecatedCalls interface {
	// Count adds calls of client to operation on day (UTC).
	Count(ctx context.Context, company domain.CompanyID, client domain.ClientID, operation string, day time.Time, calls int64) error
	// List answers the counts of company, or of every company for nil,
	// newest day first.
	List(ctx context.Context, company *domain.CompanyID) ([]release.Calls, error)
}
