package domain

// Regulation is a prescription or order: therapy, aids, imaging, lab, drugs (docs/sections.md §17).
type Regulation struct {
	DocumentBase
	Type             string           `json:"type" jsonschema:"required,enum=physiotherapy,enum=occupational_therapy,enum=speech_therapy,enum=medical_aid,enum=imaging,enum=lab,enum=medication,enum=other"`
	Items            []RegulationItem `json:"items" jsonschema:"required,minItems=1,maxItems=20"`
	Sessions         *int             `json:"sessions" jsonschema:"minimum=1,maximum=100"`
	FrequencyPerWeek *int             `json:"frequency_per_week" jsonschema:"minimum=1,maximum=7"`
	RequiresApproval *bool            `json:"requires_approval"`
	ValidUntil       *Date            `json:"valid_until"`
}

// RegulationItem is one thing prescribed.
type RegulationItem struct {
	Description string  `json:"description" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	Code        *string `json:"code" jsonschema:"maxLength=20,format=line"`
	Quantity    *int    `json:"quantity" jsonschema:"minimum=1,maximum=999"`
}

func (r *Regulation) normalize(rc RuleContext) {
	r.DocumentBase.normalize(rc)
	if r.RequiresApproval == nil {
		r.RequiresApproval = ptr(false)
	}
	for i := range r.Items {
		if r.Items[i].Quantity == nil {
			r.Items[i].Quantity = ptr(1)
		}
	}
}

func (r *Regulation) check(rc RuleContext, errs *FieldErrors) {
	r.DocumentBase.check(rc, errs)
	r.requireDiagnoses(errs)
	therapy := oneOf(r.Type, "physiotherapy", "occupational_therapy", "speech_therapy")
	if !therapy && r.Sessions != nil {
		errs.Add("sessions", "is only for the therapy types")
	}
	if !therapy && r.FrequencyPerWeek != nil {
		errs.Add("frequency_per_week", "is only for the therapy types")
	}
	if r.Type == "medication" {
		for i, it := range r.Items {
			if it.Code != nil && !ValidPZN(*it.Code) {
				errs.Add("items["+itoa(i)+"].code", "must be "+FormatDescription("pzn")+" for a medication")
			}
		}
	}
	orderedDates("valid_until", r.IssuedOn, r.ValidUntil, errs, "must not be before issued_on")
}

const exampleRegulation = `{"customer_id":$CUSTOMER,"user_id":"$USER","type":"physiotherapy",
"items":[{"description":"Physiotherapy, 30 minutes","quantity":10}],"sessions":10,"frequency_per_week":2,
"diagnosis_ids":["$DIAGNOSIS"]}`
