package domain

// Anamnesis is a patient's history as taken (docs/sections.md §12).
type Anamnesis struct {
	RecordBase
	RecordedOn        *Date    `json:"recorded_on"`
	ChiefComplaint    *string  `json:"chief_complaint" jsonschema:"maxLength=2000,format=text"`
	PresentIllness    *string  `json:"present_illness" jsonschema:"maxLength=5000,format=text"`
	PastHistory       *string  `json:"past_history" jsonschema:"maxLength=5000,format=text"`
	FamilyHistory     *string  `json:"family_history" jsonschema:"maxLength=2000,format=text"`
	SocialHistory     *string  `json:"social_history" jsonschema:"maxLength=2000,format=text"`
	Allergies         *string  `json:"allergies" jsonschema:"maxLength=2000,format=text"`
	CurrentMedication *string  `json:"current_medication" jsonschema:"maxLength=2000,format=text"`
	Vaccinations      *string  `json:"vaccinations" jsonschema:"maxLength=2000,format=text"`
	Answers           []Answer `json:"answers" jsonschema:"maxItems=200"`
}

// Answer is one question of an intake form and its answer.
type Answer struct {
	Question string `json:"question" jsonschema:"required,maxLength=500,format=line,pattern=\\S"`
	Answer   string `json:"answer" jsonschema:"required,maxLength=2000,format=text,pattern=\\S"`
}

func (a *Anamnesis) normalize(rc RuleContext) {
	if a.RecordedOn == nil {
		a.RecordedOn = ptr(rc.Today())
	}
}

func (a *Anamnesis) check(rc RuleContext, errs *FieldErrors) {
	notFuture("recorded_on", a.RecordedOn, rc, errs)
	texts := []*string{a.ChiefComplaint, a.PresentIllness, a.PastHistory, a.FamilyHistory, a.SocialHistory,
		a.Allergies, a.CurrentMedication, a.Vaccinations}
	for _, t := range texts {
		if !blank(t) {
			return
		}
	}
	if len(a.Answers) == 0 {
		errs.Add("answers", "a text field or answers is required")
	}
}

const exampleAnamnesis = `{"customer_id":$CUSTOMER,"user_id":"$USER","recorded_on":"2026-03-10",
"chief_complaint":"Headaches in the morning","allergies":"Penicillin",
"answers":[{"question":"Do you smoke?","answer":"No"}]}`
