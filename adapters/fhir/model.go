package fhir

import "encoding/json"

// The resources and datatypes the door writes, as Go types: each element
// a field, absent when empty (omitempty), in the order FHIR's JSON lists
// them. A mapping (resources.go) fills one; encoding/json writes it without
// the reflection over maps and the sorting of keys a map[string]any costs
// (an export writes a million of them).

// resource is any resource the door writes.
type resource interface{ resourceID() string }

// head is the start of every resource: its type, id and meta.
type head struct {
	ResourceType string `json:"resourceType"`
	ID           string `json:"id"`
	Meta         *meta  `json:"meta,omitempty"`
}

func (h head) resourceID() string { return h.ID }

type meta struct {
	VersionID   string `json:"versionId,omitempty"`
	LastUpdated string `json:"lastUpdated,omitempty"`
}

type coding struct {
	System  string `json:"system,omitempty"`
	Version string `json:"version,omitempty"`
	Code    string `json:"code,omitempty"`
}

type codeableConcept struct {
	Coding []coding `json:"coding,omitempty"`
	Text   string   `json:"text,omitempty"`
}

type reference struct {
	Reference string `json:"reference,omitempty"`
	Display   string `json:"display,omitempty"`
}

type identifier struct {
	Use      string           `json:"use,omitempty"`
	Type     *codeableConcept `json:"type,omitempty"`
	System   string           `json:"system,omitempty"`
	Value    string           `json:"value,omitempty"`
	Assigner *reference       `json:"assigner,omitempty"`
}

type humanName struct {
	Use    string   `json:"use,omitempty"`
	Family string   `json:"family,omitempty"`
	Given  []string `json:"given,omitempty"`
	Prefix []string `json:"prefix,omitempty"`
}

type contactPoint struct {
	System string `json:"system"`
	Value  string `json:"value"`
}

type address struct {
	Use        string   `json:"use,omitempty"`
	Line       []string `json:"line,omitempty"`
	City       string   `json:"city,omitempty"`
	PostalCode string   `json:"postalCode,omitempty"`
	Country    string   `json:"country,omitempty"`
}

type quantity struct {
	Value  json.Number `json:"value"`
	Unit   string      `json:"unit,omitempty"`
	System string      `json:"system,omitempty"`
	Code   string      `json:"code,omitempty"`
}

type annotation struct {
	Text string `json:"text"`
}

type attachment struct {
	ContentType string      `json:"contentType,omitempty"`
	URL         string      `json:"url,omitempty"`
	Size        json.Number `json:"size,omitempty"`
	Title       string      `json:"title,omitempty"`
	Creation    string      `json:"creation,omitempty"`
}

type patientResource struct {
	head
	Identifier []identifier   `json:"identifier,omitempty"`
	Active     bool           `json:"active"`
	Name       []humanName    `json:"name,omitempty"`
	Telecom    []contactPoint `json:"telecom,omitempty"`
	Gender     string         `json:"gender,omitempty"`
	BirthDate  string         `json:"birthDate,omitempty"`
	Address    []address      `json:"address,omitempty"`
}

type practitionerResource struct {
	head
	Active  bool           `json:"active"`
	Name    []humanName    `json:"name,omitempty"`
	Telecom []contactPoint `json:"telecom,omitempty"`
}

type organizationResource struct {
	head
	Active bool   `json:"active"`
	Name   string `json:"name,omitempty"`
}

type locationResource struct {
	head
	Status  string         `json:"status,omitempty"`
	Name    string         `json:"name,omitempty"`
	Telecom []contactPoint `json:"telecom,omitempty"`
	Address *address       `json:"address,omitempty"`
}

type healthcareServiceResource struct {
	head
	Active   bool              `json:"active"`
	Category []codeableConcept `json:"category,omitempty"`
	Name     string            `json:"name,omitempty"`
	Comment  string            `json:"comment,omitempty"`
}

type appointmentParticipant struct {
	Actor  reference `json:"actor"`
	Status string    `json:"status"`
}

