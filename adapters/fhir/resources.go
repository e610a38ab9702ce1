package fhir

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/praxis-health/praxis/domain"
)

// The resources the door serves, each a view of one native section: the
// table the interactions, the search and the CapabilityStatement are read
// from (no second list is kept by hand). A mapping writes only what the
// record holds: an absent field is absent in the resource, never a default.

// object is one native object as the resource API answers it.
type object map[string]any

// Identifier systems (HL7 Austria AT Core R4; HL7 Deutschland basis).
const (
	systemSVNR    = "urn:oid:1.2.40.0.10.1.4.3.1" // Austrian social insurance number
	systemKVNR    = "http://fhir.de/sid/gkv/kvid-10"
	systemV2_0203 = "http://terminology.hl7.org/CodeSystem/v2-0203"
	systemLOINC   = "http://loinc.org"
	systemUCUM    = "http://unitsofmeasure.org"
	svnrAssigner  = "Dachverband der österreichischen Sozialversicherungsträger"
)

// localSystem is the system of the practice's own patient numbers: one per company.
func localSystem(company domain.CompanyID) string {
	return "urn:praxis:" + company.String() + ":customers"
}

// resourceType is one served resource.
type resourceType struct {
	name string
	// section is the native section it views; "" for Organization (the company).
	section string
	// patient is the native field naming the patient ("" for none): the
	// patient/subject search and the audit's candidates.
	patient string
	params  []searchParam
	// includes are the _include values served, each a reference field to
	// customers ("": what it names is contained in the resource already).
	includes map[string]string
	toFHIR   func(x view, o object) map[string]any
	// writer is how the type is written; nil for a type only read.
	writer *writer
	// binary: the type is read as the bytes of a file (Binary), never searched or exported.
	binary bool
	// slots: the type is computed by the booking rules (Slot): its own
	// search and read, never exported.
	slots bool
	// gdtResults: the type also views the GDT result files (files with an
	// examination), read after its section's feed (readers.go).
	gdtResults bool
}

// view is what a mapping needs beside the object: the company (the local
// patient numbers' system).
type view struct{ company domain.CompanyID }

