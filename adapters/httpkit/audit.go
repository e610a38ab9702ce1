package httpkit

import (
	"context"
	"net/netip"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
)

// Subject is what one request reached, as its door tells it.
type Subject struct {
	Company    domain.CompanyID
	Agent      audit.Agent
	Section    string
	Action     string
	Object     string
	Candidates []domain.CustomerID // the customers a refused request asked for
}

// Recorder is where a door's events go (the Auditor port's Expect and Record).
type Recorder interface {
	Expect(ctx context.Context) (context.Context, func())
	Record(ctx context.Context, company domain.CompanyID, e audit.Event) error
}

// AuditDoor records the events of one door (the resource API's, the
// uploads', FHIR's): every request one event (docs/contract.md §11). The
// handlers and use cases add the customers they touch; a write records its
// event in its own transaction; every other answer waits here until its
// event is durable, and is a 503 when it cannot be.
type AuditDoor struct {
	Recorder Recorder
	Trusted  []netip.Prefix
	// Failed counts answers refused because their event could not be
	// written: an SRE's alert, since each one is data a practice could not see.
	Failed metric.Int64Counter
	// Reason is why an answer of status refused, as the event names it.
	Reason func(c *fiber.Ctx, status int) string
	// Answer answers an error in the door's shape.
	Answer func(c *fiber.Ctx, err error) error
}

// Audited wraps the rest of the chain in an audit event; describe tells,
// after the answer, what the request reached (ok false: no company to
// record it for).
func (d AuditDoor) Audited(describe func(c *fiber.Ctx) (Subject, bool)) fiber.Handler {
	auditor, trusted := d.Recorder, d.Trusted
	return func(c *fiber.Ctx) error {
		if auditor == nil {
			return c.Next()
		}
		// The group commit may wait for this request's event until it
		// comes or the request is over.
		ctx, end := auditor.Expect(c.UserContext())
		defer end()
		e := NewEvent(c, trusted, time.Now())
		access := audit.NewAccess(e, func(e *audit.Event) {
			if s, ok := describe(c); ok {
				e.Agent, e.Section, e.Action = s.Agent, s.Section, s.Action
				if e.ObjectID == "" {
					e.ObjectID = s.Object
				}
			}
		})
		c.SetUserContext(audit.With(ctx, access))
		defer func() {
			// A handler that panics is answered 500 further out
			// (telemetry.go); its access is recorded here first.
			if r := recover(); r != nil {
				if s, ok := describe(c); ok {
					if auditor.Record(context.WithoutCancel(c.UserContext()), s.Company, access.Event(fiber.StatusInternalServerError, "panic")) != nil {
						d.Failed.Add(c.UserContext(), 1)
					}
				}
				panic(r)
			}
		}()
		if err := c.Next(); err != nil {
			// Answer here, so that the event records the status sent.
			if err := d.Answer(c, err); err != nil {
				return err
			}
		}
		s, ok := describe(c)
		status := c.Response().StatusCode()
		if !ok || ((access.Written() || access.Skipped()) && status < 400) {
			return nil
		}
		event := access.Event(status, d.Reason(c, status))
		if status >= 400 {
			event.CustomerIDs = append(event.CustomerIDs, s.Candidates...)
		}
		if err := auditor.Record(c.UserContext(), s.Company, event); err != nil {
			// Not recorded: the data is not served.
			d.Failed.Add(c.UserContext(), 1)
			c.Response().Reset()
			return d.Answer(c, err)
		}
		return nil
	}
}
