package web

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
)

// The Audit page: who accessed a patient's data, and its export (docs/contract.md §11).

// auditPageSize is how many events the audit page shows at once.
const auditPageSize = 50

// auditQuery reads the audit page's filters: a customer, an agent (a
// client id, or a door: gdt, sonogdt), a cursor.
func auditQuery(c *fiber.Ctx) (audit.Query, error) {
	q := audit.Query{Limit: auditPageSize, Agent: strings.TrimSpace(c.Query("agent"))}
	if raw := strings.TrimSpace(c.Query("customer_id")); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			return q, &domain.ValidationError{Field: "customer_id", Message: "customer_id must be a positive number"}
		}
		customer := domain.CustomerID(id)
		q.Customer = &customer
	}
	if cur := c.Query("cursor"); cur != "" {
		after, err := audit.ParseCursor(cur)
		if err != nil {
			return q, err
		}
		q.After = after
	}
	return q, nil
}

// auditPage answers "who accessed this patient": the company's events,
// narrowed to a customer or an agent. Reading the trail is an event too.
func (s *Site) auditPage(c *fiber.Ctx) error {
	q, err := auditQuery(c)
	if err != nil {
		return s.fail(c, err)
	}
	data := map[string]any{"CustomerID": c.Query("customer_id"), "Agent": q.Agent}
	if s.api.Auditor == nil {
		return s.render(c, "audit", data)
	}
	var page audit.Page
	err = s.change(audit.ActionList, "audit-events", func(c *fiber.Ctx) error {
		var err error
		page, err = s.api.Auditor.List(ctx(c), memberOf(c).Grant(), q)
		return err
	})(c)
	if err != nil || c.Response().StatusCode() >= 400 {
		return err
	}
	events := make([]audit.Event, 0, len(page.Events))
	for _, raw := range page.Events {
		var e audit.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			return s.fail(c, err)
		}
		events = append(events, e)
	}
	if page.HasMore {
		data["Next"] = audit.NextCursor(page.Last)
	}
	data["Events"] = events
	return s.render(c, "audit", data)
}

// maxExport bounds an export from the page, which is built in memory.
const maxExport = 50_000

// auditExport downloads the events the filters select as JSON lines, each
// the event as the chain keeps it.
func (s *Site) auditExport(c *fiber.Ctx) error {
	q, err := auditQuery(c)
	if err != nil {
		return s.fail(c, err)
	}
	if s.api.Auditor == nil {
		return s.fail(c, domain.ErrNotFound)
	}
	var out []byte
	n := 0
	err = s.change(audit.ActionExport, "audit-events", func(c *fiber.Ctx) error {
		for q.Limit = 500; ; {
			page, err := s.api.Auditor.List(ctx(c), memberOf(c).Grant(), q)
			if err != nil {
				return err
			}
			if n += len(page.Events); n > maxExport {
				return &domain.ValidationError{Field: "customer_id", Message: fmt.Sprintf(
					"more than %d events: narrow the export to a customer or an agent (the operator's export has no bound)", maxExport)}
			}
			for _, e := range page.Events {
				out = append(append(out, e...), '\n')
			}
			if !page.HasMore {
				return nil
			}
			q.After = page.Last
		}
	})(c)
	if err != nil || c.Response().StatusCode() >= 400 {
		return err
	}
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="praxis-audit.jsonl"`)
	c.Type("jsonl")
	c.Set(fiber.HeaderContentType, "application/jsonl")
	return c.Send(out)
}
