package fhir

import (
	"mime"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
)

// served is the resource type a path names, or a 404 outcome.
func served(c *fiber.Ctx) (*resourceType, error) {
	rt := resourceByName(c.Params("type"))
	if rt == nil {
		return nil, &outcomeError{status: fiber.StatusNotFound, code: "not-supported",
			text: strconv.Quote(c.Params("type")) + " is not a resource type this server serves (see /fhir/R4/metadata)", reason: "unknown-type"}
	}
	return rt, nil
}

// read answers one resource, with its version as a weak ETag; a client
// that holds that version (If-None-Match) gets 304.
func (s *Server) read(c *fiber.Ctx) error {
	rt, err := served(c)
	if err != nil {
		return err
	}
	grant := httpkit.GrantOf(c)
	id := c.Params("id")
	if !validID(id) {
		return &outcomeError{status: fiber.StatusBadRequest, code: "invalid", text: "the id is not a FHIR id ([A-Za-z0-9.-]{1,64})", reason: "invalid-id"}
	}
	if rt.section == "" {
		if id != grant.CompanyID.String() || c.Params("vid") != "" {
			return domain.ErrNotFound
		}
		company, err := s.company(c)
		if err != nil {
			return err
		}
		return send(c, organization(company))
	}
	if rt.slots {
		if c.Params("vid") != "" {
			return domain.ErrNotFound
		}
		return s.slotRead(c, id)
	}
	rd := s.views.of(rt)
	if !rd.validID(id) {
		return domain.ErrNotFound
	}
	if rt.binary {
		if c.Params("vid") != "" {
			return domain.ErrNotFound
		}
		return s.binary(c, id)
	}
	it, err := rd.get(c.UserContext(), grant, id)
	if err != nil {
		return err
	}
	if vid := c.Params("vid"); vid != "" && vid != strconv.FormatInt(it.version, 10) {
		return &outcomeError{status: fiber.StatusNotFound, code: "not-found", reason: "not-found",
			text: "only the current version is kept: " + strconv.FormatInt(it.version, 10)}
	}
	etag := `W/"` + strconv.FormatInt(it.version, 10) + `"`
	c.Set(fiber.HeaderETag, etag)
	cond, err := domain.ParsePrecondition("If-None-Match", c.Get(fiber.HeaderIfNoneMatch), true)
	if err != nil {
		return err
	}
	if cond.Sent() && cond.Matches(it.version) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	return send(c, rt.toFHIR(view{company: grant.CompanyID}, it))
}

// binary answers a file's bytes, as the native download does: its media
// type as sniffed, never rendered by a browser.
func (s *Server) binary(c *fiber.Ctx, id string) error {
	grant := httpkit.GrantOf(c)
	f, err := s.views.files.Get(c.UserContext(), grant, id)
	if err != nil {
		return err
	}
	body, err := s.views.files.Open(c.UserContext(), grant, f, 0, -1)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, f.ContentType)
	c.Set(fiber.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	c.Set(fiber.HeaderETag, `W/"`+strconv.FormatInt(f.Version, 10)+`"`)
	c.Response().SetBodyStream(body, int(f.Size)) // fasthttp closes body once it is sent
	return nil
}

// vread is a read of one version (FHIR's vread): the current one only,
// for a write's Location; an older version is not kept.
func (s *Server) vread(c *fiber.Ctx) error { return s.read(c) }

// nativeID is whether id has the form of the kind's ids.
func nativeID(kind *domain.Kind, id string) bool {
	if kind.NumericIDs() {
		_, ok := domain.ParseCustomerPathID(id)
		return ok
	}
	return domain.ValidObjectID(id)
}

// validID is FHIR's id type.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	return strings.IndexFunc(id, func(r rune) bool {
		return (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '.'
	}) < 0
}

// company is the company, for a grant that may read it (an Organization).
func (s *Server) company(c *fiber.Ctx) (domain.Company, error) {
	grant := httpkit.GrantOf(c)
	if err := grant.Require(domain.ScopeCompanyRead); err != nil {
		return domain.Company{}, err
	}
	return s.profiles.Profile(c.UserContext(), grant.CompanyID)
}

// search answers a searchset Bundle: the matches in the order of the sync
// feed, paged by next links that carry the feed's position, so that a
// client paging to the end while others write misses nothing and sees
// nothing twice.
func (s *Server) search(c *fiber.Ctx) error {
	rt, err := served(c)
	if err != nil {
		return err
	}
	if rt.binary {
		return &outcomeError{status: fiber.StatusNotFound, code: "not-supported", reason: "unknown-type",
			text: "a Binary is read by its id only: search DocumentReference"}
	}
	if rt.slots {
		return s.slotSearch(c)
	}
	req, err := parseSearch(rt, c)
	if err != nil {
		return err
	}
	if rt.searchable() && len(req.ids) > 0 { // ids are one more condition of the query
		req.search = append(req.search, domain.Condition{Field: domain.SearchID, Op: domain.OpEqual, Values: req.ids})
		req.ids = nil
	}
	if rt.filtered() && len(rt.then) == 0 && len(req.ids) > 0 { // likewise, on the section's ids (no match in memory)
		valid := slices.DeleteFunc(slices.Clone(req.ids), func(id string) bool { return !s.views.of(rt).validID(id) })
		req.where = append(req.where, domain.Condition{Field: domain.SearchID, Op: domain.OpEqual, Values: valid})
		req.ids = nil
	}
	grant := httpkit.GrantOf(c)
	self := s.base(c) + "/" + rt.name
	x := view{company: grant.CompanyID}
	var matches []item
	var total *int64
	next := ""
	switch {
	case rt.section == "":
		company, err := s.company(c)
		if err != nil {
			return err
		}
		entries := []any{}
		if (len(req.ids) == 0 || slices.Contains(req.ids, grant.CompanyID.String())) && matchesAll(item{updated: company.UpdatedAt}, req.filters) {
			entries = append(entries, entry(self, organization(company), "match"))
		}
		return send(c, bundle(c, self, entries, ""))
	case req.none:
	case len(req.ids) > 0:
		matches, err = s.byID(c, rt, req)
	default:
		matches, next, total, err = s.scan(c, rt, req)
	}
	if err != nil {
		return err
	}
	if req.count0 { // _summary=count: the total alone
		b := bundle(c, self, []any{}, "")
		b["total"] = total
		delete(b, "entry")
		return send(c, b)
	}
	entries := make([]any, 0, len(matches))
	for _, it := range matches {
		entries = append(entries, entry(self, rt.toFHIR(x, it), "match"))
	}
	included, err := s.include(c, rt, req, matches)
	if err != nil {
		return err
	}
	entries = append(entries, included...)
	b := bundle(c, self, entries, next)
	if total != nil {
		b["total"] = *total
	}
	return send(c, b)
}

