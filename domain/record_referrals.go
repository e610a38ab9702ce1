package domain

// Referral sends the customer on to another provider (docs/sections.md §16).
type Referral struct {
	DocumentBase
	ToSpecialty     string   `json:"to_specialty" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	ToProvider      *Contact `json:"to_provider"`
	Question        string   `json:"question" jsonschema:"required,maxLength=2000,format=text,pattern=\\S"`
	FindingsSummary *string  `json:"findings_summary" jsonschema:"maxLength=5000,format=text"`
	Urgency         *string  `json:"urgency" jsonschema:"enum=routine,enum=urgent"`
}

func (r *Referral) normalize(rc RuleContext) {
	r.DocumentBase.normalize(rc)
	defaultTo(&r.Urgency, "routine")
}

func (r *Referral) check(rc RuleContext, errs *FieldErrors) {
	r.DocumentBase.check(rc, errs)
	r.ToProvider.check("to_provider", errs)
}

const exampleReferral = `{"customer_id":$CUSTOMER,"user_id":"$USER","to_specialty":"Radiology",
"question":"Chest X-ray, please.","urgency":"urgent","diagnosis_ids":["$DIAGNOSIS"]}`
