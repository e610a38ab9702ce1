package fhir

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/praxis-health/praxis/domain"
)

// The resources the door serves, each a view of one native section: the
// table the interactions, the search and the CapabilityStatement are read
// from (no second list is kept by hand). A mapping writes only what the
// record holds: an absent field is absent in the resource, never a default.

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
	// customers ("": a report's rows, the Observations it names as results).
	includes map[string]string
	toFHIR   func(x view, o object) resource
	// writer is how the type is written; nil for a type only read.
	writer *writer
	// binary: the type is read as the bytes of a file (Binary), never searched or exported.
	binary bool
	// slots: the type is computed by the booking rules (Slot): its own
	// search and read, never exported.
	slots bool
	// then are the feeds the type reads after its section's, in order
	// (readers.go): the GDT result files, a report's rows.
	then []feed
	// catalogue: the section is the practice's own staff or catalogue, a
	// few hundred objects at most; a name its search matches in memory
	// reads it to the end if need be (no maxReads bound).
	catalogue bool
}

// view is what a mapping needs beside the object: the company (the local
// patient numbers' system).
type view struct{ company domain.CompanyID }

// resources is the table, in the CapabilityStatement's order.
var resources = []*resourceType{
	{name: "Patient", section: "customers", toFHIR: patient, writer: patientWriter, params: []searchParam{
		{name: "identifier", kind: "token", doc: "system|value: the SVNR (" + systemSVNR + "), the KVNR (" + systemKVNR + ") or the practice's number; a value alone any of them. An SVNR or KVNR with a wrong check digit is refused", query: identifierQuery},
		{name: "name", kind: "string", doc: "a word of the last or the first name starts with this; case, accents and ü=ue, ö=oe, ä=ae, ß=ss folded (Müller = Mueller = muller)", query: nameQuery(domain.SearchName), modifiers: []string{"exact", "contains"}},
		{name: "family", kind: "string", doc: "a word of the last name starts with this, folded as name; :exact as written, :contains anywhere (3 characters at least)", query: nameQuery(domain.SearchFamily), modifiers: []string{"exact", "contains"}},
		{name: "given", kind: "string", doc: "a first name starts with this, folded as name; :exact as written, :contains anywhere (3 characters at least)", query: nameQuery(domain.SearchGiven), modifiers: []string{"exact", "contains"}},
		{name: "phonetic", kind: "string", doc: "a word of the last or the first name sounds like this: Kölner Phonetik (Meier = Meyer = Maier = Mayr = Mayer)", query: phoneticQuery,
			definition: "http://hl7.org/fhir/SearchParameter/individual-phonetic"},
		{name: "birthdate", kind: "date", doc: "the birth date, with the prefixes eq, ne, gt, ge, lt, le at day precision", query: birthdateQuery},
		{name: "gender", kind: "token", doc: "male, female, other, unknown", query: genderQuery},
		{name: "phone", kind: "token", doc: "the phone number: E.164, or national in the practice's country", query: telecomQuery(domain.SearchPhone)},
		{name: "email", kind: "token", doc: "the e-mail address, in any case", query: telecomQuery(domain.SearchEmail)},
	}},
	{name: "Practitioner", section: "users", toFHIR: practitioner, catalogue: true, params: []searchParam{
		{name: "family", kind: "string", doc: "the last name", match: stringField("last_name")},
		{name: "given", kind: "string", doc: "the first name", match: stringField("first_name")},
		{name: "active", kind: "token", doc: "true or false", query: payloadTokenOr("active", "true", nil)},
	}},
	{name: "Organization"},
	{name: "Location", section: "locations", toFHIR: location, catalogue: true, params: []searchParam{
		{name: "name", kind: "string", doc: "the name", match: stringField("name")},
		{name: "status", kind: "token", doc: "active or inactive", query: payloadTokenOr("active", "true", activeStatuses)},
	}},
	{name: "HealthcareService", section: "services", toFHIR: healthcareService, catalogue: true, params: []searchParam{
		{name: "name", kind: "string", doc: "the name", match: stringField("name")},
		{name: "active", kind: "token", doc: "true or false", query: payloadTokenOr("active", "true", nil)},
	}},
	{name: "Appointment", section: "appointments", patient: "customer_id", toFHIR: appointment, writer: appointmentWriter,
		includes: map[string]string{"Appointment:patient": "customer_id"},
		params: []searchParam{
			{name: "date", kind: "date", doc: "the start", query: payloadDate("start")},
			{name: "status", kind: "token", doc: "booked, arrived, fulfilled, noshow, cancelled", query: payloadToken("status", appointmentStatus)},
			{name: "practitioner", kind: "reference", doc: "Practitioner/{id}", query: payloadReference("Practitioner", "user_id")},
			{name: "location", kind: "reference", doc: "Location/{id}", query: payloadReference("Location", "location_id")},
		}},
	{name: "Condition", section: "diagnoses", patient: "customer_id", toFHIR: condition, params: []searchParam{
		{name: "recorded-date", kind: "date", doc: "the date diagnosed", query: payloadDate("diagnosed_on")},
		{name: "code", kind: "token", doc: "the ICD-10 code", query: payloadToken("icd10_code", nil)},
	}},
	{name: "Observation", section: "measurements", then: []feed{labResultRows, gdtResultTests}, patient: "customer_id", toFHIR: observation, params: []searchParam{
		{name: "date", kind: "date", doc: "when measured", match: dateField("measured_at"), query: observedQuery},
		{name: "code", kind: "token", doc: "the LOINC code (" + systemLOINC + "|…)", match: tokenOf(func(o object) string { return str(o, "loinc_code") }), query: tokenQuery(domain.SearchCode)},
	}},
	{name: "DiagnosticReport", section: "lab-results", then: []feed{gdtResultFiles}, patient: "customer_id", toFHIR: diagnosticReport,
		// A report's rows are Observations named as its results (rows.go).
		includes: map[string]string{"DiagnosticReport:result": ""},
		params: []searchParam{
			{name: "date", kind: "date", doc: "when the sample was collected, or the device examined", match: reportDate("collected_at"), query: observedQuery},
			{name: "issued", kind: "date", doc: "when the lab reported, or the device's result was stored", match: reportDate("reported_at"), query: payloadDate("reported_at")},
			{name: "status", kind: "token", doc: "final, preliminary, corrected", match: tokenOf(func(o object) string { return reportStatus(o) }), query: payloadTokenOr("status", "final", nil)},
		}},
	{name: "DocumentReference", section: "files", patient: "customer_id", toFHIR: documentReference, params: []searchParam{
		{name: "date", kind: "date", doc: "when the file was stored", query: instantQuery(domain.SearchStored)},
		{name: "category", kind: "token", doc: "report, image, lab, letter, other", query: tokenQuery(domain.SearchCategory)},
		{name: "contenttype", kind: "token", doc: "the file's media type, as sniffed from its bytes", query: tokenQuery(domain.SearchContentType)},
	}},
	{name: "Binary", section: "files", binary: true},
	{name: "Schedule", section: "service-assignments", toFHIR: schedule, params: []searchParam{
		{name: "actor", kind: "reference", doc: "Practitioner/{id}, Location/{id} or HealthcareService/{id}", query: scheduleActorQuery},
		{name: "active", kind: "token", doc: "true or false", query: payloadTokenOr("active", "true", nil)},
	}},
	{name: "Slot", section: "booking", slots: true, params: slotParams},
	{name: "ServiceRequest", section: "device-orders", patient: "customer_id", toFHIR: serviceRequest, params: []searchParam{
		{name: "status", kind: "token", doc: "active, completed, revoked", query: payloadToken("status", orderStatus)},
		{name: "authored", kind: "date", doc: "when the order was made", query: instantQuery(domain.SearchStored)},
	}},
}

