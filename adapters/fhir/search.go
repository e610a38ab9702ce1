package fhir

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
)

// searchParam is a search parameter of one resource type: its FHIR type and
// how an object matches one value of it (the values of one parameter are
// alternatives, FHIR's comma; repeated parameters all hold).
type searchParam struct {
	name, kind, doc string
	match           func(it item, v value) bool
	// query, where set, puts the parameter into the store's query
	// (patient_search.go); modifiers are the modifiers it takes. A
	// parameter with both narrows the feed by its query and matches each
	// object read (a report's rows: the query keeps the reports that hold
	// a matching row, match the rows).
	query     paramQuery
	modifiers []string
	// definition is the canonical SearchParameter it implements, when there is one.
	definition string
}

// value is one value of a search parameter: a prefix for dates, a system for tokens.
type value struct {
	raw    string
	system *string   // token: the part before |, when there is one
	code   string    // token: the part after |
	prefix string    // date: eq, ne, gt, ge, lt, le
	from   time.Time // date: the range the value spells, [from, to)
	to     time.Time
}

// commonParams are the parameters of every type (FHIR R4 §3.1.1.5).
var commonParams = []searchParam{
	{name: "_id", kind: "token", doc: "up to 100 ids, comma-separated"},
	{name: "_lastUpdated", kind: "date", doc: "gt, ge, lt, le or eq an instant", match: lastUpdated},
}

// matchesAll is whether it satisfies every parameter (one value of each).
func matchesAll(it item, filters []filter) bool {
	for _, f := range filters {
		if !slices.ContainsFunc(f.values, func(v value) bool { return f.param.match(it, v) }) {
			return false
		}
	}
	return true
}

// filter is one parameter of a request with its values.
type filter struct {
	param  searchParam
	values []value
}

// parseValue reads one value of a parameter of kind.
func parseValue(name, kind, raw string) (value, error) {
	v := value{raw: raw}
	switch kind {
	case "token", "reference":
		if system, code, ok := strings.Cut(raw, "|"); ok {
			v.system, v.code = &system, code
		} else {
			v.code = raw
		}
	case "date":
		v.prefix = "eq"
		if len(raw) > 2 && slices.Contains([]string{"eq", "ne", "gt", "ge", "lt", "le"}, raw[:2]) {
			v.prefix, raw = raw[:2], raw[2:]
		}
		from, to, ok := domain.ValueSpan(raw)
		if !ok {
			return v, invalidParam(name, name+": "+strconv.Quote(raw)+" is not a FHIR date (YYYY, YYYY-MM, YYYY-MM-DD or an instant)")
		}
		v.from, v.to = from, to
	case "string":
		v.code = strings.ToLower(raw)
	}
	return v, nil
}

// inRange compares a target range with a date value (FHIR R4 §3.1.1.4.2).
func (v value) inRange(from, to time.Time) bool {
	switch v.prefix {
	case "gt":
		return to.After(v.to)
	case "ge":
		return to.After(v.from)
	case "lt":
		return from.Before(v.from)
	case "le":
		return from.Before(v.to)
	case "ne":
		return from.Before(v.from) || to.After(v.to)
	}
	return !from.Before(v.from) && !to.After(v.to)
}

// dateOf matches a date or dateTime the item holds.
func dateOf(at func(it item) string) func(it item, v value) bool {
	return func(it item, v value) bool {
		from, to, ok := domain.ValueSpan(at(it))
		return ok && v.inRange(from, to)
	}
}

// stringOf matches a text of a section's value that starts with the
// search's, ignoring case.
func stringOf[T any](field func(*T) string) func(it item, v value) bool {
	return func(it item, v value) bool {
		x, ok := it.value.(*T)
		return ok && strings.HasPrefix(strings.ToLower(field(x)), v.code)
	}
}

// tokenOf matches a code without a system.
func tokenOf(code func(it item) string) func(it item, v value) bool {
	return func(it item, v value) bool { return v.code != "" && code(it) == v.code }
}

