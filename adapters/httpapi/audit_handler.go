package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// AuditEvents answers "who accessed this patient's data?"
// (docs/contract.md §11): the company's audit events, scope audit:read.
type AuditEvents struct{ auditor ports.Auditor }

// NewAuditEvents serves the audit trail of auditor.
func NewAuditEvents(auditor ports.Auditor) *AuditEvents { return &AuditEvents{auditor: auditor} }

func (h *AuditEvents) Register(r fiber.Router) {
	r.Get("/audit-events", requireScope(domain.ScopeAuditRead), h.list)
}

var auditParams = []string{"customer_id", "agent", "from", "to", "cursor", "limit"}

func (h *AuditEvents) list(c *fiber.Ctx) error {
	var errs domain.FieldErrors
	onlyParams(c, auditParams, &errs)
	q := audit.Query{Limit: limitParam(c, &errs), Agent: c.Query("agent")}
	if v := c.Query("customer_id"); v != "" {
		id, ok := domain.ParseCustomerPathID(v)
		if !ok {
			errs.Add("customer_id", "must be a customer number from 1 to 9999999999")
		}
		q.Customer = &id
	}
	q.From, q.To = instantParam(c, "from", &errs), instantParam(c, "to", &errs)
	if v := c.Query("cursor"); v != "" {
		cur, err := domain.ParseCursor(v)
		if err != nil || cur.ID != "audit" {
			errs.Add("cursor", "is not a cursor this API handed out")
		}
		q.After = cur.Change
	}
	if err := errs.Err(); err != nil {
		return err
	}
	page, err := h.auditor.List(c.UserContext(), grantOf(c), q)
	if err != nil {
		return err
	}
	data := []byte{'['}
	for i, e := range page.Events {
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, e...)
	}
	return writePage(c, append(data, ']'), domain.Cursor{Change: page.Last, ID: "audit"}.Encode(), page.HasMore)
}

// instantParam reads an RFC 3339 date-time parameter.
func instantParam(c *fiber.Ctx, name string, errs *domain.FieldErrors) *time.Time {
	v := c.Query(name)
	if v == "" {
		return nil
	}
	t, err := domain.ParseDateTime(v)
	if err != nil {
		errs.Add(name, "must be an RFC 3339 date-time with an offset, from year 0001 to 9999")
	}
	return &t
}