type appointmentResource struct {
	head
	Status            string                   `json:"status,omitempty"`
	CancelationReason *codeableConcept         `json:"cancelationReason,omitempty"`
	Description       string                   `json:"description,omitempty"`
	Start             string                   `json:"start,omitempty"`
	End               string                   `json:"end,omitempty"`
	Created           string                   `json:"created,omitempty"`
	Comment           string                   `json:"comment,omitempty"`
	Participant       []appointmentParticipant `json:"participant,omitempty"`
}

type conditionResource struct {
	head
	ClinicalStatus     *codeableConcept  `json:"clinicalStatus,omitempty"`
	VerificationStatus *codeableConcept  `json:"verificationStatus,omitempty"`
	Category           []codeableConcept `json:"category,omitempty"`
	Code               *codeableConcept  `json:"code,omitempty"`
	BodySite           []codeableConcept `json:"bodySite,omitempty"`
	Subject            reference         `json:"subject"`
	RecordedDate       string            `json:"recordedDate,omitempty"`
}

type referenceRange struct {
	Low  *quantity `json:"low,omitempty"`
	High *quantity `json:"high,omitempty"`
	Text string    `json:"text,omitempty"`
}

func (r referenceRange) empty() bool { return r.Low == nil && r.High == nil && r.Text == "" }

type observationComponent struct {
	Code          codeableConcept `json:"code"`
	ValueQuantity *quantity       `json:"valueQuantity,omitempty"`
}

// observationResource is a measurement, a row of a lab result, a test of a GDT result.
type observationResource struct {
	head
	Status            string                 `json:"status"`
	Category          []codeableConcept      `json:"category,omitempty"`
	Code              codeableConcept        `json:"code"`
	Subject           *reference             `json:"subject,omitempty"`
	EffectiveDateTime string                 `json:"effectiveDateTime,omitempty"`
	ValueQuantity     *quantity              `json:"valueQuantity,omitempty"`
	ValueString       string                 `json:"valueString,omitempty"`
	Interpretation    []codeableConcept      `json:"interpretation,omitempty"`
	Note              []annotation           `json:"note,omitempty"`
	ReferenceRange    []referenceRange       `json:"referenceRange,omitempty"`
	Component         []observationComponent `json:"component,omitempty"`
}

type diagnosticReportResource struct {
	head
	Identifier        []identifier      `json:"identifier,omitempty"`
	BasedOn           []reference       `json:"basedOn,omitempty"`
	Status            string            `json:"status"`
	Category          []codeableConcept `json:"category,omitempty"`
	Code              codeableConcept   `json:"code"`
	Subject           *reference        `json:"subject,omitempty"`
	EffectiveDateTime string            `json:"effectiveDateTime,omitempty"`
	Issued            string            `json:"issued,omitempty"`
	Performer         []reference       `json:"performer,omitempty"`
	Result            []reference       `json:"result,omitempty"`
	Conclusion        string            `json:"conclusion,omitempty"`
	PresentedForm     []attachment      `json:"presentedForm,omitempty"`
}

type documentContent struct {
	Attachment attachment `json:"attachment"`
}

type documentContext struct {
	Related []reference `json:"related,omitempty"`
}

type documentReferenceResource struct {
	head
	Status      string            `json:"status"`
	Type        *codeableConcept  `json:"type,omitempty"`
	Category    []codeableConcept `json:"category,omitempty"`
	Subject     reference         `json:"subject"`
	Date        string            `json:"date,omitempty"`
	Description string            `json:"description,omitempty"`
	Content     []documentContent `json:"content"`
	Context     *documentContext  `json:"context,omitempty"`
}

type scheduleResource struct {
	head
	Active  bool        `json:"active"`
	Actor   []reference `json:"actor"`
	Comment string      `json:"comment,omitempty"`
}

type slotResource struct {
	head
	Schedule reference `json:"schedule"`
	Status   string    `json:"status"`
	Start    string    `json:"start"`
	End      string    `json:"end"`
}

type serviceRequestResource struct {
	head
	Identifier  []identifier      `json:"identifier,omitempty"`
	Status      string            `json:"status,omitempty"`
	Intent      string            `json:"intent"`
	Code        *codeableConcept  `json:"code,omitempty"`
	OrderDetail []codeableConcept `json:"orderDetail,omitempty"`
	Subject     reference         `json:"subject"`
	AuthoredOn  string            `json:"authoredOn,omitempty"`
	Note        []annotation      `json:"note,omitempty"`
}
