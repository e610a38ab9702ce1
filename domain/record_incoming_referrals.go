package domain

// IncomingReferral is a referral another doctor sent to this practice (docs/sections.md §19).
type IncomingReferral struct {
	RecordBase
	ReceivedOn      Date    `json:"received_on" jsonschema:"required"`
	ReferralDate    *Date   `json:"referral_date"`
	ReferringDoctor Contact `json:"referring_doctor" jsonschema:"required"`
	Question        *string `json:"question" jsonschema:"maxLength=2000,format=text"`
	DiagnosesText   *string `json:"diagnoses_text" jsonschema:"maxLength=2000,format=text"`
	Urgency         *string `json:"urgency" jsonschema:"enum=routine,enum=urgent"`
	FileID          *UUID   `json:"file_id"`
}

func (r *IncomingReferral) normalize(RuleContext) { defaultTo(&r.Urgency, "routine") }

func (r *IncomingReferral) check(rc RuleContext, errs *FieldErrors) {
	notFuture("received_on", &r.ReceivedOn, rc, errs)
	orderedDates("referral_date", r.ReferralDate, &r.ReceivedOn, errs, "must not be after received_on")
	r.ReferringDoctor.check("referring_doctor", errs)
}

func (r *IncomingReferral) refs() []Ref {
	out := r.RecordBase.refs()
	if r.FileID != nil {
		out = append(out, fileRef("file_id", *r.FileID, ""))
	}
	return out
}

const exampleIncomingReferral = `{"customer_id":$CUSTOMER,"received_on":"2026-03-09","referral_date":"2026-03-05",
"referring_doctor":{"name":"Dr. Maria Gruber","specialty":"General medicine","address":{"street":"Ringstraße 5","postal_code":"8010","city":"Graz"}},
"question":"Please assess the blood pressure.","urgency":"routine"}`
