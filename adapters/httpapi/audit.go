package httpapi

import (
	"encoding/json"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// newAuditDoor is the audit door (httpkit.AuditDoor) of the resource API
// and the upload doors: refusals read from their problem documents, errors
// answered by the ErrorHandler.
func newAuditDoor(auditor ports.Auditor, trusted []netip.Prefix, tel httpkit.Telemetry) httpkit.AuditDoor {
	return httpkit.AuditDoor{Recorder: auditor, Trusted: trusted, Failed: AuditFailures(tel), Reason: reasonOf,
		Answer: func(c *fiber.Ctx, err error) error { return c.App().Config().ErrorHandler(c, err) }}
}

// AuditFailures counts answers refused because their audit event could
// not be written, at every door (praxis.audit.write_failures).
func AuditFailures(tel httpkit.Telemetry) metric.Int64Counter {
	return httpkit.Must(tel.WithDefaults().Meter.Meter(instrumentation).Int64Counter(
		"praxis.audit.write_failures", metric.WithDescription("Answers turned into 503 because their audit event could not be written")))
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
func resourceSubject(c *fiber.Ctx) (httpkit.Subject, bool) {
	g := grantOf(c)
	if g.ClientID == "" {
		return httpkit.Subject{}, false // refused before its token was known: no company to record it for
	}
	s := httpkit.Subject{Company: g.CompanyID, Agent: audit.Agent{Type: audit.AgentClient, ID: string(g.ClientID)}}
	segs := strings.Split(strings.Trim(strings.TrimPrefix(c.Path(), resourcePrefix), "/"), "/")
	s.Section = segs[0]
	get := c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead
	switch {
	case s.Section == "booking":
		s.Action = audit.ActionList
		if !get {
			s.Action = audit.ActionCreate
		}
	case get && len(segs) == 1 && s.Section == "company":
		s.Action = audit.ActionRead
	case get && len(segs) == 1:
		s.Action = audit.ActionList
	case get && len(segs) == 3 && segs[2] == "download":
		s.Action = audit.ActionDownload
	case get && len(segs) == 3: // a collection of an object (an endpoint's deliveries)
		s.Action = audit.ActionList
	case get:
		s.Action = audit.ActionRead
	case c.Method() == fiber.MethodPost && len(segs) == 2 && s.Section == "customers" && segs[1] == "match":
		s.Action = audit.ActionMatch // names the candidates answered
		return s, true
	case c.Method() == fiber.MethodPost && len(segs) == 1 && s.Section == "files":
		s.Action = audit.ActionUpload
	case c.Method() == fiber.MethodPost && len(segs) == 1:
		s.Action = audit.ActionCreate
	case c.Method() == fiber.MethodDelete:
		s.Action = audit.ActionDelete
	default:
		s.Action = audit.ActionUpdate
	}
	if s.Section != "booking" && len(segs) >= 2 {
		s.Object = segs[1]
		if s.Section == "customers" {
			if id, ok := domain.ParseCustomerPathID(segs[1]); ok {
				s.Candidates = append(s.Candidates, id)
			}
		}
	}
	if id, ok := domain.ParseCustomerPathID(c.Query("customer_id")); ok {
		s.Candidates = append(s.Candidates, id)
	}
	return s, true
}

// uploadSubject reads what an upload door request reached from its
// headers, as the door reads them (uploadHeader): the company it names (the use case drops an event for a
// company that does not exist), the device door, the customer.
func uploadSubject(source domain.Source) func(c *fiber.Ctx) (httpkit.Subject, bool) {
	return func(c *fiber.Ctx) (httpkit.Subject, bool) {
		company, err := domain.ParseCompanyID(uploadHeader(c, "company").Value)
		if err != nil {
			return httpkit.Subject{}, false
		}
		s := httpkit.Subject{Company: company, Agent: audit.Agent{Type: audit.AgentDevice, ID: source.String(), Name: source.String() + " upload"},
			Section: "files", Action: audit.ActionUpload}
		if id, ok := domain.ParseCustomerPathID(uploadHeader(c, "customer").Value); ok {
			s.Candidates = []domain.CustomerID{id}
		}
		return s, true
	}
}
