package httpapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/api"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
)

// openAPIPath is where the document is served.
const openAPIPath = "/api/oauth/v2/openapi.json"

// openAPIBase is the hand-written part of the document: uploads, OAuth,
// probes, the bespoke sections and the shared components. Everything the
// table of sections says is added to it at start-up (buildOpenAPI).
//
//go:embed openapi/base.json
var openAPIBase []byte

// OpenAPI serves the OpenAPI 3.1 document.
type OpenAPI struct{ document []byte }

// NewOpenAPI builds the document once.
func NewOpenAPI() (*OpenAPI, error) {
	doc, err := buildOpenAPI(api.Releases())
	if err != nil {
		return nil, err
	}
	return &OpenAPI{document: doc}, nil
}

// Document is the OpenAPI document this build serves, for the contract
// check of make lint.
func Document() ([]byte, error) { return buildOpenAPI(api.Releases()) }

// DocumentFor is the document as it reads with the releases given: the
// release generator writes a new release's document with its own notes.
func DocumentFor(releases []release.Release) ([]byte, error) { return buildOpenAPI(releases) }

func (o *OpenAPI) Register(app fiber.Router) {
	app.Get(openAPIPath, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Send(o.document)
	})
}

type object = map[string]any

func ref(kind, name string) object { return object{"$ref": "#/components/" + kind + "/" + name} }

// buildOpenAPI adds to the base, from the table of sections: the scope
// catalogue, and for every generic section its paths and its reflected
// schemas; from the releases: the version and the latest notes.
func buildOpenAPI(releases []release.Release) ([]byte, error) {
	var doc object
	if err := json.Unmarshal(openAPIBase, &doc); err != nil {
		return nil, err
	}
	info := doc["info"].(object)
	info["version"] = releases[0].Date
	info["description"] = info["description"].(string) + "\n\n" + releaseNotesMarkdown(releases)
	components := doc["components"].(object)
	schemas := components["schemas"].(object)
	paths := doc["paths"].(object)
	scopes := components["securitySchemes"].(object)["oauth2"].(object)["flows"].(object)["clientCredentials"].(object)["scopes"].(object)
	for _, s := range domain.SupportedScopes() {
		section, access, _ := strings.Cut(string(s), ":")
		scopes[string(s)] = strings.ToUpper(access[:1]) + access[1:] + " " + strings.ReplaceAll(section, "-", " ")
	}
	components["parameters"] = listParameters()
	components["headers"].(object)["ETag"] = object{"description": "the object's version as a strong entity tag: its version in quotes (\"3\"); " +
		"send it back in If-Match to write only that version, in If-None-Match to be told 304 while it is current",
		"schema": object{"type": "string", "example": `"3"`}}
	customersItem := object{"anyOf": []any{ref("schemas", domain.CustomersKind().Name), ref("schemas", "Tombstone")}}
	for _, k := range domain.Kinds() {
		name := k.Name
		schemas[name] = k.Schemas().Output
		input, err := inputWithExample(k)
		if err != nil {
			return nil, err
		}
		schemas[name+"Input"] = input
		list := object{
			"data": object{"type": "array", "items": object{"anyOf": []any{ref("schemas", name), ref("schemas", "Tombstone")}}},
			"next_cursor": object{"type": "string", "description": "opaque; pass it as ?cursor= for the next page, or later to resume the sync. " +
				"Empty on a read by id (ids=), which is no page of the feed"},
			"has_more": object{"type": "boolean", "description": "false on a read by id (ids=)"},
			"not_found": object{"type": "array", "items": object{"type": "string"},
				"description": "only on a read by id (ids=): the ids asked for that name no object of this company " +
					"(another company's ids among them, never told apart)"},
		}
		if k.HasCustomer() {
			list["customers"] = object{"type": "array", "items": customersItem,
				"description": "only with include=customer: each customer the records name, once"}
		}
		if k == domain.CustomersKind() {
			list["total"] = object{"type": "integer", "minimum": 0,
				"description": "only with total=true: how many customers the filters keep, on every page"}
		}
		schemas[name+"List"] = object{"type": "object", "required": []any{"data", "next_cursor", "has_more"}, "additionalProperties": false,
			"properties": list}
		paths[resourcePrefix+"/"+k.Slug] = kindPaths(k, name)
		if k == domain.CustomersKind() {
			paths[resourcePrefix+"/"+k.Slug+"/match"] = matchPaths(name)
		}
		paths[resourcePrefix+"/"+k.Slug+"/{id}"] = kindItemPaths(k, name)
	}
	if err := addBooking(paths, schemas); err != nil {
		return nil, err
	}
	addDeviceRoutes(paths, schemas)
	markStability(paths)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // the upload messages show <placeholders>
	enc.SetIndent("", "  ")
	err := enc.Encode(doc)
	return out.Bytes(), err
}