// byID reads the objects among the ids asked for, filtered by the other parameters.
func (s *Server) byID(c *fiber.Ctx, rt *resourceType, req request) ([]item, error) {
	rd := s.views.of(rt)
	ids := make([]string, 0, len(req.ids))
	for _, id := range req.ids {
		if rd.validID(id) { // no object has any other
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	items, err := rd.batch(c.UserContext(), httpkit.GrantOf(c), ids)
	if err != nil {
		return nil, err
	}
	var out []item
	for _, it := range items {
		if matchesAll(it, req.filters) && (req.customer == nil || (it.patient != nil && *it.patient == *req.customer)) {
			out = append(out, it)
		}
	}
	return out, nil
}

// scan reads the feed from the request's position until the page is full
// or the feed ends; next is the position after the last object read, ""
// at the end of the feed. Every parameter is in the query, so the
// matchers only confirm what it chose — but for the names of the staff
// and the catalogue (a few hundred objects at most, read whole if need be)
// and a report's rows (its other rows come along with a matching one).
func (s *Server) scan(c *fiber.Ctx, rt *resourceType, req request) (matches []item, next string, total *int64, err error) {
	rd := s.views.of(rt)
	q := domain.ListQuery{After: req.cursor, UpdatedSince: req.since, Customer: req.customer, Where: req.where, Search: req.search, Total: req.total, Sort: req.sort}
	for {
		q.Limit = req.count - len(matches)
		if req.count0 { // the total alone: no object read, no patient named in the audit event
			q.Limit = 0
		}
		page, err := rd.list(c.UserContext(), httpkit.GrantOf(c), q)
		if err != nil {
			return nil, "", nil, err
		}
		if page.total != nil {
			total, q.Total = page.total, domain.TotalNone // counted once
		}
		if req.count0 {
			return nil, "", total, nil
		}
		if err := decodeAll(page.items); err != nil {
			return nil, "", nil, err
		}
		for _, it := range page.items {
			if matchesAll(it, req.filters) {
				matches = append(matches, it)
			}
		}
		if !page.hasMore {
			return matches, "", total, nil
		}
		cursor, err := domain.ParseCursor(page.next)
		if err != nil {
			return nil, "", nil, err
		}
		q.After = &cursor
		if len(matches) >= req.count { // more: a report whose rows outnumber the page (rows.go)
			break
		}
	}
	return matches, q.After.Encode(), total, nil
}

// include adds the resources the _include parameters name: the patients
// of the matches, each once.
func (s *Server) include(c *fiber.Ctx, rt *resourceType, req request, matches []item) ([]any, error) {
	var out []any
	x := view{company: httpkit.GrantOf(c).CompanyID}
	for _, inc := range req.includes {
		if rt.includes[inc] == includeRows { // a report's rows, read with it
			observations := resourceByName("Observation")
			for _, it := range matches {
				for _, row := range rowsOf(it) {
					out = append(out, entry(s.base(c)+"/Observation", observations.toFHIR(x, row), "include"))
				}
			}
			continue
		}
		var ids []string
		for _, it := range matches {
			if id := it.patientID(); id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		patients := resourceByName("Patient")
		items, err := s.views.of(patients).batch(c.UserContext(), httpkit.GrantOf(c), ids)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out = append(out, entry(s.base(c)+"/Patient", patients.toFHIR(x, it), "include"))
		}
	}
	return out, nil
}

// entry is one resource of a searchset.
func entry(typeURL string, r resource, mode string) map[string]any {
	return map[string]any{"fullUrl": typeURL + "/" + r.resourceID(), "resource": r, "search": map[string]any{"mode": mode}}
}

// bundle is a searchset of entries with its self link and, when more
// follow, its next link.
func bundle(c *fiber.Ctx, self string, entries []any, next string) map[string]any {
	links := []any{map[string]any{"relation": "self", "url": self + queryOf(c)}}
	if next != "" {
		links = append(links, map[string]any{"relation": "next", "url": nextLink(c, self, next)})
	}
	return map[string]any{"resourceType": "Bundle", "type": "searchset", "link": links, "entry": entries}
}

// queryOf is the request's query string with its "?", or "".
func queryOf(c *fiber.Ctx) string {
	if q := c.Request().URI().QueryString(); len(q) > 0 {
		return "?" + string(q)
	}
	return ""
}
