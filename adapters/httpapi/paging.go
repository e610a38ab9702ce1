package httpapi

import (
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
)

// listParams are the query parameters every list takes; calendarParams
// those a calendar kind's list takes besides.
var (
	listParams     = []string{"limit", "cursor", "updated_since", "include_deleted", "customer_id"}
	calendarParams = []string{"user_id", "location_id", "from", "to"}
)

// filesListQuery reads the files' list: ?limit ?cursor ?updated_since
// ?include_deleted ?customer_id and ?order_match (a device's results that
// matched an order, or did not), reporting every bad parameter at once
// (422, field = the parameter).
func filesListQuery(c *fiber.Ctx) (domain.ListQuery, error) {
	q, err := readListQuery(c, true, false, []string{"order_match"})
	if err != nil || !c.Request().URI().QueryArgs().Has("order_match") {
		return q, err
	}
	switch v := c.Query("order_match"); v {
	case "matched", "unmatched":
		q.Fields = map[string]string{"order_match": v}
		return q, nil
	}
	return q, domain.FieldErrors{{Field: "order_match", Message: "must be matched or unmatched"}}.Err()
}

// kindListQuery is listQuery for a kind of the table, with the calendar
// filters ?user_id ?location_id ?from ?to where the kind has them, and
// ?include=customer where its records name a customer.
func kindListQuery(c *fiber.Ctx, k *domain.Kind) (domain.ListQuery, error) {
	var extra []string
	if k.HasCustomer() {
		extra = append(extra, "include")
	}
	if k.Calendar {
		extra = append(extra, calendarParams...)
	}
	extra = append(extra, k.Filters...)
	if k == domain.CustomersKind() {
		for _, p := range domain.PatientSearchParams {
			extra = append(extra, p.Name)
		}
		extra = append(extra, "total", "sort")
	}
	q, err := readListQuery(c, k.HasCustomer(), k.Calendar, extra)
	var errs domain.FieldErrors
	if k == domain.CustomersKind() {
		q.Search, q.Total = patientSearch(c, &errs)
		if args := c.Request().URI().QueryArgs(); args.Has("sort") {
			sort, err := domain.ParseSort("sort", string(args.Peek("sort")), domain.NativeSortKeys)
			if fe, ok := domain.AsFieldErrors(err); ok {
				errs = append(errs, fe...)
			}
			q.Sort = sort
		}
	}
	for _, f := range k.Filters {
		if !c.Request().URI().QueryArgs().Has(f) {
			continue
		}
		v := c.Query(f)
		if msg := k.FilterProblem(f, v); msg != "" {
			errs.Add(f, msg)
		}
		if q.Fields == nil {
			q.Fields = map[string]string{}
		}
		q.Fields[f] = v
	}
	if err != nil {
		return q, err
	}
	return q, errs.Err()
}

// patientSearch reads the customers' list's filters (domain.PatientSearchParams)
// and ?total=true, every bad one into errs.
func patientSearch(c *fiber.Ctx, errs *domain.FieldErrors) ([]domain.Condition, domain.TotalMode) {
	args := c.Request().URI().QueryArgs()
	var conds []domain.Condition
	for _, p := range domain.PatientSearchParams {
		if !args.Has(p.Name) {
			continue
		}
		cond, err := p.Parse(c.Query(p.Name))
		fe, isFields := domain.AsFieldErrors(err)
		switch {
		case isFields:
			*errs = append(*errs, fe...)
		case err != nil:
			errs.Add(p.Name, err.Error())
		default:
			conds = append(conds, cond)
		}
	}
	if boolParam(c, "total", errs) {
		return conds, domain.TotalAccurate
	}
	return conds, domain.TotalNone
}