// markStability tells oasdiff and integrators which API is beta: the OAuth
// API (everything under /api/oauth/v2), 31 days' notice before a sunset;
// the upload API is stable, 180 days (docs/contract.md §10).
func markStability(paths object) {
	for path, item := range paths {
		if !strings.HasPrefix(path, "/api/oauth/v2/") {
			continue
		}
		for _, op := range item.(object) {
			if o, ok := op.(object); ok {
				o["x-stability-level"] = "beta"
			}
		}
	}
}

// inputWithExample is a kind's create schema with its example, as the
// document shows it: a copy, since the kind's own schema is shared and two
// documents may be built at once.
func inputWithExample(k *domain.Kind) (object, error) {
	var example any
	if err := json.Unmarshal([]byte(k.ExampleWith(domain.SampleIDs)), &example); err != nil {
		return nil, err
	}
	input := maps.Clone(k.Schemas().Input)
	input["examples"] = []any{example}
	return input, nil
}

// addBooking documents the booking section and the appointments' cancel
// step; their bodies are the domain's reflected schemas.
func addBooking(paths, schemas object) error {
	views := map[string][]string{
		"users":     {"title", "display_name", "specialty"},
		"locations": {"name", "address", "phone"},
		"services":  {"name", "description", "category", "duration_minutes", "price", "currency"},
	}
	for section, fields := range views {
		kind := domain.KindOf(section)
		full, _ := kind.Schemas().Output["properties"].(map[string]any)
		props := object{"id": object{"type": "string", "format": "uuid"}}
		required := []any{"id"}
		for _, f := range fields {
			props[f] = full[f]
			required = append(required, f)
		}
		name := "Booking" + kind.Name
		schemas[name] = object{"type": "object", "additionalProperties": false, "required": required, "properties": props}
		schemas[name+"List"] = object{"type": "object", "required": []any{"data", "next_cursor", "has_more"}, "additionalProperties": false,
			"properties": object{"data": object{"type": "array", "items": ref("schemas", name)},
				"next_cursor": object{"type": "string"}, "has_more": object{"type": "boolean"}}}
		list := operation("listBooking"+kind.Name, "Bookable "+section+" (active, online-bookable, with a bookable assignment)",
			domain.ReadScope("booking"), object{
				"200": object{"description": "one page, in id order", "content": jsonContent(ref("schemas", name+"List"))},
				"422": problemResponse("a query parameter is invalid"),
			})
		params := []any{ref("parameters", "limit"), ref("parameters", "cursor")}
		for _, filter := range bookingFilters[section] {
			params = append(params, object{"name": filter, "in": "query", "required": false, "schema": object{"type": "string", "format": "uuid"}})
		}
		list["parameters"] = params
		paths[resourcePrefix+"/booking/"+section] = object{"get": list}
	}
	id := object{"type": "string", "format": "uuid"}
	at := object{"type": "string", "format": "date-time"}
	schemas["Slots"] = object{"type": "object", "required": []any{"time_zone", "data"}, "additionalProperties": false,
		"properties": object{"time_zone": object{"type": "string"}, "data": object{"type": "array", "items": object{
			"type": "object", "additionalProperties": false, "required": []any{"start", "end", "user_id", "location_id", "service_id"},
			"properties": object{"start": at, "end": at, "user_id": id, "location_id": id, "service_id": id}}}}}
	slots := operation("listSlots", "Free slots of a service at a location, from working hours, absences, buffers and appointments",
		domain.ReadScope("booking"), object{
			"200": object{"description": "every free slot, sorted by start then user; times in the company's zone", "content": jsonContent(ref("schemas", "Slots"))},
			"422": problemResponse("a parameter is missing or invalid, names nothing bookable, or the window exceeds 31 days"),
		})
	param := func(name, desc string, required bool, schema object) object {
		return object{"name": name, "in": "query", "required": required, "description": desc, "schema": schema}
	}
	date := object{"type": "string", "format": "date"}
	slots["parameters"] = []any{param("service_id", "a bookable service", true, id), param("location_id", "a bookable location", true, id),
		param("user_id", "one bookable user; absent = every user offering the service there", false, id),
		param("from", "first local date", true, date), param("to", "last local date, at most 31 days counted with from", true, date)}
	paths[resourcePrefix+"/booking/slots"] = object{"get": slots}

	input, err := inputWithExample(domain.BookingKind)
	if err != nil {
		return err
	}
	schemas["BookingInput"] = input
	book := operation("book", "Book a free slot; a new customer is created in the same transaction", domain.WriteScope("booking"), object{
		"201": object{"description": "the appointment (status booked, source online_booking)", "content": jsonContent(ref("schemas", "Appointment")),
			"headers": etagHeaders(object{"Location": object{"schema": object{"type": "string"}}, "Idempotent-Replayed": object{"schema": object{"type": "string", "enum": []any{"true"}}}})},
		"409": problemResponse("slot-unavailable: the start is not, or no longer, a free slot"),
		"413": problemResponse("the body is over 1 MiB"),
		"415": problemResponse("the body is not application/json"),
		"422": problemResponse("invalid fields, every one listed in errors[]; or a reused Idempotency-Key"),
	})
	book["parameters"] = []any{ref("parameters", "IdempotencyKey")}
	book["requestBody"] = object{"required": true, "content": jsonContent(ref("schemas", "BookingInput"))}
	paths[resourcePrefix+"/booking/appointments"] = object{"post": book}

	schemas["CancellationInput"] = domain.CancellationKind.Schemas().Input
	cancel := operation("cancelAppointment", "Cancel a booked or arrived appointment; its slot is free at once", domain.WriteScope("appointments"), object{
		"200": object{"description": "the cancelled appointment", "content": jsonContent(ref("schemas", "Appointment"))},
		"404": problemResponse("no such object in this company"),
		"409": problemResponse("invalid-transition: the appointment is not booked or arrived"),
		"413": problemResponse("the body is over 1 MiB"),
		"415": problemResponse("the body is not application/json"),
		"422": problemResponse("invalid fields, every one listed in errors[]"),
	})
	conditionalWrite(cancel)
	cancel["requestBody"] = object{"required": true, "content": jsonContent(ref("schemas", "CancellationInput"))}
	paths[resourcePrefix+"/appointments/{id}/cancel"] = object{"parameters": []any{ref("parameters", "id")}, "post": cancel}
	return nil
}

