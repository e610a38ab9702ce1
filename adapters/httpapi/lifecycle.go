package httpapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/api"
	"github.com/praxis-health/praxis/domain/release"
	"github.com/praxis-health/praxis/ports"
)

// Lifecycle puts the contract's dates on the wire (docs/contract.md §10):
// the release on every answer; Deprecation (RFC 9745), Sunset (RFC 8594)
// and Link rel="deprecation" on every answer that touches something the
// document declares deprecated; 410 for an operation removed after its
// sunset. Calls that touch something deprecated are counted per client.
type Lifecycle struct {
	release string
	routes  []*routeDeprecation
	removed []removedOperation
	calls   ports.DeprecatedCalls
	counted metric.Int64Counter
	log     *slog.Logger
}

// routeDeprecation is what one operation of the document declares deprecated.
type routeDeprecation struct {
	operation string           // "GET /api/oauth/v2/resource/company", as the document names it
	counted   metric.AddOption // the deprecated calls' series of the operation
	method    string
	path      *regexp.Regexp
	always    release.Deprecation            // the operation itself: every answer
	answers   map[int]release.Deprecation    // a field of the schema of a successful answer, by status
	query     map[string]release.Deprecation // parameters, when sent
	body      map[string]release.Deprecation // top-level body fields, when sent
}

// removedOperation is an operation the notes say was removed at its sunset.
type removedOperation struct {
	method string
	path   *regexp.Regexp
	note   string
	sunset string
}

// NewLifecycle reads the served document and this build's release notes.
func NewLifecycle(doc *OpenAPI, calls ports.DeprecatedCalls, tel httpkit.Telemetry) (*Lifecycle, error) {
	return newLifecycle(doc.document, api.Releases(), calls, tel)
}

func newLifecycle(document []byte, releases []release.Release, calls ports.DeprecatedCalls, tel httpkit.Telemetry) (*Lifecycle, error) {
	tel = tel.WithDefaults()
	routes, err := deprecationsOf(document)
	if err != nil {
		return nil, err
	}
	l := &Lifecycle{release: releases[0].Date, routes: routes, calls: calls, log: tel.Logger,
		counted: httpkit.Must(tel.Meter.Meter(instrumentation).Int64Counter("praxis.api.deprecated_calls",
			metric.WithDescription("Answers that carried a Deprecation header, by operation")))}
	for _, r := range releases {
		for _, c := range r.Changes {
			if c.Kind != release.KindRemoved || c.Check != "" {
				continue
			}
			for _, op := range c.Operations {
				method, path, _ := strings.Cut(op, " ")
				l.removed = append(l.removed, removedOperation{method: method, path: pathPattern(path), note: r.Date, sunset: c.Sunset})
			}
		}
	}
	return l, nil
}

// Handle dates every answer with the release and answers a removed
// operation 410; the host runs it before every door.
func (l *Lifecycle) Handle(c *fiber.Ctx) error {
	c.Set(releaseHeader, l.release)
	for _, r := range l.removed {
		if r.method == c.Method() && r.path.MatchString(c.Path()) {
			c.Set("Sunset", sunsetHeader(r.sunset))
			c.Append(fiber.HeaderLink, `<`+releaseURL(r.note)+`>; rel="sunset"; type="application/json"`)
			return &problemError{doc: problemDoc{Type: "removed", Title: "Gone", Status: fiber.StatusGone,
				Detail: fmt.Sprintf("this operation was removed at its sunset on %s; the release notes of %s tell what replaces it: %s",
					r.sunset, r.note, releaseURL(r.note))}}
		}
	}
	err := c.Next()
	method := c.Method()
	if method == fiber.MethodHead {
		method = fiber.MethodGet
	}
	var d release.Deprecation
	for _, rd := range l.routes {
		if rd.method == method && rd.path.MatchString(c.Path()) {
			d = rd.of(c, err == nil)
			if !d.Sunset.IsZero() {
				l.count(c, rd)
			}
			break
		}
	}
	if d.Sunset.IsZero() {
		return err
	}
	c.Set("Deprecation", d.DeprecationHeader())
	c.Set("Sunset", d.SunsetHeader())
	c.Append(fiber.HeaderLink, `<`+releaseURL(d.Note)+`>; rel="deprecation"; type="application/json"`)
	return err
}

// of is the deprecation this request and its answer touch, the earliest
// to end. Only a successful answer is judged by its schema: the error
// answers' schemas (Problem) hold nothing deprecated.
func (rd *routeDeprecation) of(c *fiber.Ctx, succeeded bool) release.Deprecation {
	d := rd.always
	if succeeded {
		d = d.Earlier(rd.answers[c.Response().StatusCode()])
	}
	for name, q := range rd.query {
		if c.Context().QueryArgs().Has(name) {
			d = d.Earlier(q)
		}
	}
	if len(rd.body) > 0 {
		var fields map[string]json.RawMessage
		if body, err := readSmallBody(c); err == nil && json.Unmarshal(body, &fields) == nil {
			for name, f := range rd.body {
				if _, sent := fields[name]; sent {
					d = d.Earlier(f)
				}
			}
		}
	}
	return d
}

