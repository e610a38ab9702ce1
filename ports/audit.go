package ports

import (
	"context"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
)

// AuditLog keeps every company's chain of audit events (docs/contract.md §11).
type AuditLog interface {
	// Append seals events at the end of their company's chain, in the
	// transaction of ctx if there is one (a write's event commits with the
	// write); outside one, atomic on its own.
	Append(ctx context.Context, company domain.CompanyID, events []audit.Event) error
	// List answers one page of company's events in chain order.
	List(ctx context.Context, company domain.CompanyID, q audit.Query) (audit.Page, error)
	// Chain answers where company's chain starts (its beginning, or where
	// the last sweep cut it) and its head, the last event sealed.
	Chain(ctx context.Context, company domain.CompanyID) (from, head audit.Link, err error)
	// Walk hands fn company's stored events in chain order, up to upTo.
	Walk(ctx context.Context, company domain.CompanyID, upTo int64, fn func(audit.Sealed) error) error
	// Sweep deletes company's events older than before and moves the
	// checkpoint to the last one deleted; it answers how many went.
	Sweep(ctx context.Context, company domain.CompanyID, before time.Time) (int64, error)
}

// Auditor records the event of a request that is not a write (a read, a
// list, a refusal): it answers once the event is durable, and an error
// means it is not, so the data must not be served (docs/contract.md §11).
type Auditor interface {
	// Expect announces a request that may record an event, so that a
	// group commit under load can wait for it; the request's context is
	// the one returned, and end is called when the request is over.
	Expect(ctx context.Context) (_ context.Context, end func())
	Record(ctx context.Context, company domain.CompanyID, e audit.Event) error
	List(ctx context.Context, grant domain.Grant, q audit.Query) (audit.Page, error)
}
