package domain

// LongTermMedication is a drug the customer takes regularly (docs/sections.md §14).
type LongTermMedication struct {
	RecordBase
	Name             string  `json:"name" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	PZN              *string `json:"pzn" jsonschema:"format=pzn"`
	ATCCode          *string `json:"atc_code" jsonschema:"pattern=^[A-Z][0-9]{2}[A-Z]{2}[0-9]{2}$"`
	ActiveIngredient *string `json:"active_ingredient" jsonschema:"maxLength=200,format=line"`
	Strength         *string `json:"strength" jsonschema:"maxLength=50,format=line"`
	DoseForm         *string `json:"dose_form" jsonschema:"maxLength=50,format=line"`
	Dosage           *string `json:"dosage" jsonschema:"maxLength=100,format=line"`
	StartedOn        *Date   `json:"started_on"`
	EndedOn          *Date   `json:"ended_on"`
	Status           *string `json:"status" jsonschema:"enum=active,enum=paused,enum=stopped"`
	Indication       *string `json:"indication" jsonschema:"maxLength=200,format=line"`
	DiagnosisID      *UUID   `json:"diagnosis_id"`
	Prescriber       *string `json:"prescriber" jsonschema:"maxLength=200,format=line"`
}

func (m *LongTermMedication) normalize(RuleContext) { defaultTo(&m.Status, "active") }

func (m *LongTermMedication) check(_ RuleContext, errs *FieldErrors) {
	orderedDates("ended_on", m.StartedOn, m.EndedOn, errs, "must not be before started_on")
}

func (m *LongTermMedication) refs() []Ref {
	return append(m.RecordBase.refs(), optRef("diagnosis_id", "diagnoses", m.DiagnosisID)...)
}

const exampleLongTermMedication = `{"customer_id":$CUSTOMER,"name":"Metformin 500 mg","pzn":"1234562","atc_code":"A10BA02",
"active_ingredient":"metformin","strength":"500 mg","dose_form":"tablet","dosage":"1-0-1-0","started_on":"2025-01-15",
"status":"active","indication":"Type 2 diabetes"}`