// resources is the table, in the CapabilityStatement's order.
var resources = []*resourceType{
	{name: "Patient", section: "customers", toFHIR: patient, writer: patientWriter, params: []searchParam{
		{name: "identifier", kind: "token", doc: "system|value: the SVNR (" + systemSVNR + "), the KVNR (" + systemKVNR + ") or the practice's number", match: patientIdentifier},
		{name: "family", kind: "string", doc: "the last name, case-insensitive, starting with", match: stringField("last_name")},
		{name: "given", kind: "string", doc: "the first name, case-insensitive, starting with", match: stringField("first_name")},
		{name: "birthdate", kind: "date", doc: "the birth date", match: dateField("birth_date")},
		{name: "gender", kind: "token", doc: "male, female, other, unknown", match: tokenOf(func(o object) string { return gender(o) })},
	}},
	{name: "Practitioner", section: "users", toFHIR: practitioner, params: []searchParam{
		{name: "family", kind: "string", doc: "the last name", match: stringField("last_name")},
		{name: "given", kind: "string", doc: "the first name", match: stringField("first_name")},
		{name: "active", kind: "token", doc: "true or false", match: tokenOf(func(o object) string { return strconv.FormatBool(active(o)) })},
	}},
	{name: "Organization"},
	{name: "Location", section: "locations", toFHIR: location, params: []searchParam{
		{name: "name", kind: "string", doc: "the name", match: stringField("name")},
		{name: "status", kind: "token", doc: "active or inactive", match: tokenOf(func(o object) string { return activeStatus(o) })},
	}},
	{name: "HealthcareService", section: "services", toFHIR: healthcareService, params: []searchParam{
		{name: "name", kind: "string", doc: "the name", match: stringField("name")},
		{name: "active", kind: "token", doc: "true or false", match: tokenOf(func(o object) string { return strconv.FormatBool(active(o)) })},
	}},
	{name: "Appointment", section: "appointments", patient: "customer_id", toFHIR: appointment, writer: appointmentWriter,
		includes: map[string]string{"Appointment:patient": "customer_id"},
		params: []searchParam{
			{name: "date", kind: "date", doc: "the start", match: dateField("start")},
			{name: "status", kind: "token", doc: "booked, arrived, fulfilled, noshow, cancelled", match: tokenOf(func(o object) string { return appointmentStatus[str(o, "status")] })},
			{name: "practitioner", kind: "reference", doc: "Practitioner/{id}", match: referenceField("Practitioner", "user_id")},
			{name: "location", kind: "reference", doc: "Location/{id}", match: referenceField("Location", "location_id")},
		}},
	{name: "Condition", section: "diagnoses", patient: "customer_id", toFHIR: condition, params: []searchParam{
		{name: "recorded-date", kind: "date", doc: "the date diagnosed", match: dateField("diagnosed_on")},
		{name: "code", kind: "token", doc: "the ICD-10 code", match: tokenOf(func(o object) string { return str(o, "icd10_code") })},
	}},
	{name: "Observation", section: "measurements", patient: "customer_id", toFHIR: observation, params: []searchParam{
		{name: "date", kind: "date", doc: "when measured", match: dateField("measured_at")},
		{name: "code", kind: "token", doc: "the LOINC code (" + systemLOINC + "|…)", match: tokenOf(func(o object) string { return str(o, "loinc_code") })},
	}},
	{name: "DiagnosticReport", section: "lab-results", gdtResults: true, patient: "customer_id", toFHIR: diagnosticReport,
		// A report's observations are contained in it: the include adds nothing beside them.
		includes: map[string]string{"DiagnosticReport:result": ""},
		params: []searchParam{
			{name: "date", kind: "date", doc: "when the sample was collected, or the device examined", match: reportDate("collected_at")},
			{name: "issued", kind: "date", doc: "when the lab reported, or the device's result was stored", match: reportDate("reported_at")},
			{name: "status", kind: "token", doc: "final, preliminary, corrected", match: tokenOf(func(o object) string { return reportStatus(o) })},
		}},
	{name: "DocumentReference", section: "files", patient: "customer_id", toFHIR: documentReference, params: []searchParam{
		{name: "date", kind: "date", doc: "when the file was stored", match: dateField("created_at")},
		{name: "category", kind: "token", doc: "report, image, lab, letter, other", match: tokenOf(func(o object) string { return str(o, "category") })},
		{name: "contenttype", kind: "token", doc: "the file's media type, as sniffed from its bytes", match: tokenOf(func(o object) string { return str(o, "content_type") })},
	}},
	{name: "Binary", section: "files", binary: true},
	{name: "Schedule", section: "service-assignments", toFHIR: schedule, params: []searchParam{
		{name: "actor", kind: "reference", doc: "Practitioner/{id}, Location/{id} or HealthcareService/{id}", match: scheduleActor},
		{name: "active", kind: "token", doc: "true or false", match: tokenOf(func(o object) string { return strconv.FormatBool(active(o)) })},
	}},
	{name: "Slot", section: "booking", slots: true, params: slotParams},
	{name: "ServiceRequest", section: "device-orders", patient: "customer_id", toFHIR: serviceRequest, params: []searchParam{
		{name: "status", kind: "token", doc: "active, completed, revoked", match: tokenOf(func(o object) string { return orderStatus[str(o, "status")] })},
		{name: "authored", kind: "date", doc: "when the order was made", match: dateField("created_at")},
	}},
}

// resourceByName is the served resource of a type name, or nil.
func resourceByName(name string) *resourceType {
	for _, r := range resources {
		if r.name == name {
			return r
		}
	}
	return nil
}

// str is a string field of o, "" when absent or null.
func str(o object, field string) string {
	s, _ := o[field].(string)
	return s
}

// id is o's id as FHIR spells it: a customer number in decimal, else the uuid.
func idOf(o object) string { return ref(o, "id") }

// ref is the id a reference field holds ("" for none).
func ref(o object, field string) string {
	switch v := o[field].(type) {
	case json.Number:
		return v.String()
	case string:
		return v
	}
	return ""
}