// count tells the metric and, for a client's call, the store. A count that
// cannot be written is logged; the answer stands.
// The server's store is a tally in memory (app.tallyDeprecatedCalls),
// which never waits on the database.
func (l *Lifecycle) count(c *fiber.Ctx, rd *routeDeprecation) {
	ctx := c.UserContext()
	l.counted.Add(ctx, 1, rd.counted)
	g := grantOf(c)
	if g.ClientID == "" || l.calls == nil {
		return
	}
	if err := l.calls.Count(ctx, g.CompanyID, g.ClientID, rd.operation, time.Now(), 1); err != nil {
		l.log.WarnContext(ctx, "count a deprecated call", "operation", rd.operation, "error", err)
	}
}

func sunsetHeader(date string) string {
	t, err := time.Parse(release.DateLayout, date)
	if err != nil {
		return date
	}
	return release.Deprecation{Sunset: t}.SunsetHeader()
}

// deprecationsOf reads, for every operation of the document, what it
// declares deprecated: the operation, its parameters, its request body's
// fields, and any field its answers' schemas hold.
func deprecationsOf(document []byte) ([]*routeDeprecation, error) {
	var doc object
	if err := json.Unmarshal(document, &doc); err != nil {
		return nil, err
	}
	w := docWalker{doc: doc}
	var out []*routeDeprecation
	paths, _ := doc["paths"].(object)
	for path, item := range paths {
		ops, _ := item.(object)
		for method, op := range ops {
			o, ok := op.(object)
			if !ok || method == "parameters" {
				continue
			}
			operation := strings.ToUpper(method) + " " + path
			rd := &routeDeprecation{operation: operation, method: strings.ToUpper(method), path: pathPattern(path),
				counted: metric.WithAttributeSet(attribute.NewSet(attribute.String("operation", operation))),
				answers: map[int]release.Deprecation{}, query: map[string]release.Deprecation{}, body: map[string]release.Deprecation{}}
			var err error
			if rd.always, err = w.own(o); err != nil {
				return nil, fmt.Errorf("%s: %w", operation, err)
			}
			params, _ := o["parameters"].([]any)
			for _, p := range params {
				param := w.resolve(p)
				if d, err := w.own(param); err != nil {
					return nil, fmt.Errorf("%s: %w", operation, err)
				} else if !d.Sunset.IsZero() && param["in"] == "query" {
					rd.query[param["name"].(string)] = d
				}
			}
			if body := w.jsonSchema(o["requestBody"]); body != nil {
				props, _ := body["properties"].(object)
				for name, p := range props {
					if d, err := w.own(w.resolve(p)); err != nil {
						return nil, fmt.Errorf("%s: body %s: %w", operation, name, err)
					} else if !d.Sunset.IsZero() {
						rd.body[name] = d
					}
				}
			}
			responses, _ := o["responses"].(object)
			for status, r := range responses {
				d, err := w.within(w.jsonSchema(r), map[string]bool{})
				if err != nil {
					return nil, fmt.Errorf("%s: response %s: %w", operation, status, err)
				}
				if code, err := strconv.Atoi(status); err == nil && !d.Sunset.IsZero() {
					rd.answers[code] = d
				}
			}
			if !rd.always.Sunset.IsZero() || len(rd.answers) > 0 || len(rd.query) > 0 || len(rd.body) > 0 {
				out = append(out, rd)
			}
		}
	}
	return out, nil
}

// pathPattern matches the request paths of a document path: {id} is one segment.
func pathPattern(path string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^/]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`) + "$")
}

// docWalker reads schemas of one document, following its $refs.
type docWalker struct{ doc object }

// resolve follows a local $ref ("#/components/schemas/X") to its object.
func (w docWalker) resolve(v any) object {
	o, _ := v.(object)
	ref, ok := o["$ref"].(string)
	if !ok {
		return o
	}
	var at any = w.doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := at.(object)
		at = m[part]
	}
	resolved, _ := at.(object)
	return resolved
}

// jsonSchema is the application/json schema of a request body or response.
func (w docWalker) jsonSchema(v any) object {
	content, _ := w.resolve(v)["content"].(object)
	for media, m := range content {
		if strings.HasPrefix(media, "application/json") || strings.HasSuffix(media, "+json") {
			mt, _ := m.(object)
			return w.resolve(mt["schema"])
		}
	}
	return nil
}

// own is the deprecation o declares of itself; the zero one when none.
func (w docWalker) own(o object) (release.Deprecation, error) {
	if o["deprecated"] != true {
		return release.Deprecation{}, nil
	}
	since, _ := o["x-deprecated-at"].(string)
	sunset, _ := o["x-sunset"].(string)
	return release.ParseDeprecation(since, sunset)
}

// within is the earliest-ending deprecation of schema or anything in it.
func (w docWalker) within(schema object, seen map[string]bool) (release.Deprecation, error) {
	if schema == nil {
		return release.Deprecation{}, nil
	}
	d, err := w.own(schema)
	if err != nil {
		return d, err
	}
	var children []any
	props, _ := schema["properties"].(object)
	for _, p := range props {
		children = append(children, p)
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		list, _ := schema[key].([]any)
		children = append(children, list...)
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if v, ok := schema[key].(object); ok {
			children = append(children, v)
		}
	}
	for _, child := range children {
		if o, ok := child.(object); ok {
			if ref, ok := o["$ref"].(string); ok {
				if seen[ref] {
					continue
				}
				seen[ref] = true
			}
			inner, err := w.within(w.resolve(child), seen)
			if err != nil {
				return d, err
			}
			d = d.Earlier(inner)
		}
	}
	return d, nil
}
