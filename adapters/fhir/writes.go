package fhir

import (
	"encoding/json"
	"errors"
	"mime"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// Writes where the native API writes (docs/contract.md §15): a Patient is
// created and updated as a customer, an Appointment is booked as the
// booking API books one (a taken slot is 409). A resource is turned into
// the native fields it carries; an update sets exactly those, so what FHIR
// does not carry (insurer, IBAN, alerts …) stays as it is.

// writer is how a type is written: its native fields from a resource, and
// the FHIR path of each native field, for an error's expression.
type writer struct {
	// fields reads a resource's native fields; full is true for an update,
	// which names every field the resource carries, absent ones as null.
	fields func(body []byte, full bool) (map[string]any, error)
	paths  map[string]string
	// booked creates through the booking rules, not the section's create.
	booked bool
}

// fhirPatient is what a Patient carries that praxis keeps.
type fhirPatient struct {
	Name []struct {
		Use    string   `json:"use"`
		Family string   `json:"family"`
		Given  []string `json:"given"`
		Prefix []string `json:"prefix"`
	} `json:"name"`
	Gender     string `json:"gender"`
	BirthDate  string `json:"birthDate"`
	Identifier []struct {
		System string `json:"system"`
		Value  string `json:"value"`
	} `json:"identifier"`
	Telecom []struct {
		System string `json:"system"`
		Value  string `json:"value"`
	} `json:"telecom"`
	Address []struct {
		Line       []string `json:"line"`
		PostalCode string   `json:"postalCode"`
		City       string   `json:"city"`
		Country    string   `json:"country"`
	} `json:"address"`
}

var patientWriter = &writer{fields: patientFields, paths: map[string]string{
	"first_name": "Patient.name.given", "last_name": "Patient.name.family", "title": "Patient.name.prefix",
	"birth_date": "Patient.birthDate", "sex": "Patient.gender", "svnr": "Patient.identifier", "kvnr": "Patient.identifier",
	"phone": "Patient.telecom", "email": "Patient.telecom", "address": "Patient.address",
}}

// patientFields reads a Patient as a customer's fields.
func patientFields(body []byte, full bool) (map[string]any, error) {
	var p fhirPatient
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, &outcomeError{status: fiber.StatusBadRequest, code: "structure", text: "the Patient does not have the shape of FHIR R4's: " + jsonProblem(err), reason: "invalid-resource"}
	}
	out := map[string]any{}
	set := func(field string, v any, present bool) {
		switch {
		case present:
			out[field] = v
		case full:
			out[field] = nil
		}
	}
	if len(p.Name) > 0 {
		n := p.Name[0]
		for _, cand := range p.Name { // the official name, when one is marked so
			if cand.Use == "official" {
				n = cand
				break
			}
		}
		set("last_name", n.Family, n.Family != "")
		set("first_name", strings.Join(n.Given, " "), len(n.Given) > 0)
		set("title", strings.Join(n.Prefix, " "), len(n.Prefix) > 0)
	} else {
		set("last_name", nil, false)
		set("first_name", nil, false)
		set("title", nil, false)
	}
	sex := map[string]string{"female": "female", "male": "male", "other": "diverse", "unknown": "unknown"}[p.Gender]
	if p.Gender != "" && sex == "" {
		return nil, &outcomeError{status: fiber.StatusBadRequest, code: "code-invalid", text: "gender must be male, female, other or unknown", reason: "invalid-resource", expression: "Patient.gender"}
	}
	set("sex", sex, sex != "")
	set("birth_date", p.BirthDate, p.BirthDate != "")
	var svnr, kvnr string
	for _, i := range p.Identifier {
		switch i.System {
		case systemSVNR:
			svnr = i.Value
		case systemKVNR:
			kvnr = i.Value
		}
	}
	set("svnr", svnr, svnr != "")
	set("kvnr", kvnr, kvnr != "")
	var phone, email string
	for _, t := range p.Telecom {
		switch {
		case t.System == "phone" && phone == "":
			phone = t.Value
		case t.System == "email" && email == "":
			email = t.Value
		}
	}
	set("phone", phone, phone != "")
	set("email", email, email != "")
	if len(p.Address) > 0 {
		a := p.Address[0]
		addr := map[string]any{"street": strings.Join(a.Line, ", "), "postal_code": a.PostalCode, "city": a.City}
		if a.Country != "" {
			addr["country"] = a.Country
		}
		set("address", addr, true)
	} else {
		set("address", nil, false)
	}
	return out, nil
}