func active(o object) bool {
	b, ok := o["active"].(bool)
	return !ok || b // the sections' default is true
}

func activeStatus(o object) string {
	if active(o) {
		return "active"
	}
	return "inactive"
}

// meta is the resource's version and time of its last change (the
// object's, issue "Versions").
func meta(o object) map[string]any {
	m := map[string]any{}
	if v, ok := o["version"].(json.Number); ok {
		m["versionId"] = v.String()
	}
	if t := str(o, "updated_at"); t != "" {
		m["lastUpdated"] = t
	}
	return m
}

// base is the start of every resource: its type, id and meta.
func base(name string, o object) map[string]any {
	return map[string]any{"resourceType": name, "id": idOf(o), "meta": meta(o)}
}

// humanName is a person's name: family, given and the title as a prefix.
func humanName(o object) map[string]any {
	n := map[string]any{"use": "official"}
	if f := str(o, "last_name"); f != "" {
		n["family"] = f
	}
	if g := str(o, "first_name"); g != "" {
		n["given"] = []string{g}
	}
	if t := str(o, "title"); t != "" {
		n["prefix"] = []string{t}
	}
	return n
}

// telecom is a phone and an e-mail address, where held.
func telecom(o object) []any {
	var t []any
	if p := str(o, "phone"); p != "" {
		t = append(t, map[string]any{"system": "phone", "value": p})
	}
	if e := str(o, "email"); e != "" {
		t = append(t, map[string]any{"system": "email", "value": e})
	}
	return t
}

// address is a native address as a FHIR Address.
func address(o object) map[string]any {
	a, ok := o["address"].(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]any{"use": "work"}
	if s, _ := a["street"].(string); s != "" {
		out["line"] = []string{s}
	}
	for from, to := range map[string]string{"postal_code": "postalCode", "city": "city", "country": "country"} {
		if s, _ := a[from].(string); s != "" {
			out[to] = s
		}
	}
	return out
}

// setNonEmpty sets key to v unless v is empty.
func setNonEmpty(m map[string]any, key string, v any) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
	case []any:
		if len(x) == 0 {
			return
		}
	case map[string]any:
		if x == nil {
			return
		}
	}
	m[key] = v
}

func coding(system, code string) map[string]any {
	return map[string]any{"coding": []any{map[string]any{"system": system, "code": code}}}
}

// gender is the customer's sex as an administrative gender: unknown
// where the record holds none (AT Core requires one).
func gender(o object) string {
	switch str(o, "sex") {
	case "female":
		return "female"
	case "male":
		return "male"
	case "diverse":
		return "other"
	}
	return "unknown"
}

// patient is a customer as an AT Core patient: the practice's number as
// the local patient id, the SVNR and the German KVNR where held.
func patient(x view, o object) map[string]any {
	r := base("Patient", o)
	ids := []any{map[string]any{"use": "usual", "type": coding(systemV2_0203, "PI"), "system": localSystem(x.company), "value": idOf(o)}}
	if s := str(o, "svnr"); s != "" {
		ids = append(ids, map[string]any{"use": "official", "type": coding(systemV2_0203, "SS"), "system": systemSVNR, "value": s,
			"assigner": map[string]any{"display": svnrAssigner}})
	}
	if k := str(o, "kvnr"); k != "" {
		ids = append(ids, map[string]any{"use": "official", "type": coding("http://fhir.de/CodeSystem/identifier-type-de-basis", "KVZ10"), "system": systemKVNR, "value": k})
	}
	r["identifier"] = ids
	r["active"] = true
	r["name"] = []any{humanName(o)}
	setNonEmpty(r, "telecom", telecom(o))
	r["gender"] = gender(o)
	setNonEmpty(r, "birthDate", str(o, "birth_date"))
	if a := address(o); a != nil {
		a["use"] = "home"
		r["address"] = []any{a}
	}
	return r
}

