package domain

import (
	"encoding/json"
	"time"
)

// LabResult is a laboratory report (docs/sections.md §23).
type LabResult struct {
	RecordBase
	LabName     *string    `json:"lab_name" jsonschema:"maxLength=200,format=line"`
	OrderNumber *string    `json:"order_number" jsonschema:"maxLength=50,format=line"`
	CollectedAt *DateTime  `json:"collected_at"`
	ReportedAt  DateTime   `json:"reported_at" jsonschema:"required"`
	Status      *string    `json:"status" jsonschema:"enum=final,enum=preliminary,enum=corrected"`
	Results     []LabValue `json:"results" jsonschema:"maxItems=500"`
	FileID      *UUID      `json:"file_id"`
}

// LabValue is one row of a lab report.
type LabValue struct {
	Name          string   `json:"name" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	Code          *string  `json:"code" jsonschema:"maxLength=20,format=line"`
	LOINCCode     *string  `json:"loinc_code" jsonschema:"format=loinc"`
	Value         *Decimal `json:"value"`
	ValueText     *string  `json:"value_text" jsonschema:"maxLength=200,format=line"`
	Unit          *string  `json:"unit" jsonschema:"maxLength=20,format=line"`
	ReferenceLow  *Decimal `json:"reference_low"`
	ReferenceHigh *Decimal `json:"reference_high"`
	ReferenceText *string  `json:"reference_text" jsonschema:"maxLength=100,format=line"`
	Flag          *string  `json:"flag" jsonschema:"enum=normal,enum=low,enum=high,enum=abnormal,enum=critical"`
	Comment       *string  `json:"comment" jsonschema:"maxLength=500,format=line"`
}

func (l *LabResult) normalize(RuleContext) { defaultTo(&l.Status, "final") }

func (l *LabResult) check(rc RuleContext, errs *FieldErrors) {
	notFutureInstant("reported_at", &l.ReportedAt, rc, errs)
	if l.CollectedAt != nil && l.CollectedAt.After(l.ReportedAt.Time) {
		errs.Add("collected_at", "must not be after reported_at")
	}
	if len(l.Results) == 0 && l.FileID == nil {
		errs.Add("results", "results or file_id (or both) is required")
	}
	for i, r := range l.Results {
		at := "results[" + itoa(i) + "]"
		if (r.Value == nil) == (r.ValueText == nil) {
			errs.Add(at+".value", "exactly one of value and value_text is required")
		}
		if r.Unit != nil && r.Value == nil {
			errs.Add(at+".unit", "is only allowed with value")
		}
		if r.ReferenceLow != nil && r.ReferenceHigh != nil && r.ReferenceLow.Rat().Cmp(r.ReferenceHigh.Rat()) > 0 {
			errs.Add(at+".reference_high", "must not be below reference_low")
		}
	}
}

func (l *LabResult) refs() []Ref {
	out := l.RecordBase.refs()
	if l.FileID != nil {
		out = append(out, fileRef("file_id", *l.FileID, ""))
	}
	return out
}

const exampleLabResult = `{"customer_id":$CUSTOMER,"lab_name":"Labor Dr. Weiss","order_number":"A-2026-0310",
"collected_at":"2026-03-10T08:00:00+01:00","reported_at":"2026-03-10T16:30:00+01:00","status":"final",
"results":[{"name":"HbA1c","loinc_code":"4548-4","value":"6.1","unit":"%","reference_low":"4.0","reference_high":"5.6","flag":"high"},
{"name":"Urine colour","value_text":"yellow"}]}`

// labResultObserved: the report (row 0, no code) and each result with its
// LOINC code, all when the sample was collected.
func labResultObserved(payload []byte) []ObservedRow {
	var l struct {
		CollectedAt *string `json:"collected_at"`
		Results     []struct {
			LOINCCode *string `json:"loinc_code"`
		} `json:"results"`
	}
	if json.Unmarshal(payload, &l) != nil {
		return nil
	}
	var from, until time.Time
	if l.CollectedAt != nil {
		from, until, _ = ValueSpan(*l.CollectedAt)
	}
	rows := []ObservedRow{{From: from, Until: until}}
	for i, r := range l.Results {
		rows = append(rows, ObservedRow{Row: i + 1, Code: deref(r.LOINCCode), From: from, Until: until})
	}
	return rows
}
