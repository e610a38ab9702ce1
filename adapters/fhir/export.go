package fhir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/bulk"
	"github.com/praxis-health/praxis/ports"
)

// FHIR Bulk Data Access (the asynchronous pattern): a kick-off answers 202
// with the status URL; the status is 202 with X-Progress while the job
// runs, then the manifest; its files are downloaded with the token; DELETE
// cancels. The jobs run in app/usecase (Exports); this file is the door
// and the rendering of each page of resources.

// ExportSource renders the resources of an export (ports.ExportSource):
// the same table, mappings and grant as the searches.
type ExportSource struct {
	read     readers
	profiles ports.CompanyProfiles
}

var _ ports.ExportSource = (*ExportSource)(nil)

// NewExportSource renders exports through the resource API's driving ports.
func NewExportSource(records ports.Records, files ports.Files, profiles ports.CompanyProfiles) *ExportSource {
	return &ExportSource{read: readers{records: records, files: files}, profiles: profiles}
}

// ExportTypes are the table's types: each with its read scope, and
// whether it is in the patient compartment.
func (e *ExportSource) ExportTypes() []ports.ExportType {
	out := make([]ports.ExportType, 0, len(resources))
	for _, rt := range resources {
		if rt.binary || rt.slots { // a file's bytes (its DocumentReference is exported), and computed slots
			continue
		}
		scope := domain.ScopeCompanyRead
		if rt.section != "" {
			scope = domain.ReadScope(rt.section)
		}
		out = append(out, ports.ExportType{Name: rt.name, Scope: scope, Patient: rt.name == "Patient" || rt.patient})
	}
	return out
}

// ExportPage reads one page of typ's feed; its Render maps and encodes
// it, one resource a line. The Organization (the company, one resource)
// is read whole when it changed at or after since.
func (e *ExportSource) ExportPage(ctx context.Context, grant domain.Grant, typ string, q domain.ListQuery, since *time.Time) (ports.ExportPage, error) {
	rt := resourceByName(typ)
	if rt == nil {
		return ports.ExportPage{}, domain.ErrNotFound
	}
	if rt.section == "" {
		if err := grant.Require(domain.ScopeCompanyRead); err != nil {
			return ports.ExportPage{}, err
		}
		company, err := e.profiles.Profile(ctx, grant.CompanyID)
		if err != nil || (since != nil && company.UpdatedAt.Before(*since)) {
			return ports.ExportPage{}, err // nothing to write (no Render)
		}
		return ports.ExportPage{Render: func(w *bytes.Buffer) (int, error) { return 1, lineEncoder(w).Encode(organization(company)) }}, nil
	}
	page, err := e.read.of(rt).list(ctx, grant, q)
	if err != nil {
		return ports.ExportPage{}, err
	}
	next, err := domain.ParseCursor(page.next)
	if err != nil {
		return ports.ExportPage{}, err
	}
	render := func(w *bytes.Buffer) (int, error) {
		x := view{company: grant.CompanyID}
		enc := lineEncoder(w)
		if err := decodeAll(page.items); err != nil { // here, beside the other pages' rendering
			return 0, err
		}
		for _, it := range page.items {
			if err := enc.Encode(rt.toFHIR(x, it)); err != nil {
				return 0, err
			}
		}
		return len(page.items), nil
	}
	return ports.ExportPage{Next: next, HasMore: page.hasMore, Render: render}, nil
}

// lineEncoder appends values to w, each one line of JSON: goccy/go-json,
// whose bytes are encoding/json's (TestExportLinesAreEncodingJSONs) in
// three quarters of its time (BenchmarkExportRender).
func lineEncoder(w *bytes.Buffer) *gojson.Encoder {
	enc := gojson.NewEncoder(w) // Encode ends the line with '\n'
	enc.SetEscapeHTML(false)
	return enc
}

// exportRequest is a kick-off as the door reads it. The IG's parameters
// other than _type, _since and _outputFormat (_typeFilter, _elements,
// patient, includeAssociatedData) are refused.
type exportRequest ports.ExportRequest

// kickOff starts an export of the system, or of the patient compartment:
// GET with the parameters in the query, or POST with them in the query or
// in a Parameters body (the Bulk Data IG's two forms).
func (s *Server) kickOff(patients bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !strings.Contains(strings.ToLower(c.Get("Prefer")), "respond-async") {
			httpkit.DrainOrClose(c, httpkit.Body(c))
			return &outcomeError{status: fiber.StatusBadRequest, code: "invalid", reason: "respond-async-required",
				text: "an export is asynchronous: the kick-off needs the header Prefer: respond-async"}
		}
		var params [][2]string
		c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) { params = append(params, [2]string{string(k), string(v)}) })
		if c.Method() == fiber.MethodPost {
			body, err := kickOffBody(c)
			if err != nil {
				return err
			}
			params = append(params, body...)
		}
		r := exportRequest{Patients: patients, Request: s.base(c) + strings.TrimPrefix(c.OriginalURL(), Base)}
		for _, p := range params {
			if err := r.read(p[0], p[1]); err != nil {
				return err
			}
		}
		job, err := s.exports.KickOff(c.UserContext(), httpkit.GrantOf(c), ports.ExportRequest(r))
		if errors.Is(err, bulk.ErrTooManyJobs) {
			c.Set(fiber.HeaderRetryAfter, "60")
			return &outcomeError{status: fiber.StatusTooManyRequests, code: "throttled", text: err.Error(), reason: "too-many-exports"}
		}
		if err != nil {
			return atParam(err)
		}
		c.Set(fiber.HeaderContentLocation, s.base(c)+"/$export-status/"+job.ID.String())
		return send(c.Status(fiber.StatusAccepted), map[string]any{"resourceType": "OperationOutcome", "issue": []any{map[string]any{
			"severity": "information", "code": "informational", "diagnostics": "the export is accepted: poll its status at the Content-Location",
		}}})
	}
}

