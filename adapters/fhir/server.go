// Package fhir is praxis's third door: a FHIR R4 view of the same data at
// /fhir/R4 (docs/integrators/fhir.md). It holds no data of its own: every
// read goes through the resource API's driving ports with the token's
// grant, so tenancy, scopes, the sync clock and the audit trail are the
// native API's. What it shares with the other doors (the bearer check, the
// audit door, the error table) comes from adapters/httpkit.
package fhir

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/ports"
)

// Base is the FHIR base path.
const Base = "/fhir/R4"

// bodyLimit bounds a body read whole.
const bodyLimit = 1 << 20

// Options: PublicURL is the base of the links the door writes (fullUrl,
// paging); empty means the request's own. TokenPath is the OAuth token
// endpoint's path, named in the discovery documents.
type Options struct {
	PublicURL      string
	TokenPath      string
	TrustedProxies []netip.Prefix
	// AuditFailures counts answers refused because their audit event could not be written.
	AuditFailures metric.Int64Counter
	// Share bounds the requests of one company that run at once (nil: no bound).
	Share *httpkit.CompanyShare
}

// Server serves the FHIR door.
type Server struct {
	auth     ports.Authorizer
	records  ports.Records
	booking  ports.Booking
	profiles ports.CompanyProfiles
	exports  ports.Exports
	views    readers
	opts     Options
	door     httpkit.AuditDoor
}

// New builds the door over the resource API's driving ports.
func New(auth ports.Authorizer, records ports.Records, files ports.Files, booking ports.Booking, profiles ports.CompanyProfiles,
	exports ports.Exports, auditor ports.Auditor, opts Options) *Server {
	s := &Server{auth: auth, records: records, booking: booking, profiles: profiles, exports: exports, opts: opts,
		views: readers{records: records, files: files}}
	s.door = httpkit.AuditDoor{Recorder: auditor, Trusted: opts.TrustedProxies, Failed: opts.AuditFailures, Reason: reasonOf, Answer: answer}
	return s
}

// Register mounts the discovery documents, readable without a token, and
// every interaction behind the bearer check.
func (s *Server) Register(app fiber.Router) {
	open := app.Group(Base, outcomes)
	open.Get("/metadata", s.capabilities)
	open.Get("/.well-known/smart-configuration", s.smartConfiguration)
	g := app.Group(Base, s.door.Audited(subjectOf), outcomes, s.guard())
	for _, method := range []string{fiber.MethodGet, fiber.MethodPost} {
		g.Add(method, "/$export", s.kickOff(false))
		g.Add(method, "/Patient/$export", s.kickOff(true))
	}
	g.Get("/$export-status/:job", s.exportStatus)
	g.Delete("/$export-status/:job", s.exportDelete)
	g.Get("/$export-file/:job/:name", httpkit.Streaming, s.exportFile)
	g.Post("/Patient/$match", s.match)
	g.Get("/:type", s.search)
	g.Get("/:type/:id", s.read)
	g.Get("/:type/:id/_history/:vid", s.vread)
	g.Post("/:type", s.create)
	g.Put("/:type/:id", s.update)
	g.Use(func(c *fiber.Ctx) error {
		return &outcomeError{status: fiber.StatusNotFound, code: "not-supported", text: "no such interaction on this server: see /fhir/R4/metadata"}
	})
}

func (s *Server) guard() fiber.Handler {
	return httpkit.BearerCheck{Authenticate: s.authenticate, BodyLimit: bodyLimit, Refuse: refuse, Share: s.opts.Share}.Handler
}

func (s *Server) authenticate(ctx context.Context, token string) (domain.Grant, ratelimit.State, error) {
	return s.auth.Authenticate(ctx, token)
}

// base is the absolute FHIR base URL links are written against.
func (s *Server) base(c *fiber.Ctx) string { return httpkit.PublicBase(c, s.opts.PublicURL) + Base }

// outcomeError is an answer already worded as an OperationOutcome issue.
type outcomeError struct {
	status int
	code   string // the issue type (FHIR R4 IssueType)
	text   string
	// reason is the audit event's reason (the native problem type), when not code.
	reason string
	// expression names the parameter or element the issue is about.
	expression string
}

func (e *outcomeError) Error() string { return e.text }

// invalidParam refuses a search parameter (its name in expression).
func invalidParam(name, text string) error {
	return &outcomeError{status: fiber.StatusBadRequest, code: "invalid", text: text, reason: "invalid-parameter", expression: name}
}

type reasonKey struct{}

// outcomes answers every error of the door as an OperationOutcome.
func outcomes(c *fiber.Ctx) error {
	if err := c.Next(); err != nil {
		return answer(c, err)
	}
	return nil
}

// answer words err as an OperationOutcome with the status the doors'
// table gives it (httpkit.Problems): the same status as the native twin.
func answer(c *fiber.Ctx, err error) error {
	oe := outcomeOf(err)
	var stale *domain.StaleVersion
	if errors.As(err, &stale) {
		c.Set(fiber.HeaderETag, `W/"`+strconv.FormatInt(stale.Current, 10)+`"`)
		oe.text = "the resource has changed since the version If-Match names: its current version is " + strconv.FormatInt(stale.Current, 10)
	}
	if oe.status == fiber.StatusServiceUnavailable || oe.status == fiber.StatusInsufficientStorage {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(domain.RetryAfterUnavailable))
	}
	reason := oe.reason
	if reason == "" {
		reason = oe.code
	}
	c.Locals(reasonKey{}, reason)
	severity := "error"
	if oe.status >= 500 {
		severity = "fatal"
	}
	issue := map[string]any{"severity": severity, "code": oe.code, "diagnostics": oe.text}
	if oe.expression != "" {
		issue["expression"] = []string{oe.expression}
	}
	return send(c.Status(oe.status), map[string]any{"resourceType": "OperationOutcome", "issue": []any{issue}})
}