// practitioner is a user of the practice.
func practitioner(_ view, o object) map[string]any {
	r := base("Practitioner", o)
	r["active"] = active(o)
	r["name"] = []any{humanName(o)}
	setNonEmpty(r, "telecom", telecom(o))
	return r
}

// location is a site of the practice.
func location(_ view, o object) map[string]any {
	r := base("Location", o)
	r["status"] = activeStatus(o)
	setNonEmpty(r, "name", str(o, "name"))
	setNonEmpty(r, "telecom", telecom(o))
	if a := address(o); a != nil {
		r["address"] = a
	}
	return r
}

// healthcareService is a treatment the practice offers.
func healthcareService(_ view, o object) map[string]any {
	r := base("HealthcareService", o)
	r["active"] = active(o)
	setNonEmpty(r, "name", str(o, "name"))
	setNonEmpty(r, "comment", str(o, "description"))
	if c := str(o, "category"); c != "" {
		r["category"] = []any{map[string]any{"text": c}}
	}
	return r
}

// appointmentStatus maps the native statuses to FHIR's.
var appointmentStatus = map[string]string{"booked": "booked", "arrived": "arrived", "completed": "fulfilled", "no_show": "noshow", "cancelled": "cancelled"}

// appointment is an appointment with its patient, practitioner and location as participants.
func appointment(_ view, o object) map[string]any {
	r := base("Appointment", o)
	r["status"] = appointmentStatus[str(o, "status")]
	setNonEmpty(r, "description", str(o, "title"))
	setNonEmpty(r, "comment", str(o, "note"))
	setNonEmpty(r, "start", str(o, "start"))
	setNonEmpty(r, "end", str(o, "end"))
	setNonEmpty(r, "created", dateOnly(str(o, "created_at")))
	if reason := str(o, "cancellation_reason"); reason != "" {
		r["cancelationReason"] = map[string]any{"text": reason}
	}
	var who []any
	for _, p := range []struct{ field, typ string }{{"customer_id", "Patient"}, {"user_id", "Practitioner"}, {"location_id", "Location"}, {"service_id", "HealthcareService"}} {
		if id := ref(o, p.field); id != "" {
			who = append(who, map[string]any{"actor": map[string]any{"reference": p.typ + "/" + id}, "status": "accepted"})
		}
	}
	r["participant"] = who
	return r
}

// dateOnly is the date of an RFC 3339 time.
func dateOnly(t string) string {
	d, _, _ := strings.Cut(t, "T")
	return d
}

// icdSystems are the code systems of the ICD-10 editions the diagnoses name.
var icdSystems = map[string]string{
	"icd10_at":  "https://termgit.elga.gv.at/CodeSystem/icd-10-bmsgpk",
	"icd10_gm":  "http://fhir.de/CodeSystem/bfarm/icd-10-gm",
	"icd10_who": "http://hl7.org/fhir/sid/icd-10",
}

// condition is a diagnosis.
func condition(_ view, o object) map[string]any {
	r := base("Condition", o)
	r["subject"] = map[string]any{"reference": "Patient/" + ref(o, "customer_id")}
	code := map[string]any{}
	if c := str(o, "icd10_code"); c != "" {
		system := str(o, "code_system")
		if system == "" {
			system = "icd10_at"
		}
		cd := map[string]any{"system": icdSystems[system], "code": c}
		setNonEmpty(cd, "version", str(o, "code_version"))
		code["coding"] = []any{cd}
	}
	setNonEmpty(code, "text", str(o, "text"))
	r["code"] = code
	verification := map[string]string{"confirmed": "confirmed", "suspected": "provisional", "excluded": "refuted", "status_post": "confirmed"}
	certainty := str(o, "certainty")
	if certainty == "" {
		certainty = "confirmed"
	}
	r["verificationStatus"] = coding("http://terminology.hl7.org/CodeSystem/condition-ver-status", verification[certainty])
	switch certainty {
	case "status_post":
		r["clinicalStatus"] = coding("http://terminology.hl7.org/CodeSystem/condition-clinical", "resolved")
	case "confirmed", "suspected":
		r["clinicalStatus"] = coding("http://terminology.hl7.org/CodeSystem/condition-clinical", "active")
	}
	category := "encounter-diagnosis"
	if str(o, "kind") == "permanent" {
		category = "problem-list-item"
	}
	r["category"] = []any{coding("http://terminology.hl7.org/CodeSystem/condition-category", category)}
	if side := str(o, "side"); side != "" {
		r["bodySite"] = []any{map[string]any{"text": side}}
	}
	setNonEmpty(r, "recordedDate", str(o, "diagnosed_on"))
	return r
}

