package httpkit

import (
	"net/netip"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/praxis-health/praxis/domain/audit"
)

// NewEvent begins the audit event of a request at either door
// (docs/contract.md §11): its time, the client's address after the
// trusted proxies, and the trace to find it by. The door adds the agent,
// what was reached and the outcome.
func NewEvent(c *fiber.Ctx, trusted []netip.Prefix, now time.Time) audit.Event {
	e := audit.New(now)
	e.Source.Address = ClientAddress(c, trusted)
	if sc := trace.SpanContextFromContext(c.UserContext()); sc.HasTraceID() {
		e.TraceID = sc.TraceID().String()
	}
	return e
}
