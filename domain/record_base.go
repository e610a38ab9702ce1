package domain

import (
	"encoding/json"
	"strconv"

	"github.com/google/uuid"
	"github.com/invopop/jsonschema"
)

// MaxCustomerID is the largest customer number: ten digits, GDT field 3000.
const MaxCustomerID = 9_999_999_999

func (CustomerID) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Minimum: "1", Maximum: json.Number(strconv.Itoa(MaxCustomerID))}
}

// UUID is a reference to an object: canonical lower-case, 36 characters.
type UUID string

func (UUID) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "uuid"}
}

// NewObjectID is a fresh id for a new object: UUIDv7, so ids sort by creation.
func NewObjectID() string { return uuid.Must(uuid.NewV7()).String() }

// ValidObjectID reports whether s is an id in its one spelling: a UUID in
// canonical lower-case form (8-4-4-4-12 hex digits). Every id of every page
// passes here, so it is a loop, not a regular expression (a tenth of a full
// sync's server CPU was the regexp's).
func ValidObjectID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// RecordBase comes first in every record about a customer (docs/sections.md).
type RecordBase struct {
	CustomerID    CustomerID `json:"customer_id" jsonschema:"required"`
	UserID        *UUID      `json:"user_id"`
	AppointmentID *UUID      `json:"appointment_id"`
}

func (b *RecordBase) customer() *CustomerID { return &b.CustomerID }

func (b *RecordBase) refs() []Ref {
	out := []Ref{customerRef(b.CustomerID)}
	if b.UserID != nil {
		out = append(out, userRef("user_id", *b.UserID, false))
	}
	return append(out, optRef("appointment_id", "appointments", b.AppointmentID)...)
}

func (*RecordBase) normalize(RuleContext)           {}
func (*RecordBase) check(RuleContext, *FieldErrors) {}

// DocumentBase is the record base of documents a practice issues and prints.
type DocumentBase struct {
	CustomerID    CustomerID `json:"customer_id" jsonschema:"required"`
	UserID        UUID       `json:"user_id" jsonschema:"required"`
	AppointmentID *UUID      `json:"appointment_id"`
	IssuedOn      *Date      `json:"issued_on"`
	Status        *string    `json:"status" jsonschema:"enum=draft,enum=final,enum=cancelled"`
	Text          *string    `json:"text" jsonschema:"maxLength=20000,format=text"`
	DiagnosisIDs  []UUID     `json:"diagnosis_ids" jsonschema:"maxItems=20,uniqueItems=true"`
	FileID        *UUID      `json:"file_id"`
}

func (b *DocumentBase) customer() *CustomerID { return &b.CustomerID }

func (b *DocumentBase) normalize(rc RuleContext) {
	if b.IssuedOn == nil {
		b.IssuedOn = ptr(rc.Today())
	}
	if b.Status == nil {
		b.Status = ptr("final")
	}
}

func (b *DocumentBase) check(rc RuleContext, errs *FieldErrors) {
	notFuture("issued_on", b.IssuedOn, rc, errs)
	if *b.Status == "cancelled" {
		errs.Add("status", "a new document is draft or final; the practice cancels it later")
	}
}

// docRefs are the base's references; anyRole lifts the rule that the issuer is a doctor.
func (b *DocumentBase) docRefs(anyRole bool) []Ref {
	out := []Ref{customerRef(b.CustomerID), userRef("user_id", b.UserID, !anyRole)}
	out = append(out, optRef("appointment_id", "appointments", b.AppointmentID)...)
	out = append(out, diagnosisRefs("diagnosis_ids", b.DiagnosisIDs)...)
	if b.FileID != nil {
		out = append(out, fileRef("file_id", *b.FileID, "application/pdf"))
	}
	return out
}

func (b *DocumentBase) refs() []Ref { return b.docRefs(false) }

// requireDiagnoses is the rule of the documents whose base field diagnosis_ids is required.
func (b *DocumentBase) requireDiagnoses(errs *FieldErrors) {
	if len(b.DiagnosisIDs) == 0 {
		errs.Add("diagnosis_ids", "must have at least 1 item")
	}
}

func customerRef(id CustomerID) Ref {
	return Ref{Field: "customer_id", Section: "customers", ID: strconv.FormatInt(int64(id), 10)}
}

// userRef names a user of the company who is active and, for documents, a doctor.
func userRef(field string, id UUID, doctor bool) Ref {
	return Ref{Field: field, Section: "users", ID: string(id), Rule: func(t RefTarget) string {
		if active, ok := t.Attrs["active"].(bool); ok && !active {
			return "names an inactive user"
		}
		if doctor && t.Attrs["role"] != "doctor" {
			return "must name a user with the role doctor"
		}
		return ""
	}}
}

// optRef is a reference of the same customer, when the field is set.
func optRef(field, section string, id *UUID) []Ref {
	if id == nil {
		return nil
	}
	return []Ref{{Field: field, Section: section, ID: string(*id), SameCustomer: true}}
}

func diagnosisRefs(field string, ids []UUID) []Ref {
	out := make([]Ref, len(ids))
	for i, id := range ids {
		out[i] = Ref{Field: field + "[" + strconv.Itoa(i) + "]", Section: "diagnoses", ID: string(id), SameCustomer: true}
	}
	return out
}

// fileRef names a file of the same customer, of contentType when one is given.
func fileRef(field string, id UUID, contentType string) Ref {
	return Ref{Field: field, Section: "files", ID: string(id), SameCustomer: true, Rule: func(t RefTarget) string {
		if contentType != "" && t.Attrs["content_type"] != contentType {
			return "must name a file of type " + contentType
		}
		return ""
	}}
}

// notFuture refuses a date after the company's today.
func notFuture(field string, d *Date, rc RuleContext, errs *FieldErrors) {
	if d != nil && d.After(rc.Today()) {
		errs.Add(field, "must not be in the future")
	}
}

// notFutureInstant refuses an instant later than now plus slack.
func notFutureInstant(field string, t *DateTime, rc RuleContext, errs *FieldErrors) {
	if t != nil && t.After(rc.Now) {
		errs.Add(field, "must not be in the future")
	}
}

// orderedDates refuses from > until when both are set.
func orderedDates(untilField string, from, until *Date, errs *FieldErrors, rule string) {
	if from != nil && until != nil && from.After(*until) {
		errs.Add(untilField, rule)
	}
}

func defaultTo(p **string, v string) {
	if *p == nil {
		*p = &v
	}
}