// referenceID is the id of a reference to typ: "typ/id" or a bare id.
func referenceID(typ, s string) (string, bool) {
	id := strings.TrimPrefix(s, typ+"/")
	return id, id != "" && !strings.Contains(id, "/")
}

// patientRef reads a patient reference as a customer number.
func patientRef(s string) (domain.CustomerID, bool) {
	id, ok := referenceID("Patient", s)
	if !ok {
		return 0, false
	}
	return domain.ParseCustomerPathID(id)
}

// request is a search as read from its query string.
type request struct {
	filters  []filter
	ids      []string
	count    int
	cursor   *domain.Cursor
	since    *time.Time
	customer *domain.CustomerID
	includes []string
	// none is a request nothing can match (two different patients).
	none bool
	// where are the parameters that reach the query as conditions of the
	// feed (ListQuery.Where: every type's but Patient's names and the
	// like, which are a search's).
	where []domain.Condition
	// search are the parameters that reach the query (Patient's), total
	// what _total asked, and count only the total (_summary=count).
	search []domain.Condition
	total  domain.TotalMode
	count0 bool
	sort   []domain.SortBy
	x      view
}

// parseSearch reads the query of a search on rt. An unknown parameter is
// refused (the server is strict: Prefer handling=lenient is not taken).
func parseSearch(rt *resourceType, query *fiber.Ctx) (request, error) {
	req := request{count: domain.DefaultPageSize, x: view{company: httpkit.GrantOf(query).CompanyID}}
	var err error
	params := append(slices.Clone(commonParams), rt.params...)
	query.Request().URI().QueryArgs().VisitAll(func(k, raw []byte) {
		if err != nil {
			return
		}
		err = req.read(rt, params, string(k), string(raw))
	})
	if err == nil && req.cursor != nil {
		if (domain.ListQuery{After: req.cursor, Sort: req.sort}).CheckCursor() != nil {
			return req, invalidParam("_cursor", "_cursor: not a position of this _sort (follow a next link as it was handed out)")
		}
	}
	return req, err
}