func listParameters() object {
	q := func(name, desc string, schema object) object {
		return object{"name": name, "in": "query", "required": false, "description": desc, "schema": schema}
	}
	return object{
		"limit":  q("limit", "page size", object{"type": "integer", "minimum": 1, "maximum": domain.MaxPageSize, "default": domain.DefaultPageSize}),
		"cursor": q("cursor", "next_cursor of the previous page: resumes the feed after it", object{"type": "string"}),
		"updated_since": q("updated_since", "only objects written at or after this instant (a filter, not a position)",
			object{"type": "string", "format": "date-time"}),
		"include_deleted": q("include_deleted", "list deleted objects as tombstones in their place", object{"type": "boolean", "default": false}),
		"customer_id":     q("customer_id", "only this customer's records", object{"type": "integer", "minimum": 1, "maximum": domain.MaxCustomerID}),
		"IdempotencyKey": object{"name": "Idempotency-Key", "in": "header", "required": false,
			"description": "a retry with the same key answers the first response (Idempotent-Replayed: true); the same key with another body is 422",
			"schema":      object{"type": "string", "maxLength": 255}},
		"id": object{"name": "id", "in": "path", "required": true, "schema": object{"type": "string"}},
		"IfMatch": object{"name": "If-Match", "in": "header", "required": false,
			"description": "the ETag of the version this write was made from: when the object has changed since, nothing is written " +
				"and the answer is 412 naming the current version. Without it the write applies to whatever is current, " +
				"which is unsafe between several writers",
			"schema": object{"type": "string", "example": `"3"`}},
		"IfNoneMatch": object{"name": "If-None-Match", "in": "header", "required": false,
			"description": "the ETag of the copy the client holds: 304 without a body while it is current",
			"schema":      object{"type": "string", "example": `"3"`}},
		"ids": q("ids", "read these objects by id instead of a page: 1 to 100 comma-separated ids of the section's form. "+
			"Stands alone (with include_deleted and include only); answers data in the order asked and not_found", object{"type": "string"}),
		"include": q("include", "customer: the customers the records name, once each, beside them (needs customers:read)",
			object{"type": "string", "enum": []any{"customer"}}),
	}
}