// outcomeOf is the issue err is answered with: the door's own refusals as
// they are, a domain error as the doors' table words it, anything else 500.
func outcomeOf(err error) *outcomeError {
	if oe := (&outcomeError{}); errors.As(err, &oe) {
		return oe
	}
	if p, ok := httpkit.ProblemOf(err); ok {
		oe := &outcomeError{status: p.Status, code: issueType(p.Status), text: p.Detail, reason: p.Type}
		if fields, ok := domain.AsFieldErrors(err); ok && len(fields) > 0 {
			oe.text = fields[0].Field + " " + fields[0].Message
			oe.expression = fields[0].Field
		}
		return oe
	}
	if fe := (&fiber.Error{}); errors.As(err, &fe) {
		return &outcomeError{status: fe.Code, code: issueType(fe.Code), text: fe.Message}
	}
	return &outcomeError{status: fiber.StatusInternalServerError, code: "exception", text: "internal error", reason: "internal-error"}
}

// StatusOf is the status the FHIR door answers err with, in an OperationOutcome.
func StatusOf(err error) int { return outcomeOf(err).status }

// issueType is the OperationOutcome issue type of an HTTP status.
func issueType(status int) string {
	switch status {
	case fiber.StatusUnauthorized:
		return "login"
	case fiber.StatusForbidden:
		return "forbidden"
	case fiber.StatusNotFound:
		return "not-found"
	case fiber.StatusConflict:
		return "conflict"
	case fiber.StatusPreconditionFailed:
		return "conflict"
	case fiber.StatusTooManyRequests:
		return "throttled"
	case fiber.StatusServiceUnavailable:
		return "transient"
	case fiber.StatusRequestEntityTooLarge:
		return "too-costly"
	}
	if status >= 500 {
		return "exception"
	}
	return "invalid"
}

// refuse answers a refusal of the bearer check: its challenge, and the
// OAuth error as an OperationOutcome.
func refuse(c *fiber.Ctx, r httpkit.Refusal) error {
	httpkit.Challenge(c, r)
	reason := r.Code
	if reason == "" {
		reason = "unauthorized"
	}
	return &outcomeError{status: r.Status, code: issueType(r.Status), text: r.Description, reason: reason}
}

// reasonOf is the audit event's reason for a refusal: what answer kept.
func reasonOf(c *fiber.Ctx, status int) string {
	if status < 400 {
		return ""
	}
	r, _ := c.Locals(reasonKey{}).(string)
	return r
}

// send answers v as application/fhir+json.
func send(c *fiber.Ctx, v any) error {
	body, err := c.App().Config().JSONEncoder(v)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, httpkit.MIMEFHIRJSON+"; charset=utf-8")
	return c.Send(body)
}

// Audit actions of the door (docs/contract.md §11): the FHIR interaction.
func subjectOf(c *fiber.Ctx) (httpkit.Subject, bool) {
	g := httpkit.GrantOf(c)
	if g.ClientID == "" {
		return httpkit.Subject{}, false
	}
	s := httpkit.Subject{Company: g.CompanyID, Agent: audit.Agent{Type: audit.AgentClient, ID: string(g.ClientID)}}
	segs := strings.Split(strings.Trim(strings.TrimPrefix(c.Path(), Base), "/"), "/")
	if strings.HasPrefix(segs[0], "$export") || (len(segs) > 1 && segs[1] == "$export") {
		// Bulk Data: the job is the object (a file's: job/name); the
		// customers of each file are named by the event of its writing.
		s.Section, s.Action = "fhir", audit.ActionFHIRExport
		if len(segs) > 1 && segs[1] != "$export" {
			s.Object = strings.Join(segs[1:], "/")
		}
		return s, true
	}
	rt := resourceByName(segs[0])
	s.Section = "fhir"
	if rt != nil {
		s.Section = rt.section
	}
	switch {
	case len(segs) == 2 && segs[1] == "$match":
		s.Action = audit.ActionFHIRMatch // the event names the candidates answered
	case c.Method() == fiber.MethodPost:
		s.Action = audit.ActionFHIRCreate
	case c.Method() == fiber.MethodPut:
		s.Action = audit.ActionFHIRUpdate
		s.Object = segs[min(1, len(segs)-1)]
	case len(segs) == 1:
		s.Action = audit.ActionFHIRSearch
	default:
		s.Action = audit.ActionFHIRRead
		s.Object = segs[1]
	}
	if rt != nil && rt.name == "Patient" && len(segs) >= 2 {
		if id, ok := domain.ParseCustomerPathID(segs[1]); ok {
			s.Candidates = append(s.Candidates, id)
		}
	}
	for _, p := range []string{"patient", "subject"} {
		if id, ok := patientRef(c.Query(p)); ok {
			s.Candidates = append(s.Candidates, id)
		}
	}
	return s, true
}