func readListQuery(c *fiber.Ctx, withCustomer, withCalendar bool, extra []string) (domain.ListQuery, error) {
	var errs domain.FieldErrors
	known := listParams
	if !withCustomer {
		known = slices.DeleteFunc(slices.Clone(known), func(p string) bool { return p == "customer_id" })
	}
	known = append(slices.Clip(known), extra...)
	onlyParams(c, known, &errs)
	q := domain.ListQuery{Limit: limitParam(c, &errs), IncludeDeleted: boolParam(c, "include_deleted", &errs)}
	if v := c.Query("cursor"); v != "" {
		cur, err := domain.ParseCursor(v)
		if err != nil {
			errs.Add("cursor", "is not a cursor this API handed out")
		}
		q.After = &cur
	}
	q.UpdatedSince = instantParam(c, "updated_since", &errs)
	if withCustomer {
		q.Customer = customerParam(c, &errs)
	}
	if withCalendar {
		q.Calendar.User = uuidParam(c, "user_id", &errs)
		q.Calendar.Location = uuidParam(c, "location_id", &errs)
		q.Calendar.From = dateParam(c, "from", &errs)
		q.Calendar.To = dateParam(c, "to", &errs)
		if q.Calendar.From != nil && q.Calendar.To != nil && q.Calendar.From.After(*q.Calendar.To) {
			errs.Add("to", "must not be before from")
		}
	}
	return q, errs.Err()
}

// writePage answers a list: {"data":[…],"next_cursor":…,"has_more":…},
// with "customers":[…] when they were asked for. The objects come as JSON
// arrays, already rendered: nothing is encoded again.
func writePage(c *fiber.Ctx, data []byte, next string, more bool, customers []byte) error {
	return writePageTotal(c, data, next, more, customers, nil)
}

// writePageTotal is writePage with "total" (how many the filters keep) when
// it was asked for (?total=true on the customers' list).
func writePageTotal(c *fiber.Ctx, data []byte, next string, more bool, customers []byte, total *int64) error {
	// Into the response's own body buffer, which fasthttp pools: a page is
	// copied once, and no page-sized buffer is left for the collector.
	resp := c.Response()
	resp.ResetBody()
	resp.AppendBodyString(`{"data":`)
	resp.AppendBody(data)
	tail := make([]byte, 0, 80+len(next))
	tail = append(tail, `,"next_cursor":`...)
	tail = strconv.AppendQuote(tail, next)
	tail = append(tail, `,"has_more":`...)
	tail = strconv.AppendBool(tail, more)
	if total != nil {
		tail = strconv.AppendInt(append(tail, `,"total":`...), *total, 10)
	}
	resp.AppendBody(append(appendCustomers(tail, customers), '}'))
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return nil
}

// onlyParams refuses a query parameter that is not among known, or one given twice.
func onlyParams(c *fiber.Ctx, known []string, errs *domain.FieldErrors) {
	knownParams(c, known, "is not a parameter of this list", errs)
}

// knownParams refuses a parameter not among known with unknown, and one given twice.
func knownParams(c *fiber.Ctx, known []string, unknown string, errs *domain.FieldErrors) {
	args := c.Request().URI().QueryArgs()
	args.VisitAll(func(k, _ []byte) {
		name := string(k)
		switch {
		case !slices.Contains(known, name):
			errs.Add(name, unknown)
		case len(args.PeekMulti(name)) > 1 && name != "":
			errs.Add(name, "is given more than once")
		}
	})
}

// boolParam reads an optional true or false.
func boolParam(c *fiber.Ctx, name string, errs *domain.FieldErrors) bool {
	switch c.Query(name) {
	case "", "false":
		return false
	case "true":
		return true
	}
	errs.Add(name, "must be true or false")
	return false
}