// decimal reads a native decimal (a JSON string or number) as a JSON number.
func decimal(v any) (json.Number, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	default:
		return "", false
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return "", false
	}
	return json.Number(s), true
}

// quantity is a value in a UCUM unit.
func quantity(value any, unit string) map[string]any {
	v, ok := decimal(value)
	if !ok {
		return nil
	}
	q := map[string]any{"value": v}
	if unit != "" {
		q["unit"], q["system"], q["code"] = unit, systemUCUM, unit
	}
	return q
}

// observation is a measurement: a vital sign with its LOINC code, or what
// the practice named it.
func observation(_ view, o object) map[string]any {
	r := base("Observation", o)
	r["status"] = "final"
	r["category"] = []any{coding("http://terminology.hl7.org/CodeSystem/observation-category", "vital-signs")}
	code := map[string]any{"text": strings.ReplaceAll(str(o, "type"), "_", " ")}
	if n := str(o, "name"); n != "" {
		code["text"] = n
	}
	if l := str(o, "loinc_code"); l != "" {
		code["coding"] = []any{map[string]any{"system": systemLOINC, "code": l}}
	}
	r["code"] = code
	r["subject"] = map[string]any{"reference": "Patient/" + ref(o, "customer_id")}
	setNonEmpty(r, "effectiveDateTime", str(o, "measured_at"))
	if q := quantity(o["value"], str(o, "unit")); q != nil {
		r["valueQuantity"] = q
	}
	if comps, ok := o["components"].([]any); ok && len(comps) > 0 {
		var out []any
		for _, c := range comps {
			cm, _ := c.(map[string]any)
			comp := map[string]any{"code": map[string]any{"coding": []any{map[string]any{"system": systemLOINC, "code": str(object(cm), "code")}}}}
			if q := quantity(cm["value"], str(object(cm), "unit")); q != nil {
				comp["valueQuantity"] = q
			}
			out = append(out, comp)
		}
		r["component"] = out
	}
	if n := str(o, "note"); n != "" {
		r["note"] = []any{map[string]any{"text": n}}
	}
	return r
}

