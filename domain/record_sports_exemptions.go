package domain

// SportsExemption excuses a customer from sports (docs/sections.md §15).
type SportsExemption struct {
	DocumentBase
	ValidFrom          Date    `json:"valid_from" jsonschema:"required"`
	ValidUntil         *Date   `json:"valid_until"`
	Scope              string  `json:"scope" jsonschema:"required,enum=full,enum=partial"`
	AllowedActivities  *string `json:"allowed_activities" jsonschema:"maxLength=1000,format=text"`
	ExcludedActivities *string `json:"excluded_activities" jsonschema:"maxLength=1000,format=text"`
	Institution        *string `json:"institution" jsonschema:"maxLength=200,format=line"`
	ClassName          *string `json:"class_name" jsonschema:"maxLength=50,format=line"`
	ShowDiagnosis      *bool   `json:"show_diagnosis"`
}

func (s *SportsExemption) normalize(rc RuleContext) {
	s.DocumentBase.normalize(rc)
	if s.ShowDiagnosis == nil {
		s.ShowDiagnosis = ptr(false)
	}
}

func (s *SportsExemption) check(rc RuleContext, errs *FieldErrors) {
	s.DocumentBase.check(rc, errs)
	orderedDates("valid_until", &s.ValidFrom, s.ValidUntil, errs, "must not be before valid_from")
	if s.Scope == "partial" && blank(s.AllowedActivities) && blank(s.ExcludedActivities) {
		errs.Add("allowed_activities", "a partial exemption needs allowed_activities or excluded_activities")
	}
}

const exampleSportsExemption = `{"customer_id":$CUSTOMER,"user_id":"$USER","issued_on":"2026-03-10","valid_from":"2026-03-10",
"valid_until":"2026-04-10","scope":"partial","excluded_activities":"Running, jumping","institution":"BG Wien 1","class_name":"4B",
"diagnosis_ids":["$DIAGNOSIS"]}`