// fhirAppointment is what an Appointment to book carries.
type fhirAppointment struct {
	Status      string `json:"status"`
	Start       string `json:"start"`
	Comment     string `json:"comment"`
	Participant []struct {
		Actor struct {
			Reference string `json:"reference"`
		} `json:"actor"`
	} `json:"participant"`
}

var appointmentWriter = &writer{fields: appointmentFields, booked: true, paths: map[string]string{
	"customer_id": "Appointment.participant", "user_id": "Appointment.participant", "location_id": "Appointment.participant",
	"service_id": "Appointment.participant", "start": "Appointment.start", "note": "Appointment.comment",
}}

// appointmentFields reads an Appointment as a booking: its patient,
// practitioner, location and service (a HealthcareService participant),
// its start, and its comment as the note.
func appointmentFields(body []byte, _ bool) (map[string]any, error) {
	var a fhirAppointment
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, &outcomeError{status: fiber.StatusBadRequest, code: "structure", text: "the Appointment does not have the shape of FHIR R4's: " + jsonProblem(err), reason: "invalid-resource"}
	}
	if a.Status != "booked" && a.Status != "proposed" && a.Status != "pending" {
		return nil, &outcomeError{status: fiber.StatusUnprocessableEntity, code: "business-rule", text: "a new appointment is booked: status booked, proposed or pending",
			reason: "validation-error", expression: "Appointment.status"}
	}
	out := map[string]any{"start": a.Start}
	if a.Comment != "" {
		out["note"] = a.Comment
	}
	for _, p := range a.Participant {
		typ, id, _ := strings.Cut(p.Actor.Reference, "/")
		field := map[string]string{"Patient": "customer_id", "Practitioner": "user_id", "Location": "location_id", "HealthcareService": "service_id"}[typ]
		if field == "" || id == "" || out[field] != nil {
			return nil, &outcomeError{status: fiber.StatusBadRequest, code: "invalid", reason: "invalid-reference", expression: "Appointment.participant",
				text: "a participant is one Patient, Practitioner, Location and HealthcareService each, by reference Type/id: " + strconv.Quote(p.Actor.Reference)}
		}
		if field == "customer_id" {
			n, ok := domain.ParseCustomerPathID(id)
			if !ok {
				return nil, &outcomeError{status: fiber.StatusBadRequest, code: "invalid", reason: "invalid-reference", expression: "Appointment.participant",
					text: "the patient is Patient/{number}: " + strconv.Quote(p.Actor.Reference)}
			}
			out[field] = n
			continue
		}
		out[field] = id
	}
	return out, nil
}

// jsonProblem says where a body's JSON went wrong, without its content.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return typeErr.Field + " is not a " + typeErr.Type.String()
	}
	return "not well-formed JSON"
}

// resourceBody reads a write's body: FHIR JSON of the path's type whose
// id, on an update, is the path's.
func resourceBody(c *fiber.Ctx, rt *resourceType, id string) ([]byte, error) {
	mediaType, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || (mediaType != httpkit.MIMEFHIRJSON && mediaType != fiber.MIMEApplicationJSON) {
		httpkit.DrainOrClose(c, httpkit.Body(c))
		return nil, &outcomeError{status: fiber.StatusUnsupportedMediaType, code: "not-supported", text: "the body must be application/fhir+json", reason: "unsupported-media-type"}
	}
	body, err := httpkit.ReadBody(c, bodyLimit)
	if err != nil {
		return nil, err
	}
	var head struct {
		ResourceType string `json:"resourceType"`
		ID           string `json:"id"`
	}
	if json.Unmarshal(body, &head) != nil {
		return nil, &outcomeError{status: fiber.StatusBadRequest, code: "structure", text: "the body is not a FHIR resource in JSON", reason: "malformed-json"}
	}
	switch {
	case head.ResourceType != rt.name:
		return nil, &outcomeError{status: fiber.StatusBadRequest, code: "invalid", text: "the body is a " + strconv.Quote(head.ResourceType) + ", the path names " + rt.name, reason: "invalid-resource"}
	case id != "" && head.ID != id:
		return nil, &outcomeError{status: fiber.StatusBadRequest, code: "invalid", text: "the resource's id must be the path's", reason: "invalid-resource", expression: rt.name + ".id"}
	}
	return body, nil
}