// etagHeaders are the headers of an answer of one object.
func etagHeaders(extra object) object {
	h := object{"ETag": ref("headers", "ETag")}
	maps.Copy(h, extra)
	return h
}

// conditionalWrite adds what a write of one existing object takes and may
// answer besides: If-Match and Idempotency-Key, 412 and a replay's header.
func conditionalWrite(op object) {
	op["parameters"] = []any{ref("parameters", "IfMatch"), ref("parameters", "IdempotencyKey")}
	responses := op["responses"].(object)
	responses["412"] = problemResponse("version-mismatch: the object has changed since the version If-Match names; " +
		"current_version and the ETag name the current one. Nothing was written")
	responses["422"].(object)["description"] = responses["422"].(object)["description"].(string) +
		"; or a malformed If-Match, or a reused Idempotency-Key"
	ok := responses["200"].(object)
	ok["headers"] = etagHeaders(object{"Idempotent-Replayed": object{"schema": object{"type": "string", "enum": []any{"true"}}}})
}

func jsonContent(schema object) object {
	return object{"application/json": object{"schema": schema}}
}

func problemResponse(desc string) object {
	return object{"description": desc, "content": object{"application/problem+json": object{"schema": ref("schemas", "Problem")}}}
}

// guarded adds the answers every resource operation shares.
func guarded(responses object) object {
	responses["503"] = problemResponse("a dependency is unavailable (service-unavailable); Retry-After says when to try again")
	responses["429"] = problemResponse("the client's rate limit is used up (rate-limited); Retry-After says when the window ends. " +
		"Every answer after the bearer check carries RateLimit-Policy and RateLimit. Or the practice has as many requests running " +
		"on this server as its share allows (company-busy); Retry-After: 1")
	responses["400"] = ref("responses", "BearerInvalidRequest")
	responses["401"] = ref("responses", "Unauthorized")
	responses["403"] = ref("responses", "Forbidden")
	return responses
}

func operation(id, summary string, scope domain.Scope, responses object) object {
	return object{
		"operationId": id, "summary": summary, "tags": []any{"Resources"},
		"security":  []any{object{"oauth2": []any{string(scope)}}},
		"responses": guarded(responses),
	}
}