// searchable: the type's search reaches the query (Patient's: _total and
// _summary=count are served there).
func (rt *resourceType) searchable() bool { return rt.section == "customers" }

// filtered: the type's parameters with a query reach it as conditions of
// ListQuery.Where (queries.go) — on the payload's fields, the section's
// columns, the observed rows — rather than as a patient search's.
func (rt *resourceType) filtered() bool {
	return !rt.searchable() && slices.ContainsFunc(rt.params, func(p searchParam) bool { return p.query != nil })
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

func activeStatus(o object) string {
	if active(o) {
		return "active"
	}
	return "inactive"
}

// metaOf is the resource's version and time of its last change (the
// object's, issue "Versions").
func metaOf(o object) *meta {
	m := meta{LastUpdated: str(o, "updated_at")}
	m.VersionID = number(o, "version").String()
	if m == (meta{}) {
		return nil
	}
	return &m
}

// headOf is the start of every resource: its type, id and meta.
func headOf(name string, o object) head {
	return head{ResourceType: name, ID: idOf(o), Meta: metaOf(o)}
}

// nameOf is a person's name: family, given and the title as a prefix.
func nameOf(o object) []humanName {
	n := humanName{Use: "official", Family: str(o, "last_name")}
	if g := str(o, "first_name"); g != "" {
		n.Given = []string{g}
	}
	if t := str(o, "title"); t != "" {
		n.Prefix = []string{t}
	}
	return []humanName{n}
}

// telecom is a phone and an e-mail address, where held.
func telecom(o object) []contactPoint {
	var t []contactPoint
	if p := str(o, "phone"); p != "" {
		t = append(t, contactPoint{System: "phone", Value: p})
	}
	if e := str(o, "email"); e != "" {
		t = append(t, contactPoint{System: "email", Value: e})
	}
	return t
}

// addressOf is a native address as a FHIR Address of the given use.
func addressOf(o object, use string) *address {
	x := o.obj("address")
	if x.v == nil {
		return nil
	}
	out := address{Use: use, City: str(x, "city"), PostalCode: str(x, "postal_code"), Country: str(x, "country")}
	if s := str(x, "street"); s != "" {
		out.Line = []string{s}
	}
	return &out
}

// concept is a code of a system.
func concept(system, code string) *codeableConcept {
	return &codeableConcept{Coding: []coding{{System: system, Code: code}}}
}

// text is a concept that has a text only, or nil for none.
func text(s string) []codeableConcept {
	if s == "" {
		return nil
	}
	return []codeableConcept{{Text: s}}
}

// patientOf is a reference to the patient the object names.
func patientOf(o object) reference {
	return reference{Reference: "Patient/" + ref(o, "customer_id")}
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
func patient(x view, o object) resource {
	r := patientResource{head: headOf("Patient", o), Active: true, Name: nameOf(o), Telecom: telecom(o), Gender: gender(o), BirthDate: str(o, "birth_date")}
	r.Identifier = []identifier{{Use: "usual", Type: concept(systemV2_0203, "PI"), System: localSystem(x.company), Value: idOf(o)}}
	if s := str(o, "svnr"); s != "" {
		r.Identifier = append(r.Identifier, identifier{Use: "official", Type: concept(systemV2_0203, "SS"), System: systemSVNR, Value: s,
			Assigner: &reference{Display: svnrAssigner}})
	}
	if k := str(o, "kvnr"); k != "" {
		r.Identifier = append(r.Identifier, identifier{Use: "official", Type: concept("http://fhir.de/CodeSystem/identifier-type-de-basis", "KVZ10"), System: systemKVNR, Value: k})
	}
	if a := addressOf(o, "home"); a != nil {
		r.Address = []address{*a}
	}
	return r
}

// practitioner is a user of the practice.
func practitioner(_ view, o object) resource {
	return practitionerResource{head: headOf("Practitioner", o), Active: active(o), Name: nameOf(o), Telecom: telecom(o)}
}

// location is a site of the practice.
func location(_ view, o object) resource {
	return locationResource{head: headOf("Location", o), Status: activeStatus(o), Name: str(o, "name"), Telecom: telecom(o), Address: addressOf(o, "work")}
}

// healthcareService is a treatment the practice offers.
func healthcareService(_ view, o object) resource {
	return healthcareServiceResource{head: headOf("HealthcareService", o), Active: active(o), Name: str(o, "name"),
		Comment: str(o, "description"), Category: text(str(o, "category"))}
}

// appointmentStatus maps the native statuses to FHIR's.
var appointmentStatus = map[string]string{"booked": "booked", "arrived": "arrived", "completed": "fulfilled", "no_show": "noshow", "cancelled": "cancelled"}

// appointment is an appointment with its patient, practitioner and location as participants.
func appointment(_ view, o object) resource {
	r := appointmentResource{head: headOf("Appointment", o), Status: appointmentStatus[str(o, "status")], Description: str(o, "title"),
		Comment: str(o, "note"), Start: str(o, "start"), End: str(o, "end"), Created: dateOnly(str(o, "created_at"))}
	if reason := str(o, "cancellation_reason"); reason != "" {
		r.CancelationReason = &codeableConcept{Text: reason}
	}
	for _, p := range []struct{ field, typ string }{{"customer_id", "Patient"}, {"user_id", "Practitioner"}, {"location_id", "Location"}, {"service_id", "HealthcareService"}} {
		if id := ref(o, p.field); id != "" {
			r.Participant = append(r.Participant, appointmentParticipant{Actor: reference{Reference: p.typ + "/" + id}, Status: "accepted"})
		}
	}
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
func condition(_ view, o object) resource {
	r := conditionResource{head: headOf("Condition", o), Subject: patientOf(o), RecordedDate: str(o, "diagnosed_on"), BodySite: text(str(o, "side"))}
	code := codeableConcept{Text: str(o, "text")}
	if c := str(o, "icd10_code"); c != "" {
		system := str(o, "code_system")
		if system == "" {
			system = "icd10_at"
		}
		code.Coding = []coding{{System: icdSystems[system], Version: str(o, "code_version"), Code: c}}
	}
	if code.Text != "" || code.Coding != nil {
		r.Code = &code
	}
	verification := map[string]string{"confirmed": "confirmed", "suspected": "provisional", "excluded": "refuted", "status_post": "confirmed"}
	certainty := str(o, "certainty")
	if certainty == "" {
		certainty = "confirmed"
	}
	r.VerificationStatus = concept("http://terminology.hl7.org/CodeSystem/condition-ver-status", verification[certainty])
	switch certainty {
	case "status_post":
		r.ClinicalStatus = concept("http://terminology.hl7.org/CodeSystem/condition-clinical", "resolved")
	case "confirmed", "suspected":
		r.ClinicalStatus = concept("http://terminology.hl7.org/CodeSystem/condition-clinical", "active")
	}
	category := "encounter-diagnosis"
	if str(o, "kind") == "permanent" {
		category = "problem-list-item"
	}
	r.Category = []codeableConcept{*concept("http://terminology.hl7.org/CodeSystem/condition-category", category)}
	return r
}

// ucum is a value in a UCUM unit, nil for no number.
func ucum(o object, field, unit string) *quantity {
	v, ok := decimal(o, field)
	if !ok {
		return nil
	}
	q := quantity{Value: v}
	if unit != "" {
		q.Unit, q.System, q.Code = unit, systemUCUM, unit
	}
	return &q
}

// Categories every measurement, lab row or report shares (read only).
var (
	vitalSigns  = []codeableConcept{*concept("http://terminology.hl7.org/CodeSystem/observation-category", "vital-signs")}
	laboratory  = []codeableConcept{*concept("http://terminology.hl7.org/CodeSystem/observation-category", "laboratory")}
	labCategory = []codeableConcept{*concept("http://terminology.hl7.org/CodeSystem/v2-0074", "LAB")}
)

// observation is a measurement: a vital sign with its LOINC code, or what
// the practice named it; or a row of a report (rows.go).
func observation(_ view, o object) resource {
	if o.has("row") {
		return rowObservation(o)
	}
	subject := patientOf(o)
	r := observationResource{head: headOf("Observation", o), Status: "final", Category: vitalSigns, Subject: &subject,
		EffectiveDateTime: str(o, "measured_at"), ValueQuantity: ucum(o, "value", str(o, "unit"))}
	r.Code.Text = strings.ReplaceAll(str(o, "type"), "_", " ")
	if n := str(o, "name"); n != "" {
		r.Code.Text = n
	}
	if l := str(o, "loinc_code"); l != "" {
		r.Code.Coding = []coding{{System: systemLOINC, Code: l}}
	}
	for _, c := range o.items("components") {
		r.Component = append(r.Component, observationComponent{
			Code:          codeableConcept{Coding: []coding{{System: systemLOINC, Code: str(c, "code")}}},
			ValueQuantity: ucum(c, "value", str(c, "unit")),
		})
	}
	r.Note = notes(str(o, "note"))
	return r
}

// notes are the non-empty texts as annotations.
func notes(texts ...string) []annotation {
	var out []annotation
	for _, t := range texts {
		if t != "" {
			out = append(out, annotation{Text: t})
		}
	}
	return out
}

// labReport is a lab result as a DiagnosticReport: its rows are
// Observations of their own (rows.go), which it names as its results; the
// lab is its performer.
func labReport(_ view, o object) resource {
	subject := patientOf(o)
	r := diagnosticReportResource{head: headOf("DiagnosticReport", o), Status: reportStatus(o), Category: labCategory,
		Code: codeableConcept{Text: "Laboratory report"}, Subject: &subject, EffectiveDateTime: str(o, "collected_at"), Issued: str(o, "reported_at"),
		Result: rowReferences(o)}
	if lab := str(o, "lab_name"); lab != "" {
		r.Performer = []reference{{Display: lab}}
	}
	if n := str(o, "order_number"); n != "" {
		r.Identifier = []identifier{{Value: n}}
	}
	return r
}

// diagnosticReport is a lab result, or a device's GDT result file.
func diagnosticReport(x view, o object) resource {
	if o.has("gdt") {
		return gdtReport(x, o)
	}
	return labReport(x, o)
}

// examination is a GDT result file's examination (gdt.Info), nil for anything else.
func examination(o object) object { return o.obj("gdt") }

// reportDate matches a report's date: a lab result's field, or for a GDT
// result when the device examined (collected_at) or when it was stored.
func reportDate(field string) func(o object, v value) bool {
	lab := dateField(field)
	return func(o object, v value) bool {
		g := examination(o)
		if g.v == nil {
			return lab(o, v)
		}
		at := str(o, "created_at")
		if field == "collected_at" {
			at = examinedAt(g)
		}
		from, to, ok := domain.ValueSpan(at)
		return ok && v.inRange(from, to)
	}
}

// reportStatus is a report's status: a GDT result is final.
func reportStatus(o object) string {
	if examination(o).v != nil {
		return "final"
	}
	if s := str(o, "status"); s != "" {
		return s
	}
	return "final"
}

// gdtReport is a device's GDT result: the examination (8402), when
// (6200/6201), the findings (6220) as conclusion, the order it answers,
// the file itself as the presented form; its tests (8410) are
// Observations of their own (rows.go), which it names as its results.
func gdtReport(_ view, o object) resource {
	g := examination(o)
	subject := patientOf(o)
	r := diagnosticReportResource{head: headOf("DiagnosticReport", o), Status: "final", Code: codeableConcept{Text: "Device examination"},
		Subject: &subject, EffectiveDateTime: examinedAt(g), Issued: str(o, "created_at"), Conclusion: str(g, "findings"),
		PresentedForm: []attachment{{ContentType: str(o, "content_type"), URL: "Binary/" + idOf(o), Title: str(o, "name")}},
		Result:        rowReferences(o)}
	if p := str(g, "procedure_code"); p != "" {
		r.Code.Text = p
	}
	if n := str(g, "order_number"); n != "" {
		r.Identifier = []identifier{{Value: n}}
	}
	if order := str(o, "device_order_id"); order != "" {
		r.BasedOn = []reference{{Reference: "ServiceRequest/" + order}}
	}
	return r
}

// examinedAt is when the device examined: the time (6201) on the date (6200), or the date.
func examinedAt(g object) string {
	if at := str(g, "examined_at"); at != "" {
		return at
	}
	return str(g, "examined_on")
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

// interpretations are the lab's flags as HL7 observation interpretations.
var interpretations = map[string]string{"normal": "N", "low": "L", "high": "H", "abnormal": "A", "critical": "AA"}

// serviceRequest is a device order: the examination praxis asks a device
// for (GDT 6302), with its procedure and tests (8402, 8410), numbered as
// the practice numbers it (8310).
func serviceRequest(x view, o object) resource {
	r := serviceRequestResource{head: headOf("ServiceRequest", o), Status: orderStatus[str(o, "status")], Intent: "order", Subject: patientOf(o),
		AuthoredOn: str(o, "created_at"), Note: notes(str(o, "comment"))}
	r.Identifier = []identifier{{Type: concept(systemV2_0203, "PLAC"), System: "urn:praxis:" + x.company.String() + ":device-orders", Value: ref(o, "number")}}
	if p := str(o, "procedure"); p != "" {
		r.Code = &codeableConcept{Text: p}
	}
	for _, t := range strs(o, "tests") {
		r.OrderDetail = append(r.OrderDetail, codeableConcept{Text: t})
	}
	return r
}

// documentReference is a stored file: what it is (its media type as
// sniffed, its name, size and category), whose it is, where it came from,
// and its bytes at Binary/{id}. A device's result names its order.
func documentReference(_ view, o object) resource {
	r := documentReferenceResource{head: headOf("DocumentReference", o), Status: "current", Subject: patientOf(o), Date: str(o, "created_at"),
		Description: str(o, "description")}
	if c := str(o, "category"); c != "" {
		r.Category = []codeableConcept{{Coding: []coding{{System: "urn:praxis:file-categories", Code: c}}, Text: c}}
	}
	if src, ok := fileSources[str(o, "source")]; ok {
		r.Type = &codeableConcept{Text: src}
	}
	att := attachment{ContentType: str(o, "content_type"), URL: "Binary/" + idOf(o), Title: str(o, "name"), Creation: str(o, "created_at")}
	att.Size = number(o, "size")
	r.Content = []documentContent{{Attachment: att}}
	if order := str(o, "device_order_id"); order != "" {
		r.Context = &documentContext{Related: []reference{{Reference: "ServiceRequest/" + order}}}
	}
	return r
}

// fileSources name where a file came from.
var fileSources = map[string]string{"api": "uploaded through the API", "gdt": "a device's GDT result", "sonogdt": "a SonoGdt result"}

// schedule is a service assignment: a practitioner offering a service,
// at one location or at each of theirs; its free slots are the booking's.
func schedule(_ view, o object) resource {
	r := scheduleResource{head: headOf("Schedule", o), Active: active(o), Actor: []reference{{Reference: "Practitioner/" + ref(o, "user_id")}}}
	if loc := ref(o, "location_id"); loc != "" {
		r.Actor = append(r.Actor, reference{Reference: "Location/" + loc})
	}
	r.Actor = append(r.Actor, reference{Reference: "HealthcareService/" + ref(o, "service_id")})
	if d := ref(o, "duration_minutes"); d != "" {
		r.Comment = "appointments of " + d + " minutes"
	}
	return r
}

// orderStatus is a device order's status as a request's: open, written
// and taken are active; a failed order is revoked like a cancelled one.
var orderStatus = map[string]string{"open": "active", "written": "active", "taken": "active", "done": "completed",
	"cancelled": "revoked", "failed": "revoked"}

// organization is the company.
func organization(c domain.Company) organizationResource {
	return organizationResource{head: head{ResourceType: "Organization", ID: c.ID.String(), Meta: &meta{LastUpdated: c.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z")}},
		Active: true, Name: c.Name}
}