// writable is the type's writer, or a 405 for a type that is read only.
func writable(c *fiber.Ctx, update bool) (*resourceType, error) {
	rt, err := served(c)
	if err != nil {
		return nil, err
	}
	if rt.writer == nil || (update && rt.writer.booked) {
		return nil, &outcomeError{status: fiber.StatusMethodNotAllowed, code: "not-supported", reason: "not-supported",
			text: rt.name + " is not written through this door (see /fhir/R4/metadata)"}
	}
	return rt, nil
}

// create makes a resource: 201 with its Location and version; a retry
// with the same Idempotency-Key gets the first answer.
func (s *Server) create(c *fiber.Ctx) error {
	rt, err := writable(c, false)
	if err != nil {
		return err
	}
	body, err := resourceBody(c, rt, "")
	if err != nil {
		return err
	}
	fields, err := rt.writer.fields(body, false)
	if err != nil {
		return err
	}
	key, err := writeKey(c, body)
	if err != nil {
		return err
	}
	native := domain.DocumentOf(fields)
	var resp ports.WrittenObject
	if rt.writer.booked {
		resp, err = s.booking.Book(c.UserContext(), httpkit.GrantOf(c), native, key)
	} else {
		resp, err = s.records.Create(c.UserContext(), httpkit.GrantOf(c), domain.KindOf(rt.section), native, key)
	}
	if err != nil {
		return atPath(rt, err)
	}
	return s.written(c, rt, resp)
}

// update sets what the resource carries, if the object is still at the
// version If-Match names (weak or strong).
func (s *Server) update(c *fiber.Ctx) error {
	rt, err := writable(c, true)
	if err != nil {
		return err
	}
	id := c.Params("id")
	if !validID(id) || !nativeID(domain.KindOf(rt.section), id) {
		return domain.ErrNotFound
	}
	body, err := resourceBody(c, rt, id)
	if err != nil {
		return err
	}
	cond, err := domain.ParsePrecondition("If-Match", c.Get(fiber.HeaderIfMatch), true)
	if err != nil {
		return err
	}
	fields, err := rt.writer.fields(body, true)
	if err != nil {
		return err
	}
	key, err := writeKey(c, body)
	if err != nil {
		return err
	}
	resp, err := s.records.Patch(c.UserContext(), httpkit.GrantOf(c), domain.KindOf(rt.section), id, domain.DocumentOf(fields), ports.Write{IfMatch: cond, Key: key})
	if err != nil {
		return atPath(rt, err)
	}
	return s.written(c, rt, resp)
}

// writeKey is the write's Idempotency-Key with its fingerprint, nil without one.
func writeKey(c *fiber.Ctx, body []byte) (*ports.IdempotencyKey, error) {
	key, fingerprint, err := httpkit.IdempotencyKey(c, body)
	if key == "" || err != nil {
		return nil, err
	}
	return &ports.IdempotencyKey{Key: key, Fingerprint: fingerprint}, nil
}

// written answers a write with the resource as it now is.
func (s *Server) written(c *fiber.Ctx, rt *resourceType, resp ports.WrittenObject) error {
	it, err := itemOf(domain.KindOf(rt.section), resp.Value)
	if err != nil {
		return err
	}
	r := rt.toFHIR(view{company: httpkit.GrantOf(c).CompanyID}, it)
	if resp.Replayed {
		c.Set("Idempotent-Replayed", "true")
	}
	version := strconv.FormatInt(resp.Value.Version, 10)
	c.Set(fiber.HeaderETag, `W/"`+version+`"`)
	status := resp.Outcome.Status()
	if resp.Outcome == domain.OutcomeCreated {
		c.Set(fiber.HeaderLocation, s.base(c)+"/"+rt.name+"/"+it.id+"/_history/"+version) // a vread of the current version
	}
	return send(c.Status(status), r)
}

// atPath names, in a refusal of the native fields, the resource's element.
func atPath(rt *resourceType, err error) error {
	fields, ok := domain.AsFieldErrors(err)
	if !ok || len(fields) == 0 {
		return err
	}
	field, _, _ := strings.Cut(fields[0].Field, ".")
	path := rt.writer.paths[field]
	if path == "" {
		return err
	}
	return &outcomeError{status: fiber.StatusUnprocessableEntity, code: "invalid", text: path + ": " + fields[0].Message, reason: "validation-error", expression: path}
}