// patientSearchParameters are the customers' list's filters, from the
// domain's table of them, and total.
func patientSearchParameters() []any {
	var params []any
	for _, p := range domain.PatientSearchParams {
		schema := object{"type": "string", "maxLength": 200}
		if p.Format != "" {
			schema["format"] = p.Format
		}
		params = append(params, object{"name": p.Name, "in": "query", "required": false, "schema": schema,
			"description": "Finding a patient: " + p.Doc + ". Filters AND; a search answers what is committed now, in the feed's order"})
	}
	return append(params, object{"name": "total", "in": "query", "required": false, "schema": object{"type": "boolean"},
		"description": "true: answer total, how many customers the filters keep"},
		object{"name": "sort", "in": "query", "required": false, "schema": object{"type": "string", "pattern": sortPattern(), "example": "last_name,first_name"},
			"description": "answer in this order instead of the feed's: last_name, first_name (folded as searched), birth_date (none first) or updated_at, " +
				"each with - before it for descending, separated by commas; ties by the customer's number, the way the last key goes. The next_cursor then holds the order: " +
				"follow it with the same sort. A customer whose key changes while a client pages moves in the order, and may be seen twice or not at all"})
}

// sortPattern is the form of the customers' list's sort: its keys, each
// with an optional "-", separated by commas.
func sortPattern() string {
	key := "-?(" + strings.Join(slices.Sorted(maps.Keys(domain.NativeSortKeys)), "|") + ")"
	return "^" + key + "(," + key + ")*$"
}

// matchPaths is POST customers/match: the patients a record may be.
func matchPaths(name string) object {
	str := object{"type": []any{"string", "null"}}
	fields := object{}
	for _, f := range []string{"first_name", "last_name", "birth_date", "sex", "svnr", "kvnr", "phone", "email"} {
		fields[f] = str
	}
	op := operation("match"+name, "Match a patient: the practice's patients a record (a lab's, a hospital's) may be, scored and graded, best first",
		domain.ReadScope("customers"), object{
			"200": object{"description": "the candidates, best first: found by indexed searches only (an identifier, a birth date with a name, " +
				"a phone number, an e-mail address), each with its score and grade (docs/contract.md §15, \"Matching a patient\"); " +
				"a replay of an Idempotency-Key answers the first response again",
				"headers": object{"Idempotent-Replayed": object{"schema": object{"type": "string", "enum": []any{"true"}}}},
				"content": jsonContent(object{"type": "object", "required": []any{"data"}, "additionalProperties": false, "properties": object{
					"data": object{"type": "array", "items": object{"type": "object", "required": []any{"score", "grade", "customer"}, "additionalProperties": false,
						"properties": object{
							"score":    object{"type": "number", "minimum": 0, "maximum": 1},
							"grade":    object{"type": "string", "enum": []any{"certain", "probable", "possible"}},
							"customer": ref("schemas", name)}}}}})},
			"413": problemResponse("the body is over 1 MiB"),
			"415": problemResponse("the body is not application/json"),
			"422": problemResponse("invalid fields, every one listed in errors[] (a record with nothing to search by among them); or a reused Idempotency-Key"),
		})
	op["parameters"] = []any{ref("parameters", "IdempotencyKey")}
	op["requestBody"] = object{"required": true, "content": jsonContent(object{"type": "object", "required": []any{"customer"}, "additionalProperties": false,
		"properties": object{
			"customer": object{"type": "object", "additionalProperties": false, "properties": fields,
				"description": "what is known of the patient, in the customers' field names; an SVNR or KVNR with a wrong check digit is no evidence"},
			"count":                object{"type": "integer", "minimum": 1, "maximum": 100, "description": "at most this many candidates"},
			"only_certain_matches": object{"type": "boolean", "description": "true: the one certain candidate, or none when there is none or more than one"},
		}})}
	return object{"post": op}
}

