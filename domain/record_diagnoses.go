package domain

// Diagnosis is a coded or free-text diagnosis (docs/sections.md §10).
type Diagnosis struct {
	RecordBase
	ICD10Code   *string `json:"icd10_code" jsonschema:"pattern=^[A-Z][0-9]{2}(\\.[0-9A-Z]{1\\,4})?$"`
	CodeSystem  *string `json:"code_system" jsonschema:"enum=icd10_at,enum=icd10_gm,enum=icd10_who"`
	CodeVersion *string `json:"code_version" jsonschema:"pattern=^[0-9]{4}$"`
	Text        *string `json:"text" jsonschema:"maxLength=500,format=line"`
	Certainty   *string `json:"certainty" jsonschema:"enum=confirmed,enum=suspected,enum=excluded,enum=status_post"`
	Kind        *string `json:"kind" jsonschema:"enum=encounter,enum=permanent"`
	Side        *string `json:"side" jsonschema:"enum=left,enum=right,enum=both"`
	DiagnosedOn *Date   `json:"diagnosed_on"`
}

func (d *Diagnosis) normalize(rc RuleContext) {
	if d.ICD10Code != nil {
		defaultTo(&d.CodeSystem, "icd10_at")
	}
	defaultTo(&d.Certainty, "confirmed")
	defaultTo(&d.Kind, "encounter")
	if d.DiagnosedOn == nil {
		d.DiagnosedOn = ptr(rc.Today())
	}
}

func (d *Diagnosis) check(rc RuleContext, errs *FieldErrors) {
	if d.ICD10Code == nil && blank(d.Text) {
		errs.Add("text", "is required without icd10_code")
	}
	if d.ICD10Code == nil {
		if d.CodeSystem != nil {
			errs.Add("code_system", "is only allowed with icd10_code")
		}
		if d.CodeVersion != nil {
			errs.Add("code_version", "is only allowed with icd10_code")
		}
	}
	notFuture("diagnosed_on", d.DiagnosedOn, rc, errs)
}

const exampleDiagnosis = `{"customer_id":$CUSTOMER,"user_id":"$USER","icd10_code":"I10","code_system":"icd10_at",
"text":"Essential (primary) hypertension","certainty":"confirmed","kind":"permanent","diagnosed_on":"2026-03-10"}`