// kickOffBody reads a POST kick-off's Parameters body, if it has one.
func kickOffBody(c *fiber.Ctx) ([][2]string, error) {
	body, err := httpkit.ReadBody(c, bodyLimit)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return nil, err
	}
	var p struct {
		ResourceType string `json:"resourceType"`
		Parameter    []struct {
			Name         string  `json:"name"`
			ValueString  *string `json:"valueString"`
			ValueInstant *string `json:"valueInstant"`
			ValueCode    *string `json:"valueCode"`
		} `json:"parameter"`
	}
	if json.Unmarshal(body, &p) != nil || p.ResourceType != "Parameters" {
		return nil, &outcomeError{status: fiber.StatusBadRequest, code: "structure", reason: "malformed-json",
			text: "the body of a kick-off is a Parameters resource in JSON, or nothing"}
	}
	var out [][2]string
	for _, x := range p.Parameter {
		v := x.ValueString
		for _, alt := range []*string{x.ValueInstant, x.ValueCode} {
			if v == nil {
				v = alt
			}
		}
		if v == nil {
			return nil, invalidParam(x.Name, strconv.Quote(x.Name)+" needs a valueString, valueInstant or valueCode")
		}
		out = append(out, [2]string{x.Name, *v})
	}
	return out, nil
}

// read takes one kick-off parameter into r.
func (r *exportRequest) read(name, raw string) error {
	switch name {
	case "_type":
		for t := range strings.SplitSeq(raw, ",") {
			if t = strings.TrimSpace(t); t == "" {
				return invalidParam(name, "_type names an empty type")
			}
			r.Types = append(r.Types, t)
		}
	case "_since":
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil || r.Since != nil {
			return invalidParam(name, "_since must be one FHIR instant with its time zone, e.g. 2026-11-26T10:00:00.000Z")
		}
		r.Since = &t
	case "_outputFormat":
		if raw != bulk.MediaType && raw != "application/ndjson" && raw != "ndjson" {
			return invalidParam(name, "_outputFormat: this server writes application/fhir+ndjson only")
		}
	default:
		return invalidParam(name, strconv.Quote(name)+" is not a parameter of $export this server serves (_type, _since, _outputFormat)")
	}
	return nil
}

// atParam words a refusal of the kick-off's types at the parameter.
func atParam(err error) error {
	if fields, ok := domain.AsFieldErrors(err); ok && len(fields) > 0 {
		return invalidParam(fields[0].Field, fields[0].Message)
	}
	return err
}

// exportJob is the job the path names, the grant's client's own.
func (s *Server) exportJob(c *fiber.Ctx) (bulk.Job, error) {
	id, err := uuid.Parse(c.Params("job"))
	if err != nil {
		return bulk.Job{}, domain.ErrNotFound
	}
	return s.exports.Status(c.UserContext(), httpkit.GrantOf(c), id)
}

// exportStatus answers 202 with the progress while the job runs, the
// manifest once it completed, an OperationOutcome if it failed.
func (s *Server) exportStatus(c *fiber.Ctx) error {
	job, err := s.exportJob(c)
	if err != nil {
		return err
	}
	switch job.State {
	case bulk.Completed:
	case bulk.Failed:
		return &outcomeError{status: fiber.StatusInternalServerError, code: "exception", text: "the export failed: " + job.Error, reason: "export-failed"}
	default:
		c.Set("X-Progress", job.Progress)
		c.Set(fiber.HeaderRetryAfter, "2")
		return c.SendStatus(fiber.StatusAccepted)
	}
	output := make([]any, 0, len(job.Files))
	for _, f := range job.Files {
		output = append(output, map[string]any{"type": f.Type, "url": s.base(c) + "/$export-file/" + job.ID.String() + "/" + f.Name, "count": f.Count})
	}
	c.Set(fiber.HeaderExpires, job.ExpiresAt.UTC().Format(http.TimeFormat))
	return c.JSON(map[string]any{
		"transactionTime":     job.TransactionTime.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		"request":             job.Request,
		"requiresAccessToken": true,
		"output":              output,
		"error":               []any{},
	})
}

// exportDelete cancels a running export or removes a completed one's files.
func (s *Server) exportDelete(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("job"))
	if err != nil {
		return domain.ErrNotFound
	}
	if err := s.exports.Delete(c.UserContext(), httpkit.GrantOf(c), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusAccepted)
}

// exportFile streams one file of a completed export.
func (s *Server) exportFile(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("job"))
	if err != nil {
		return domain.ErrNotFound
	}
	r, _, err := s.exports.Open(c.UserContext(), httpkit.GrantOf(c), id, c.Params("name"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, bulk.MediaType)
	c.Response().SetBodyStream(r, -1) // fasthttp closes r once it is sent
	return nil
}