func kindPaths(k *domain.Kind, name string) object {
	params := []any{ref("parameters", "limit"), ref("parameters", "cursor"), ref("parameters", "updated_since"), ref("parameters", "include_deleted")}
	if k.HasCustomer() {
		params = append(params, ref("parameters", "customer_id"))
	}
	if k.Calendar {
		uuidSchema, date := object{"type": "string", "format": "uuid"}, object{"type": "string", "format": "date"}
		params = append(params,
			object{"name": "user_id", "in": "query", "required": false, "description": "only this user's", "schema": uuidSchema},
			object{"name": "location_id", "in": "query", "required": false, "description": "only at this location", "schema": uuidSchema},
			object{"name": "from", "in": "query", "required": false, "description": "only those starting on this local date or later", "schema": date},
			object{"name": "to", "in": "query", "required": false, "description": "only those starting on this local date or earlier", "schema": date})
	}
	props, _ := k.Schemas().Output["properties"].(map[string]any)
	for _, f := range k.Filters {
		schema := object{"type": "string"}
		if p, ok := props[f].(map[string]any); ok {
			for _, key := range []string{"enum", "format"} {
				if v, ok := p[key]; ok {
					schema[key] = v
				}
			}
		}
		params = append(params, object{"name": f, "in": "query", "required": false, "description": "only those whose " + f + " is this", "schema": schema})
	}
	if k == domain.CustomersKind() {
		params = append(params, patientSearchParameters()...)
	}
	params = append(params, ref("parameters", "ids"))
	if k.HasCustomer() {
		params = append(params, ref("parameters", "include"))
	}
	list := operation("list"+name, "List "+strings.ReplaceAll(k.Slug, "-", " ")+" in sync order, or read up to 100 by id", domain.ReadScope(k.Slug), object{
		"200": object{"description": "one page of the feed; with ids=, the objects asked for in the order asked and the ids not found",
			"content": jsonContent(ref("schemas", name+"List"))},
		"422": problemResponse("a query parameter is invalid: among them more than 100 ids, an id of another form, or ids with a page's parameters"),
	})
	list["parameters"] = params
	create := operation("create"+name, "Create one of "+strings.ReplaceAll(k.Slug, "-", " "), domain.WriteScope(k.Slug), object{
		"201": object{"description": "created; a replay of an Idempotency-Key answers the first response again",
			"content": jsonContent(ref("schemas", name)),
			"headers": etagHeaders(object{"Location": object{"schema": object{"type": "string"}}, "Idempotent-Replayed": object{"schema": object{"type": "string", "enum": []any{"true"}}}})},
		"409": problemResponse("conflicts with an existing object"),
		"413": problemResponse("the body is over 1 MiB"),
		"415": problemResponse("the body is not application/json"),
		"422": problemResponse("invalid fields, every one listed in errors[]; or a reused Idempotency-Key"),
	})
	create["parameters"] = []any{ref("parameters", "IdempotencyKey")}
	create["requestBody"] = object{"required": true, "content": jsonContent(ref("schemas", name+"Input"))}
	if k.ReadOnly {
		return object{"get": list}
	}
	return object{"get": list, "post": create}
}

func kindItemPaths(k *domain.Kind, name string) object {
	get := operation("get"+name, "One of "+strings.ReplaceAll(k.Slug, "-", " "), domain.ReadScope(k.Slug), object{
		"200": object{"description": "the object", "content": jsonContent(ref("schemas", name)), "headers": etagHeaders(nil)},
		"304": object{"description": "If-None-Match names the current version: the client's copy is current", "headers": etagHeaders(nil)},
		"404": problemResponse("no such object in this company"),
		"422": problemResponse("a malformed If-None-Match"),
	})
	get["parameters"] = []any{ref("parameters", "IfNoneMatch")}
	out := object{"parameters": []any{ref("parameters", "id")}, "get": get}
	if k.Patch {
		patch := operation("patch"+name, "Change one of "+strings.ReplaceAll(k.Slug, "-", " ")+" (JSON merge patch, validated whole)",
			domain.WriteScope(k.Slug), object{
				"200": object{"description": "the whole object after the change", "content": jsonContent(ref("schemas", name))},
				"404": problemResponse("no such object in this company"),
				"409": problemResponse("conflicts with an existing object, or the object's state refuses the change (invalid-transition)"),
				"413": problemResponse("the body is over 1 MiB"),
				"415": problemResponse("the body is not JSON"),
				"422": problemResponse("the result is invalid, or an immutable field would change"),
			})
		conditionalWrite(patch)
		patch["requestBody"] = object{"required": true, "content": object{
			"application/merge-patch+json": object{"schema": object{"type": "object"}},
			"application/json":             object{"schema": object{"type": "object"}},
		}}
		out["patch"] = patch
	}
	return out
}