// labReport is a lab result as a DiagnosticReport: each of its rows an
// Observation contained in it (value or text, unit, reference range,
// interpretation from the lab's flag), the lab as its performer.
func labReport(_ view, o object) map[string]any {
	r := base("DiagnosticReport", o)
	status := str(o, "status")
	if status == "" {
		status = "final"
	}
	r["status"] = status
	r["category"] = []any{coding("http://terminology.hl7.org/CodeSystem/v2-0074", "LAB")}
	r["code"] = map[string]any{"text": "Laboratory report"}
	patientRef := map[string]any{"reference": "Patient/" + ref(o, "customer_id")}
	r["subject"] = patientRef
	setNonEmpty(r, "effectiveDateTime", str(o, "collected_at"))
	setNonEmpty(r, "issued", str(o, "reported_at"))
	if lab := str(o, "lab_name"); lab != "" {
		r["performer"] = []any{map[string]any{"display": lab}}
	}
	if n := str(o, "order_number"); n != "" {
		r["identifier"] = []any{map[string]any{"value": n}}
	}
	rows, _ := o["results"].([]any)
	var contained, results []any
	for i, row := range rows {
		v, _ := row.(map[string]any)
		x := object(v)
		id := "r" + strconv.Itoa(i+1)
		obs := map[string]any{"resourceType": "Observation", "id": id, "status": status, "subject": patientRef,
			"category": []any{coding("http://terminology.hl7.org/CodeSystem/observation-category", "laboratory")}}
		code := map[string]any{"text": str(x, "name")}
		var codings []any
		if l := str(x, "loinc_code"); l != "" {
			codings = append(codings, map[string]any{"system": systemLOINC, "code": l})
		}
		if c := str(x, "code"); c != "" {
			codings = append(codings, map[string]any{"code": c}) // the lab's own code: its system unknown
		}
		setNonEmpty(code, "coding", codings)
		obs["code"] = code
		setNonEmpty(obs, "effectiveDateTime", str(o, "collected_at"))
		if q, ok := decimal(x["value"]); ok {
			vq := map[string]any{"value": q}
			setNonEmpty(vq, "unit", str(x, "unit")) // the lab's unit as written: not claimed to be UCUM
			obs["valueQuantity"] = vq
		} else {
			setNonEmpty(obs, "valueString", str(x, "value_text"))
		}
		rr := map[string]any{}
		if low, ok := decimal(x["reference_low"]); ok {
			rr["low"] = labQuantity(low, str(x, "unit"))
		}
		if high, ok := decimal(x["reference_high"]); ok {
			rr["high"] = labQuantity(high, str(x, "unit"))
		}
		setNonEmpty(rr, "text", str(x, "reference_text"))
		if len(rr) > 0 {
			obs["referenceRange"] = []any{rr}
		}
		if code, ok := interpretations[str(x, "flag")]; ok {
			obs["interpretation"] = []any{coding("http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation", code)}
		}
		if c := str(x, "comment"); c != "" {
			obs["note"] = []any{map[string]any{"text": c}}
		}
		contained = append(contained, obs)
		results = append(results, map[string]any{"reference": "#" + id})
	}
	setNonEmpty(r, "contained", contained)
	setNonEmpty(r, "result", results)
	return r
}

// diagnosticReport is a lab result, or a device's GDT result file.
func diagnosticReport(x view, o object) map[string]any {
	if _, isFile := o["gdt"]; isFile {
		return gdtReport(x, o)
	}
	return labReport(x, o)
}

// examination is a GDT result file's examination (GDTInfo), nil for anything else.
func examination(o object) object {
	g, _ := o["gdt"].(map[string]any)
	return object(g)
}

// reportDate matches a report's date: a lab result's field, or for a GDT
// result when the device examined (collected_at) or when it was stored.
func reportDate(field string) func(o object, v value) bool {
	lab := dateField(field)
	return func(o object, v value) bool {
		g := examination(o)
		if g == nil {
			return lab(o, v)
		}
		at := str(o, "created_at")
		if field == "collected_at" {
			if at = str(g, "examined_at"); at == "" {
				at = str(g, "examined_on")
			}
		}
		from, to, ok := dateRange(at)
		return ok && v.inRange(from, to)
	}
}

// reportStatus is a report's status: a GDT result is final.
func reportStatus(o object) string {
	if examination(o) != nil {
		return "final"
	}
	if s := str(o, "status"); s != "" {
		return s
	}
	return "final"
}

