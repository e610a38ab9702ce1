package httpapi

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// The audit trail's door (docs/contract.md §11): every request to the
// resource API and the upload doors is one event. The handlers and use
// cases add the customers they touch; a write records its event in its
// own transaction; every other answer waits here until its event is
// durable, and is a 503 when it cannot be.

// subject is what one request reached, as the door tells it.
type subject struct {
	company    domain.CompanyID
	agent      audit.Agent
	section    string
	action     string
	object     string
	candidates []domain.CustomerID // the customers a refused request asked for
}

// auditDoor records the events of one door: the resource API's, or the uploads'.
type auditDoor struct {
	auditor ports.Auditor
	trusted []netip.Prefix
	// failed counts answers refused because their event could not be
	// written: an SRE's alert, since each one is data a practice could not see.
	failed metric.Int64Counter
}

func newAuditDoor(auditor ports.Auditor, trusted []netip.Prefix, tel Telemetry) auditDoor {
	return auditDoor{auditor: auditor, trusted: trusted, failed: must(tel.withDefaults().Meter.Meter(instrumentation).Int64Counter(
		"praxis.audit.write_failures", metric.WithDescription("Answers turned into 503 because their audit event could not be written")))}
}

// audited wraps the rest of the chain in an audit event; describe tells,
// after the answer, what the request reached (ok false: no company to
// record it for).
func (d auditDoor) audited(describe func(c *fiber.Ctx) (subject, bool)) fiber.Handler {
	auditor, trusted := d.auditor, d.trusted
	return func(c *fiber.Ctx) error {
		if auditor == nil {
			return c.Next()
		}
		e := httpkit.NewEvent(c, trusted, time.Now())
		access := audit.NewAccess(e, func(e *audit.Event) {
			if s, ok := describe(c); ok {
				e.Agent, e.Section, e.Action = s.agent, s.section, s.action
				if e.ObjectID == "" {
					e.ObjectID = s.object
				}
			}
		})
		c.SetUserContext(audit.With(c.UserContext(), access))
		defer func() {
			// A handler that panics is answered 500 further out
			// (telemetry.go); its access is recorded here first.
			if r := recover(); r != nil {
				if s, ok := describe(c); ok {
					if auditor.Record(context.WithoutCancel(c.UserContext()), s.company, access.Event(fiber.StatusInternalServerError, "panic")) != nil {
						d.failed.Add(c.UserContext(), 1)
					}
				}
				panic(r)
			}
		}()
		if err := c.Next(); err != nil {
			// Answer here, so that the event records the status sent.
			if err := c.App().Config().ErrorHandler(c, err); err != nil {
				return err
			}
		}
		s, ok := describe(c)
		status := c.Response().StatusCode()
		if !ok || ((access.Written() || access.Skipped()) && status < 400) {
			return nil
		}
		event := access.Event(status, reasonOf(c, status))
		if status >= 400 {
			event.CustomerIDs = append(event.CustomerIDs, s.candidates...)
		}
		if err := auditor.Record(c.UserContext(), s.company, event); err != nil {
			// Not recorded: the data is not served.
			d.failed.Add(c.UserContext(), 1)
			c.Response().Reset()
			return c.App().Config().ErrorHandler(c, err)
		}
		return nil
	}
}

// reasonOf is why an answer refused: its problem type or OAuth error code.
func reasonOf(c *fiber.Ctx, status int) string {
	if status < 400 || c.Response().IsBodyStream() {
		return ""
	}
	var body struct {
		Type    string `json:"type"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(c.Response().Body(), &body) != nil {
		return ""
	}
	switch {
	case body.Type != "":
		return body.Type[strings.LastIndexByte(body.Type, '/')+1:]
	case body.Error != "":
		return body.Error
	}
	return body.Message // the upload doors' messages are fixed texts of the contract
}

// resourceSubject reads what a resource API request reached from its path.
func resourceSubject(c *fiber.Ctx) (subject, bool) {
	g := grantOf(c)
	if g.ClientID == "" {
		return subject{}, false // refused before its token was known: no company to record it for
	}
	s := subject{company: g.CompanyID, agent: audit.Agent{Type: audit.AgentClient, ID: string(g.ClientID)}}
	segs := strings.Split(strings.Trim(strings.TrimPrefix(c.Path(), resourcePrefix), "/"), "/")
	s.section = segs[0]
	get := c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead
	switch {
	case s.section == "booking":
		s.action = audit.ActionList
		if !get {
			s.action = audit.ActionCreate
		}
	case get && len(segs) == 1 && s.section == "company":
		s.action = audit.ActionRead
	case get && len(segs) == 1:
		s.action = audit.ActionList
	case get && len(segs) == 3 && segs[2] == "download":
		s.action = audit.ActionDownload
	case get && len(segs) == 3: // a collection of an object (an endpoint's deliveries)
		s.action = audit.ActionList
	case get:
		s.action = audit.ActionRead
	case c.Method() == fiber.MethodPost && len(segs) == 1 && s.section == "files":
		s.action = audit.ActionUpload
	case c.Method() == fiber.MethodPost && len(segs) == 1:
		s.action = audit.ActionCreate
	case c.Method() == fiber.MethodDelete:
		s.action = audit.ActionDelete
	default:
		s.action = audit.ActionUpdate
	}
	if s.section != "booking" && len(segs) >= 2 {
		s.object = segs[1]
		if s.section == "customers" {
			if id, ok := domain.ParseCustomerPathID(segs[1]); ok {
				s.candidates = append(s.candidates, id)
			}
		}
	}
	if id, ok := domain.ParseCustomerPathID(c.Query("customer_id")); ok {
		s.candidates = append(s.candidates, id)
	}
	return s, true
}

// uploadSubject reads what an upload door request reached from its
// headers, as the door reads them (uploadHeader): the company it names (the use case drops an event for a
// company that does not exist), the device door, the customer.
func uploadSubject(source domain.Source) func(c *fiber.Ctx) (subject, bool) {
	return func(c *fiber.Ctx) (subject, bool) {
		company, err := domain.ParseCompanyID(uploadHeader(c, "company").Value)
		if err != nil {
			return subject{}, false
		}
		s := subject{company: company, agent: audit.Agent{Type: audit.AgentDevice, ID: source.String(), Name: source.String() + " upload"},
			section: "files", action: audit.ActionUpload}
		if id, ok := domain.ParseCustomerPathID(uploadHeader(c, "customer").Value); ok {
			s.candidates = []domain.CustomerID{id}
		}
		return s, true
	}
}