// customerParam reads ?customer_id, a customer number.
func customerParam(c *fiber.Ctx, errs *domain.FieldErrors) *domain.CustomerID {
	v := c.Query("customer_id")
	if v == "" {
		return nil
	}
	id, ok := domain.ParseCustomerPathID(v)
	if !ok {
		errs.Add("customer_id", "must be a customer number from 1 to 9999999999")
	}
	return &id
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

// limitParam reads ?limit, 1–500, default 100.
func limitParam(c *fiber.Ctx, errs *domain.FieldErrors) int {
	v := c.Query("limit")
	if v == "" {
		return domain.DefaultPageSize
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > domain.MaxPageSize {
		errs.Add("limit", "must be a whole number from 1 to 500")
	}
	return n
}

// uuidParam reads an optional id parameter; another spelling than the canonical one is 422.
func uuidParam(c *fiber.Ctx, name string, errs *domain.FieldErrors) *domain.UUID {
	v := c.Query(name)
	if v == "" {
		return nil
	}
	if !domain.ValidObjectID(v) {
		errs.Add(name, "must be an id (a lower-case UUID)")
	}
	id := domain.UUID(v)
	return &id
}

// dateParam reads an optional local date parameter, YYYY-MM-DD.
func dateParam(c *fiber.Ctx, name string, errs *domain.FieldErrors) *domain.Date {
	v := c.Query(name)
	if v == "" {
		return nil
	}
	if _, err := domain.ParseDate(v); err != nil {
		errs.Add(name, "must be a date YYYY-MM-DD from 0001-01-01 to 9999-12-31")
	}
	d := domain.Date(v)
	return &d
}

// appendCustomers adds a page's "customers" member, when they were asked for.
func appendCustomers(b, customers []byte) []byte {
	if customers == nil {
		return b
	}
	return append(append(b, `,"customers":`...), customers...)
}

// writeBatch answers ?ids= in a list's shape, which is no page of the feed:
// {"data":[…],"next_cursor":"","has_more":false,"not_found":[…]}, and "customers".
func writeBatch(c *fiber.Ctx, data []byte, notFound []string, customers []byte) error {
	b := make([]byte, 0, len(data)+len(customers)+96+40*len(notFound))
	b = append(append(b, `{"data":`...), data...)
	b = append(b, `,"next_cursor":"","has_more":false,"not_found":[`...)
	for i, id := range notFound {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, id)
	}
	b = append(b, ']')
	b = appendCustomers(b, customers)
	b = append(b, '}')
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(b)
}

// includeParam reads ?include: "customer" answers the records' customers
// beside them.
func includeParam(c *fiber.Ctx) (bool, error) {
	switch c.Query("include") {
	case "":
		return false, nil
	case "customer":
		return true, nil
	}
	return false, domain.FieldErrors{{Field: "include", Message: "must be customer"}}.Err()
}

// customersReadable answers whether the client may see the customers
// include=customer adds (customers:read); when not, it has answered 403
// as any missing scope is answered, and the handler returns.
func customersReadable(c *fiber.Ctx) bool {
	scope := domain.ReadScope("customers")
	if grantOf(c).Scopes.Contains(scope) {
		return true
	}
	_ = refuseBearer(c, httpkit.InsufficientScope(scope, "include=customer"))
	return false
}

// batchParams are what may come with ?ids=: it stands alone, a read by id
// is no page of the feed.
var batchParams = []string{"ids", "include_deleted", "include"}

// batchQuery reads ?ids= (1 to 100 ids of the kind's form) with
// ?include_deleted and ?include; any other parameter is 422.
func batchQuery(c *fiber.Ctx, k *domain.Kind) (domain.BatchQuery, error) {
	var errs domain.FieldErrors
	knownParams(c, batchParams, "cannot be combined with ids (a read by id is not a page of the feed)", &errs)
	q := domain.BatchQuery{IncludeDeleted: boolParam(c, "include_deleted", &errs)}
	ids, err := domain.ParseIDs(c.Query("ids"), k.NumericIDs())
	if fe, ok := domain.AsFieldErrors(err); ok {
		errs = append(errs, fe...)
	}
	q.IDs = ids
	if len(errs) > 0 {
		return q, errs.Err()
	}
	q.IncludeCustomers, err = includeParam(c)
	return q, err
}