// gdtReport is a device's GDT result: the examination (8402), when
// (6200/6201), the findings (6220) as conclusion, the order it answers,
// the file itself as the presented form, and each test (8410) an
// Observation contained in it: its value (8420) and unit (8421), the
// normal range (8460–8462), the limit indicator (8422) as interpretation,
// comments and result text (8470, 8480) as notes.
func gdtReport(_ view, o object) map[string]any {
	r := base("DiagnosticReport", o)
	g := examination(o)
	r["status"] = "final"
	code := map[string]any{"text": "Device examination"}
	setNonEmpty(code, "text", str(g, "procedure_code"))
	r["code"] = code
	patientRef := map[string]any{"reference": "Patient/" + ref(o, "customer_id")}
	r["subject"] = patientRef
	when := str(g, "examined_at")
	if when == "" {
		when = str(g, "examined_on")
	}
	setNonEmpty(r, "effectiveDateTime", when)
	setNonEmpty(r, "issued", str(o, "created_at"))
	if n := str(g, "order_number"); n != "" {
		r["identifier"] = []any{map[string]any{"value": n}}
	}
	if order := str(o, "device_order_id"); order != "" {
		r["basedOn"] = []any{map[string]any{"reference": "ServiceRequest/" + order}}
	}
	setNonEmpty(r, "conclusion", str(g, "findings"))
	r["presentedForm"] = []any{map[string]any{"contentType": str(o, "content_type"), "url": "Binary/" + idOf(o), "title": str(o, "name")}}
	tests, _ := g["tests"].([]any)
	var contained, results []any
	for i, t := range tests {
		m, _ := t.(map[string]any)
		tx := object(m)
		id := "t" + strconv.Itoa(i+1)
		obs := map[string]any{"resourceType": "Observation", "id": id, "status": "final", "subject": patientRef}
		code := map[string]any{"coding": []any{map[string]any{"code": str(tx, "id")}}} // the device's test id: its system is the device's
		setNonEmpty(code, "text", str(tx, "name"))
		obs["code"] = code
		setNonEmpty(obs, "effectiveDateTime", when)
		unit := str(tx, "unit")
		if v, ok := gdtDecimal(str(tx, "value")); ok {
			vq := map[string]any{"value": v}
			setNonEmpty(vq, "unit", unit)
			obs["valueQuantity"] = vq
		} else {
			setNonEmpty(obs, "valueString", str(tx, "value"))
		}
		rr := map[string]any{}
		if low, ok := gdtDecimal(str(tx, "normal_low")); ok {
			rr["low"] = labQuantity(low, unit)
		}
		if high, ok := gdtDecimal(str(tx, "normal_high")); ok {
			rr["high"] = labQuantity(high, unit)
		}
		setNonEmpty(rr, "text", strings.Join(strs(tx["normal_text"]), " "))
		if len(rr) > 0 {
			obs["referenceRange"] = []any{rr}
		}
		if code, ok := limitIndicators[strings.ToUpper(str(tx, "limit_indicator"))]; ok {
			obs["interpretation"] = []any{coding("http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation", code)}
		}
		var notes []any
		for _, n := range append(strs(tx["comments"]), strs(tx["result_text"])...) {
			notes = append(notes, map[string]any{"text": n})
		}
		setNonEmpty(obs, "note", notes)
		contained = append(contained, obs)
		results = append(results, map[string]any{"reference": "#" + id})
	}
	setNonEmpty(r, "contained", contained)
	setNonEmpty(r, "result", results)
	return r
}

// limitIndicators are GDT's limit indicators (8422) as HL7 interpretations.
var limitIndicators = map[string]string{"+": "H", "H": "H", "++": "HH", "HH": "HH", "-": "L", "L": "L", "--": "LL", "LL": "LL",
	"!": "A", "N": "N"}

