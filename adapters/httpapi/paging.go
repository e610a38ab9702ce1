package httpapi

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
)

// listParams are the query parameters every list takes.
var listParams = []string{"limit", "cursor", "updated_since", "include_deleted", "customer_id"}

// listQuery reads ?limit ?cursor ?updated_since ?include_deleted ?customer_id,
// reporting every bad parameter at once (422, field = the parameter).
func listQuery(c *fiber.Ctx, withCustomer bool) (domain.ListQuery, error) {
	q := domain.ListQuery{Limit: domain.DefaultPageSize}
	var errs domain.FieldErrors
	args := c.Request().URI().QueryArgs()
	args.VisitAll(func(k, _ []byte) {
		name := string(k)
		known := false
		for _, p := range listParams {
			known = known || p == name
		}
		if !known || (name == "customer_id" && !withCustomer) {
			errs.Add(name, "is not a parameter of this list")
		} else if len(args.PeekMulti(name)) > 1 && name != "" {
			errs.Add(name, "is given more than once")
		}
	})
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > domain.MaxPageSize {
			errs.Add("limit", "must be a whole number from 1 to 500")
		}
		q.Limit = n
	}
	if v := c.Query("cursor"); v != "" {
		cur, err := domain.ParseCursor(v)
		if err != nil {
			errs.Add("cursor", "is not a cursor this API handed out")
		}
		q.After = &cur
	}
	if v := c.Query("updated_since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			errs.Add("updated_since", "must be an RFC 3339 date-time with an offset")
		}
		q.UpdatedSince = &t
	}
	switch c.Query("include_deleted") {
	case "", "false":
	case "true":
		q.IncludeDeleted = true
	default:
		errs.Add("include_deleted", "must be true or false")
	}
	if v := c.Query("customer_id"); v != "" && withCustomer {
		id, ok := domain.ParseCustomerPathID(v)
		if !ok {
			errs.Add("customer_id", "must be a customer number from 1 to 9999999999")
		}
		q.Customer = &id
	}
	return q, errs.Err()
}

// writePage answers a list: {"data":[…],"next_cursor":…,"has_more":…}. The
// objects come as one JSON array, already rendered: nothing is encoded again.
func writePage(c *fiber.Ctx, data []byte, next string, more bool) error {
	b := make([]byte, 0, len(data)+64+len(next))
	b = append(append(b, `{"data":`...), data...)
	b = append(b, `,"next_cursor":`...)
	b = strconv.AppendQuote(b, next)
	b = append(b, `,"has_more":`...)
	b = strconv.AppendBool(b, more)
	b = append(b, '}')
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(b)
}