func (req *request) read(rt *resourceType, params []searchParam, name, raw string) error {
	switch name {
	case "_count":
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > domain.MaxPageSize {
			return invalidParam(name, "_count: a number from 1 to "+strconv.Itoa(domain.MaxPageSize))
		}
		req.count = n
		return nil
	case "_cursor":
		c, err := domain.ParseCursor(raw)
		if err != nil {
			return invalidParam(name, "_cursor: not a position this server handed out in a next link")
		}
		req.cursor = &c
		return nil
	case "_total":
		if !rt.searchable() {
			break
		}
		modes := map[string]domain.TotalMode{"none": domain.TotalNone, "accurate": domain.TotalAccurate, "estimate": domain.TotalEstimate, "estimated": domain.TotalEstimate}
		mode, ok := modes[raw]
		if !ok {
			return invalidParam(name, "_total: none, estimate or accurate")
		}
		req.total = mode
		return nil
	case "_sort":
		if !rt.searchable() {
			break
		}
		sort, err := domain.ParseSort(name, raw, domain.FHIRSortKeys)
		if err != nil {
			return fieldProblem(name, err)
		}
		req.sort = sort
		return nil
	case "_summary":
		if !rt.searchable() {
			break
		}
		if raw != "count" {
			return invalidParam(name, "_summary: only count is served")
		}
		req.count0, req.total = true, domain.TotalAccurate
		return nil
	case "_format":
		if !slices.Contains([]string{"json", "application/json", httpkit.MIMEFHIRJSON}, raw) {
			return &outcomeError{status: fiber.StatusNotAcceptable, code: "not-supported", text: "this server answers JSON only", reason: "not-acceptable"}
		}
		return nil
	case "_include":
		if _, ok := rt.includes[raw]; !ok {
			return invalidParam(name, "_include: "+strconv.Quote(raw)+" is not served on "+rt.name+" (see the CapabilityStatement)")
		}
		req.includes = append(req.includes, raw)
		return nil
	case "_id":
		req.ids = append(req.ids, strings.Split(raw, ",")...)
		if len(req.ids) > domain.MaxBatchIDs {
			return invalidParam(name, "_id: at most "+strconv.Itoa(domain.MaxBatchIDs)+" ids")
		}
		return nil
	case "patient", "subject":
		if !rt.patient {
			break
		}
		id, ok := patientRef(raw)
		if !ok {
			return invalidParam(name, name+": a reference to a patient, Patient/{number}")
		}
		req.none = req.none || (req.customer != nil && *req.customer != id) // two patients at once
		req.customer = &id
		return nil
	}
	base, modifier, _ := strings.Cut(name, ":")
	if i := slices.IndexFunc(params, func(p searchParam) bool { return p.name == base && p.query != nil }); i >= 0 {
		p := params[i]
		if modifier != "" && !slices.Contains(p.modifiers, modifier) {
			return invalidParam(name, name+": the modifier "+strconv.Quote(modifier)+" is not served on "+base+" (see the CapabilityStatement)")
		}
		var vals []value
		for _, part := range strings.Split(raw, ",") {
			v, err := parseValue(name, "token", part) // the raw value and, for tokens, system|code
			if err != nil {
				return err
			}
			vals = append(vals, v)
		}
		cond, err := p.query(req.x, name, modifier, vals)
		if err != nil {
			return err
		}
		if !rt.filtered() {
			req.search = append(req.search, cond)
			return nil
		}
		req.where = append(req.where, cond)
		if p.match == nil {
			return nil
		}
	}
	i := slices.IndexFunc(params, func(p searchParam) bool { return p.name == name && p.match != nil })
	if i < 0 {
		if slices.ContainsFunc(params, func(p searchParam) bool { return p.name == base }) {
			return invalidParam(name, name+": modifiers are not supported")
		}
		return invalidParam(name, name+" is not a search parameter of "+rt.name+" on this server (see the CapabilityStatement)")
	}
	p := params[i]
	f := filter{param: p}
	for _, part := range strings.Split(raw, ",") {
		v, err := parseValue(name, p.kind, part)
		if err != nil {
			return err
		}
		f.values = append(f.values, v)
	}
	if name == "_lastUpdated" {
		// The feed narrows by a lower bound; the page filters exactly, and
		// so does the query, at the second the answers spell (a condition
		// of the feed, held back like it: Patient's too, not a search's).
		if len(f.values) == 1 && (f.values[0].prefix == "ge" || f.values[0].prefix == "gt" || f.values[0].prefix == "eq") {
			since := f.values[0].from
			if req.since == nil || since.After(*req.since) {
				req.since = &since
			}
		}
		if rt.filtered() || rt.searchable() {
			c := domain.Condition{Field: domain.SearchUpdated, Op: domain.OpInstants}
			for _, v := range f.values {
				c.Instants = append(c.Instants, domain.InstantRange{Prefix: v.prefix, From: v.from, To: v.to})
			}
			req.where = append(req.where, c)
		}
	}
	req.filters = append(req.filters, f)
	return nil
}

// lastUpdated matches the object's last change (to the second, as it is answered).
func lastUpdated(it item, v value) bool {
	t := it.updated.Truncate(time.Second)
	return !t.IsZero() && v.inRange(t, t.Add(time.Second))
}

// nextLink is the link of the page after cursor: the request's own query
// with the position.
func nextLink(c *fiber.Ctx, self string, cursor string) string {
	q := url.Values{}
	c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) {
		if string(k) != "_cursor" {
			q.Add(string(k), string(v))
		}
	})
	q.Set("_cursor", cursor)
	return self + "?" + q.Encode()
}