// gdtNumber is a number as a device writes one, with a decimal point or
// comma, in the form a JSON number (and a FHIR decimal) takes as it is.
var gdtNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,17})([.,][0-9]{1,18})?$`)

// gdtDecimal reads a GDT number, keeping its digits (a FHIR decimal's
// precision is what it shows); anything else is no number.
func gdtDecimal(s string) (json.Number, bool) {
	s = strings.TrimSpace(s)
	if !gdtNumber.MatchString(s) {
		return "", false
	}
	return json.Number(strings.Replace(s, ",", ".", 1)), true
}

// strs is a JSON array of strings.
func strs(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := it.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// interpretations are the lab's flags as HL7 observation interpretations.
var interpretations = map[string]string{"normal": "N", "low": "L", "high": "H", "abnormal": "A", "critical": "AA"}

func labQuantity(v json.Number, unit string) map[string]any {
	q := map[string]any{"value": v}
	setNonEmpty(q, "unit", unit)
	return q
}

// serviceRequest is a device order: the examination praxis asks a device
// for (GDT 6302), with its procedure and tests (8402, 8410), numbered as
// the practice numbers it (8310).
func serviceRequest(x view, o object) map[string]any {
	r := base("ServiceRequest", o)
	r["status"] = orderStatus[str(o, "status")]
	r["intent"] = "order"
	r["subject"] = map[string]any{"reference": "Patient/" + ref(o, "customer_id")}
	r["identifier"] = []any{map[string]any{
		"type":   coding(systemV2_0203, "PLAC"),
		"system": "urn:praxis:" + x.company.String() + ":device-orders", "value": ref(o, "number"),
	}}
	if p := str(o, "procedure"); p != "" {
		r["code"] = map[string]any{"text": p}
	}
	if tests, ok := o["tests"].([]any); ok && len(tests) > 0 {
		var details []any
		for _, t := range tests {
			if s, ok := t.(string); ok {
				details = append(details, map[string]any{"text": s})
			}
		}
		setNonEmpty(r, "orderDetail", details)
	}
	setNonEmpty(r, "authoredOn", str(o, "created_at"))
	if n := str(o, "comment"); n != "" {
		r["note"] = []any{map[string]any{"text": n}}
	}
	return r
}

// documentReference is a stored file: what it is (its media type as
// sniffed, its name, size and category), whose it is, where it came from,
// and its bytes at Binary/{id}. A device's result names its order.
func documentReference(_ view, o object) map[string]any {
	r := base("DocumentReference", o)
	r["status"] = "current"
	r["subject"] = map[string]any{"reference": "Patient/" + ref(o, "customer_id")}
	setNonEmpty(r, "date", str(o, "created_at"))
	if c := str(o, "category"); c != "" {
		r["category"] = []any{map[string]any{"coding": []any{map[string]any{"system": "urn:praxis:file-categories", "code": c}}, "text": c}}
	}
	if src, ok := fileSources[str(o, "source")]; ok {
		r["type"] = map[string]any{"text": src}
	}
	setNonEmpty(r, "description", str(o, "description"))
	att := map[string]any{"contentType": str(o, "content_type"), "url": "Binary/" + idOf(o), "title": str(o, "name")}
	if size, ok := o["size"].(json.Number); ok {
		att["size"] = size
	}
	setNonEmpty(att, "creation", str(o, "created_at"))
	r["content"] = []any{map[string]any{"attachment": att}}
	if order := str(o, "device_order_id"); order != "" {
		r["context"] = map[string]any{"related": []any{map[string]any{"reference": "ServiceRequest/" + order}}}
	}
	return r
}

// fileSources name where a file came from.
var fileSources = map[string]string{"api": "uploaded through the API", "gdt": "a device's GDT result", "sonogdt": "a SonoGdt result"}

// schedule is a service assignment: a practitioner offering a service,
// at one location or at each of theirs; its free slots are the booking's.
func schedule(_ view, o object) map[string]any {
	r := base("Schedule", o)
	r["active"] = active(o)
	actors := []any{map[string]any{"reference": "Practitioner/" + ref(o, "user_id")}}
	if loc := ref(o, "location_id"); loc != "" {
		actors = append(actors, map[string]any{"reference": "Location/" + loc})
	}
	r["actor"] = append(actors, map[string]any{"reference": "HealthcareService/" + ref(o, "service_id")})
	if d := ref(o, "duration_minutes"); d != "" {
		r["comment"] = "appointments of " + d + " minutes"
	}
	return r
}

// scheduleActor matches a schedule by one of its actors.
func scheduleActor(o object, v value) bool {
	for _, a := range []struct{ typ, field string }{{"Practitioner", "user_id"}, {"Location", "location_id"}, {"HealthcareService", "service_id"}} {
		if id, ok := referenceID(a.typ, v.raw); ok && id == ref(o, a.field) {
			return true
		}
	}
	return false
}

// orderStatus is a device order's status as a request's: open, written
// and taken are active; a failed order is revoked like a cancelled one.
var orderStatus = map[string]string{"open": "active", "written": "active", "taken": "active", "done": "completed",
	"cancelled": "revoked", "failed": "revoked"}

// organization is the company.
func organization(c domain.Company) map[string]any {
	return map[string]any{"resourceType": "Organization", "id": c.ID.String(), "active": true, "name": c.Name,
		"meta": map[string]any{"lastUpdated": c.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z")}}
}
