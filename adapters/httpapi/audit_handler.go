package httpapi

import (
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
	q := audit.Query{Limit: limitParam(c, &errs), Agent: c.Query("agent"), Customer: customerParam(c, &errs)}
	q.From, q.To = instantParam(c, "from", &errs), instantParam(c, "to", &errs)
	if v := c.Query("cursor"); v != "" {
		after, err := audit.ParseCursor(v)
		if err != nil {
			errs.Add("cursor", "is not a cursor this API handed out")
		}
		q.After = after
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
	return writePage(c, append(data, ']'), audit.NextCursor(page.Last), page.HasMore, nil)
}
