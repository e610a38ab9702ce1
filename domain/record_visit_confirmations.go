package domain

// VisitConfirmation confirms a visit, for an employer or a school (docs/sections.md §18).
type VisitConfirmation struct {
	DocumentBase
	VisitDate          Date       `json:"visit_date" jsonschema:"required"`
	TimeFrom           *TimeOfDay `json:"time_from"`
	TimeTo             *TimeOfDay `json:"time_to"`
	Recipient          *string    `json:"recipient" jsonschema:"enum=employer,enum=school,enum=authority,enum=other"`
	AccompanyingPerson *string    `json:"accompanying_person" jsonschema:"maxLength=200,format=line"`
}

func (v *VisitConfirmation) check(rc RuleContext, errs *FieldErrors) {
	v.DocumentBase.check(rc, errs)
	notFuture("visit_date", &v.VisitDate, rc, errs)
	if len(v.DiagnosisIDs) > 0 {
		errs.Add("diagnosis_ids", "a visit confirmation never names a diagnosis")
	}
	switch {
	case (v.TimeFrom == nil) != (v.TimeTo == nil):
		errs.Add("time_to", "time_from and time_to go together")
	case v.TimeFrom != nil && *v.TimeFrom >= *v.TimeTo:
		errs.Add("time_to", "must be after time_from")
	}
}

const exampleVisitConfirmation = `{"customer_id":$CUSTOMER,"user_id":"$USER","visit_date":"2026-03-10",
"time_from":"08:30","time_to":"09:15","recipient":"employer"}`
