package domain

// DoctorLetter is a letter to another doctor or for the record (docs/sections.md §20).
type DoctorLetter struct {
	DocumentBase
	Recipient      *Contact  `json:"recipient"`
	Subject        string    `json:"subject" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	History        *string   `json:"history" jsonschema:"maxLength=10000,format=text"`
	Findings       *string   `json:"findings" jsonschema:"maxLength=10000,format=text"`
	Therapy        *string   `json:"therapy" jsonschema:"maxLength=10000,format=text"`
	Medication     *string   `json:"medication" jsonschema:"maxLength=10000,format=text"`
	Recommendation *string   `json:"recommendation" jsonschema:"maxLength=10000,format=text"`
	SentVia        *string   `json:"sent_via" jsonschema:"enum=print,enum=email,enum=electronic"`
	SentAt         *DateTime `json:"sent_at"`
}

func (l *DoctorLetter) check(rc RuleContext, errs *FieldErrors) {
	l.DocumentBase.check(rc, errs)
	l.Recipient.check("recipient", errs)
	if blank(l.Text) && blank(l.History) && blank(l.Findings) && blank(l.Therapy) && blank(l.Medication) && blank(l.Recommendation) {
		errs.Add("text", "the body text or at least one of history, findings, therapy, medication, recommendation is required")
	}
	checkSent(l.SentVia, l.SentAt, rc, errs)
}

// PatientLetter is a letter to the patient (docs/sections.md §21); any user may sign it.
type PatientLetter struct {
	DocumentBase
	Subject string    `json:"subject" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	SentVia *string   `json:"sent_via" jsonschema:"enum=print,enum=email"`
	SentAt  *DateTime `json:"sent_at"`
}

func (l *PatientLetter) check(rc RuleContext, errs *FieldErrors) {
	l.DocumentBase.check(rc, errs)
	if blank(l.Text) {
		errs.Add("text", "is required")
	}
	checkSent(l.SentVia, l.SentAt, rc, errs)
}

func (l *PatientLetter) refs() []Ref { return l.docRefs(true) }

func checkSent(via *string, at *DateTime, rc RuleContext, errs *FieldErrors) {
	if at != nil && via == nil {
		errs.Add("sent_at", "is only allowed with sent_via")
	}
	notFutureInstant("sent_at", at, rc, errs)
}

const exampleDoctorLetter = `{"customer_id":$CUSTOMER,"user_id":"$USER","subject":"Findings of 10 March",
"recipient":{"name":"Dr. Maria Gruber","specialty":"General medicine"},"findings":"Blood pressure 148/92 mmHg.",
"recommendation":"24-hour measurement.","sent_via":"print","sent_at":"2026-03-10T10:00:00+01:00","diagnosis_ids":["$DIAGNOSIS"]}`

const examplePatientLetter = `{"customer_id":$CUSTOMER,"user_id":"$USER","subject":"Your appointment",
"text":"Dear Ms Berger,\nplease bring your measurements.","sent_via":"email"}`
