package fhir

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/gdt"
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
	// patient: the section's objects are about a patient (its
	// patient/subject search, the patient compartment).
	patient bool
	params  []searchParam
	// includes are the _include values served: the patients the
	// objects are about, or a report's rows (the Observations it names as
	// results).
	includes map[string]include
	toFHIR   func(x view, it item) resource
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
}

// include is what an _include adds.
type include int

const (
	includePatients include = iota // the patients of the matches
	includeRows                    // a report's rows
)

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
	{name: "Practitioner", section: "users", toFHIR: practitioner, params: []searchParam{
		{name: "family", kind: "string", doc: "the last name", match: stringOf(func(u *domain.User) string { return u.LastName })},
		{name: "given", kind: "string", doc: "the first name", match: stringOf(func(u *domain.User) string { return u.FirstName })},
		{name: "active", kind: "token", doc: "true or false", query: payloadTokenOr("active", "true", nil)},
	}},
	{name: "Organization"},
	{name: "Location", section: "locations", toFHIR: location, params: []searchParam{
		{name: "name", kind: "string", doc: "the name", match: stringOf(func(l *domain.Location) string { return l.Name })},
		{name: "status", kind: "token", doc: "active or inactive", query: payloadTokenOr("active", "true", activeStatuses)},
	}},
	{name: "HealthcareService", section: "services", toFHIR: healthcareService, params: []searchParam{
		{name: "name", kind: "string", doc: "the name", match: stringOf(func(s *domain.Service) string { return s.Name })},
		{name: "active", kind: "token", doc: "true or false", query: payloadTokenOr("active", "true", nil)},
	}},
	{name: "Appointment", section: "appointments", patient: true, toFHIR: appointment, writer: appointmentWriter,
		includes: map[string]include{"Appointment:patient": includePatients},
		params: []searchParam{
			{name: "date", kind: "date", doc: "the start", query: payloadDate("start")},
			{name: "status", kind: "token", doc: "booked, arrived, fulfilled, noshow, cancelled", query: payloadToken("status", appointmentStatus)},
			{name: "practitioner", kind: "reference", doc: "Practitioner/{id}", query: payloadReference("Practitioner", "user_id")},
			{name: "location", kind: "reference", doc: "Location/{id}", query: payloadReference("Location", "location_id")},
		}},
	{name: "Condition", section: "diagnoses", patient: true, toFHIR: condition, params: []searchParam{
		{name: "recorded-date", kind: "date", doc: "the date diagnosed", query: payloadDate("diagnosed_on")},
		{name: "code", kind: "token", doc: "the ICD-10 code", query: payloadToken("icd10_code", nil)},
	}},
	{name: "Observation", section: "measurements", then: []feed{labResultRows, gdtResultTests}, patient: true, toFHIR: observation, params: []searchParam{
		{name: "date", kind: "date", doc: "when measured", match: dateOf(observedAt), query: observedQuery},
		{name: "code", kind: "token", doc: "the LOINC code (" + systemLOINC + "|…)", match: tokenOf(observedCode), query: tokenQuery(domain.SearchCode)},
	}},
	{name: "DiagnosticReport", section: "lab-results", then: []feed{gdtResultFiles}, patient: true, toFHIR: diagnosticReport,
		// A report's rows are Observations named as its results (rows.go).
		includes: map[string]include{"DiagnosticReport:result": includeRows},
		params: []searchParam{
			{name: "date", kind: "date", doc: "when the sample was collected, or the device examined", match: reportDate(true), query: observedQuery},
			{name: "issued", kind: "date", doc: "when the lab reported, or the device's result was stored", match: reportDate(false), query: payloadDate("reported_at")},
			{name: "status", kind: "token", doc: "final, preliminary, corrected", match: tokenOf(reportStatus), query: payloadTokenOr("status", "final", nil)},
		}},
	{name: "DocumentReference", section: "files", patient: true, toFHIR: documentReference, params: []searchParam{
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
	{name: "ServiceRequest", section: "device-orders", patient: true, toFHIR: serviceRequest, params: []searchParam{
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

func activeStatus(active *bool) string {
	if isActive(active) {
		return "active"
	}
	return "inactive"
}

// metaOf is the resource's version and time of its last change (the
// object's, issue "Versions").
func metaOf(it item) *meta {
	m := meta{VersionID: strconv.FormatInt(it.version, 10)}
	if !it.updated.IsZero() {
		m.LastUpdated = stamp(it.updated)
	}
	return &m
}

// headOf is the start of every resource: its type, id and meta.
func headOf(name string, it item) head {
	return head{ResourceType: name, ID: it.id, Meta: metaOf(it)}
}

// nameOf is a person's name: family, given and the title as a prefix.
func nameOf(title *string, first, last string) []humanName {
	n := humanName{Use: "official", Family: last}
	if first != "" {
		n.Given = []string{first}
	}
	if t := opt(title); t != "" {
		n.Prefix = []string{t}
	}
	return []humanName{n}
}

// telecom is a phone and an e-mail address, where held.
func telecom(phone, email *string) []contactPoint {
	var t []contactPoint
	if p := opt(phone); p != "" {
		t = append(t, contactPoint{System: "phone", Value: p})
	}
	if e := opt(email); e != "" {
		t = append(t, contactPoint{System: "email", Value: e})
	}
	return t
}

// addressOf is a native address as a FHIR Address of the given use.
func addressOf(a *domain.Address, use string) *address {
	if a == nil {
		return nil
	}
	out := address{Use: use, City: a.City, PostalCode: a.PostalCode, Country: opt(a.Country)}
	if a.Street != "" {
		out.Line = []string{a.Street}
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

// toPatient is a reference to a patient.
func toPatient(id domain.CustomerID) reference {
	return reference{Reference: "Patient/" + strconv.FormatInt(int64(id), 10)}
}

// gender is the customer's sex as an administrative gender: unknown
// where the record holds none (AT Core requires one).
func gender(sex *string) string {
	switch opt(sex) {
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
func patient(x view, it item) resource {
	c := it.value.(*domain.CustomerData)
	r := patientResource{head: headOf("Patient", it), Active: true, Name: nameOf(c.Title, c.FirstName, c.LastName), Telecom: telecom(c.Phone, c.Email),
		Gender: gender(c.Sex), BirthDate: opt(c.BirthDate)}
	r.Identifier = []identifier{{Use: "usual", Type: concept(systemV2_0203, "PI"), System: localSystem(x.company), Value: it.id}}
	if s := opt(c.SVNR); s != "" {
		r.Identifier = append(r.Identifier, identifier{Use: "official", Type: concept(systemV2_0203, "SS"), System: systemSVNR, Value: s,
			Assigner: &reference{Display: svnrAssigner}})
	}
	if k := opt(c.KVNR); k != "" {
		r.Identifier = append(r.Identifier, identifier{Use: "official", Type: concept("http://fhir.de/CodeSystem/identifier-type-de-basis", "KVZ10"), System: systemKVNR, Value: k})
	}
	if a := addressOf(c.Address, "home"); a != nil {
		r.Address = []address{*a}
	}
	return r
}

// practitioner is a user of the practice.
func practitioner(_ view, it item) resource {
	u := it.value.(*domain.User)
	return practitionerResource{head: headOf("Practitioner", it), Active: isActive(u.Active), Name: nameOf(u.Title, u.FirstName, u.LastName),
		Telecom: telecom(u.Phone, u.Email)}
}

// location is a site of the practice.
func location(_ view, it item) resource {
	l := it.value.(*domain.Location)
	return locationResource{head: headOf("Location", it), Status: activeStatus(l.Active), Name: l.Name, Telecom: telecom(l.Phone, l.Email),
		Address: addressOf(&l.Address, "work")}
}

// healthcareService is a treatment the practice offers.
func healthcareService(_ view, it item) resource {
	s := it.value.(*domain.Service)
	return healthcareServiceResource{head: headOf("HealthcareService", it), Active: isActive(s.Active), Name: s.Name,
		Comment: opt(s.Description), Category: text(opt(s.Category))}
}

// appointmentStatus maps the native statuses to FHIR's.
var appointmentStatus = map[string]string{"booked": "booked", "arrived": "arrived", "completed": "fulfilled", "no_show": "noshow", "cancelled": "cancelled"}

// appointment is an appointment with its patient, practitioner and location as participants.
func appointment(_ view, it item) resource {
	a := it.value.(*domain.Appointment)
	r := appointmentResource{head: headOf("Appointment", it), Status: appointmentStatus[opt(a.Status)], Description: opt(a.Title),
		Comment: opt(a.Note), Start: instant(&a.Start), End: instant(a.End), Created: dateOnly(stamp(it.created))}
	if reason := opt(a.CancellationReason); reason != "" {
		r.CancelationReason = &codeableConcept{Text: reason}
	}
	participant := func(ref string) {
		r.Participant = append(r.Participant, appointmentParticipant{Actor: reference{Reference: ref}, Status: "accepted"})
	}
	if a.CustomerID != nil {
		participant(toPatient(*a.CustomerID).Reference)
	}
	participant("Practitioner/" + string(a.UserID))
	participant("Location/" + string(a.LocationID))
	if a.ServiceID != nil {
		participant("HealthcareService/" + string(*a.ServiceID))
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
func condition(_ view, it item) resource {
	d := it.value.(*domain.Diagnosis)
	r := conditionResource{head: headOf("Condition", it), Subject: toPatient(d.CustomerID), RecordedDate: opt(d.DiagnosedOn), BodySite: text(opt(d.Side))}
	code := codeableConcept{Text: opt(d.Text)}
	if c := opt(d.ICD10Code); c != "" {
		system := opt(d.CodeSystem)
		if system == "" {
			system = "icd10_at"
		}
		code.Coding = []coding{{System: icdSystems[system], Version: opt(d.CodeVersion), Code: c}}
	}
	if code.Text != "" || code.Coding != nil {
		r.Code = &code
	}
	verification := map[string]string{"confirmed": "confirmed", "suspected": "provisional", "excluded": "refuted", "status_post": "confirmed"}
	certainty := opt(d.Certainty)
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
	if opt(d.Kind) == "permanent" {
		category = "problem-list-item"
	}
	r.Category = []codeableConcept{*concept("http://terminology.hl7.org/CodeSystem/condition-category", category)}
	return r
}

// ucum is a value in a UCUM unit, nil for no number.
func ucum(value *domain.Decimal, unit string) *quantity {
	v, ok := decimalOf(value)
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
func observation(_ view, it item) resource {
	switch row := it.value.(type) {
	case labRow:
		return labObservation(it, row)
	case gdtTest:
		return testObservation(it, row)
	}
	m := it.value.(*domain.Measurement)
	subject := toPatient(m.CustomerID)
	r := observationResource{head: headOf("Observation", it), Status: "final", Category: vitalSigns, Subject: &subject,
		EffectiveDateTime: instant(&m.MeasuredAt), ValueQuantity: ucum(m.Value, opt(m.Unit))}
	r.Code.Text = strings.ReplaceAll(m.Type, "_", " ")
	if n := opt(m.Name); n != "" {
		r.Code.Text = n
	}
	if l := opt(m.LOINCCode); l != "" {
		r.Code.Coding = []coding{{System: systemLOINC, Code: l}}
	}
	for _, c := range m.Components {
		r.Component = append(r.Component, observationComponent{
			Code:          codeableConcept{Coding: []coding{{System: systemLOINC, Code: c.Code}}},
			ValueQuantity: ucum(&c.Value, c.Unit),
		})
	}
	r.Note = notes(opt(m.Note))
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
func labReport(it item, l *domain.LabResult) resource {
	subject := toPatient(l.CustomerID)
	r := diagnosticReportResource{head: headOf("DiagnosticReport", it), Status: labStatus(l), Category: labCategory,
		Code: codeableConcept{Text: "Laboratory report"}, Subject: &subject, EffectiveDateTime: instant(l.CollectedAt), Issued: instant(&l.ReportedAt),
		Result: rowReferences(it)}
	if lab := opt(l.LabName); lab != "" {
		r.Performer = []reference{{Display: lab}}
	}
	if n := opt(l.OrderNumber); n != "" {
		r.Identifier = []identifier{{Value: n}}
	}
	return r
}

// diagnosticReport is a lab result, or a device's GDT result file.
func diagnosticReport(_ view, it item) resource {
	if f, ok := it.value.(domain.File); ok {
		return gdtReport(it, f)
	}
	return labReport(it, it.value.(*domain.LabResult))
}

// reportDate matches a report's date: a lab result's (when collected, or
// reported), or for a GDT result when the device examined (collected) or
// when it was stored (reported).
func reportDate(collected bool) func(it item, v value) bool {
	return func(it item, v value) bool {
		var at string
		switch r := it.value.(type) {
		case domain.File:
			at = stamp(r.CreatedAt)
			if collected {
				at = examinedAt(r.GDT)
			}
		case *domain.LabResult:
			at = instant(&r.ReportedAt)
			if collected {
				at = instant(r.CollectedAt)
			}
		}
		from, to, ok := domain.ValueSpan(at)
		return ok && v.inRange(from, to)
	}
}

// reportStatus is a report's status: a GDT result is final.
func reportStatus(it item) string {
	if l, ok := it.value.(*domain.LabResult); ok {
		return labStatus(l)
	}
	return "final"
}

// labStatus is a lab result's status, final when it names none.
func labStatus(l *domain.LabResult) string {
	if s := opt(l.Status); s != "" {
		return s
	}
	return "final"
}

// gdtReport is a device's GDT result: the examination (8402), when
// (6200/6201), the findings (6220) as conclusion, the order it answers,
// the file itself as the presented form; its tests (8410) are
// Observations of their own (rows.go), which it names as its results.
func gdtReport(it item, f domain.File) resource {
	g := f.GDT
	if g == nil { // not read as a result: no examination to show
		g = &gdt.Info{}
	}
	subject := toPatient(f.CustomerID)
	r := diagnosticReportResource{head: headOf("DiagnosticReport", it), Status: "final", Code: codeableConcept{Text: "Device examination"},
		Subject: &subject, EffectiveDateTime: examinedAt(g), Issued: stamp(f.CreatedAt), Conclusion: opt(g.Findings),
		PresentedForm: []attachment{{ContentType: f.ContentType, URL: "Binary/" + it.id, Title: f.Name}},
		Result:        rowReferences(it)}
	if p := opt(g.ProcedureCode); p != "" {
		r.Code.Text = p
	}
	if n := opt(g.OrderNumber); n != "" {
		r.Identifier = []identifier{{Value: n}}
	}
	if order := opt(f.DeviceOrderID); order != "" {
		r.BasedOn = []reference{{Reference: "ServiceRequest/" + order}}
	}
	return r
}

// examinedAt is when the device examined: the time (6201) on the date (6200), or the date.
func examinedAt(g *gdt.Info) string {
	if g == nil {
		return ""
	}
	if at := opt(g.ExaminedAt); at != "" {
		return at
	}
	return opt(g.ExaminedOn)
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
func serviceRequest(x view, it item) resource {
	o := it.value.(*domain.DeviceOrder)
	r := serviceRequestResource{head: headOf("ServiceRequest", it), Status: orderStatus[o.Status], Intent: "order", Subject: toPatient(o.CustomerID),
		AuthoredOn: stamp(it.created), Note: notes(opt(o.Comment))}
	r.Identifier = []identifier{{Type: concept(systemV2_0203, "PLAC"), System: "urn:praxis:" + x.company.String() + ":device-orders", Value: strconv.FormatInt(o.Number, 10)}}
	if p := opt(o.Procedure); p != "" {
		r.Code = &codeableConcept{Text: p}
	}
	for _, t := range o.Tests {
		if t != "" {
			r.OrderDetail = append(r.OrderDetail, codeableConcept{Text: t})
		}
	}
	return r
}

// documentReference is a stored file: what it is (its media type as
// sniffed, its name, size and category), whose it is, where it came from,
// and its bytes at Binary/{id}. A device's result names its order.
func documentReference(_ view, it item) resource {
	f := it.value.(domain.File)
	r := documentReferenceResource{head: headOf("DocumentReference", it), Status: "current", Subject: toPatient(f.CustomerID), Date: stamp(f.CreatedAt),
		Description: opt(f.Description)}
	if c := f.Category; c != "" {
		r.Category = []codeableConcept{{Coding: []coding{{System: "urn:praxis:file-categories", Code: c}}, Text: c}}
	}
	if src, ok := fileSources[f.Source.String()]; ok {
		r.Type = &codeableConcept{Text: src}
	}
	att := attachment{ContentType: f.ContentType, URL: "Binary/" + it.id, Title: f.Name, Creation: stamp(f.CreatedAt)}
	att.Size = json.Number(strconv.FormatInt(f.Size, 10))
	r.Content = []documentContent{{Attachment: att}}
	if order := opt(f.DeviceOrderID); order != "" {
		r.Context = &documentContext{Related: []reference{{Reference: "ServiceRequest/" + order}}}
	}
	return r
}

// fileSources name where a file came from.
var fileSources = map[string]string{"api": "uploaded through the API", "gdt": "a device's GDT result", "sonogdt": "a SonoGdt result"}

// schedule is a service assignment: a practitioner offering a service,
// at one location or at each of theirs; its free slots are the booking's.
func schedule(_ view, it item) resource {
	a := it.value.(*domain.ServiceAssignment)
	r := scheduleResource{head: headOf("Schedule", it), Active: isActive(a.Active), Actor: []reference{{Reference: "Practitioner/" + string(a.UserID)}}}
	if a.LocationID != nil {
		r.Actor = append(r.Actor, reference{Reference: "Location/" + string(*a.LocationID)})
	}
	r.Actor = append(r.Actor, reference{Reference: "HealthcareService/" + string(a.ServiceID)})
	if a.DurationMinutes != nil {
		r.Comment = "appointments of " + strconv.Itoa(*a.DurationMinutes) + " minutes"
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
