package domain

import (
	"encoding/json"
	"time"

	"github.com/praxis-health/praxis/domain/gdt"
)

// Observed rows: what a search of Observations and reports (FHIR's
// Observation and DiagnosticReport `code` and `date`) compares, kept by the
// store beside each object of a section that declares HookObserved, so that
// the search is a condition of the query (docs/contract.md §15). A
// measurement is one row; a lab result is a row of its own (Row 0: the
// report, no code) and one per result (Row 1, 2, …), each when its sample
// was collected.

// ObservedRow is one observed row of an object.
type ObservedRow struct {
	Row  int
	Code string // the LOINC code, "" for none
	// From and Until are when it was measured as the range [From, Until)
	// its value spells (an instant: its second); both zero when unknown.
	From, Until time.Time
}

// ObservedOf are the observed rows of an object of kind, from its payload;
// none for a kind that keeps none or a payload that does not decode.
func ObservedOf(kind *Kind, payload []byte) []ObservedRow {
	if kind.observedRows == nil {
		return nil
	}
	return kind.observedRows(payload)
}

// measurementObserved: a measurement is one row, its LOINC code when measured.
func measurementObserved(payload []byte) []ObservedRow {
	var m struct {
		MeasuredAt string  `json:"measured_at"`
		LOINCCode  *string `json:"loinc_code"`
	}
	if json.Unmarshal(payload, &m) != nil {
		return nil
	}
	row := ObservedRow{Code: deref(m.LOINCCode)}
	row.From, row.Until, _ = ValueSpan(m.MeasuredAt)
	return []ObservedRow{row}
}

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

// ValueSpan is the range [from, to) a FHIR date, dateTime or instant
// spells at its precision: YYYY a year, YYYY-MM a month, YYYY-MM-DD a day
// (UTC), an instant its second (its millisecond when it has a fraction), a
// dateTime without seconds its minute.
func ValueSpan(s string) (from, to time.Time, ok bool) {
	if from, to, ok := DateSpan(s); ok {
		return from, to, true
	}
	for _, f := range []struct {
		layout string
		next   func(time.Time) time.Time
	}{
		{time.RFC3339Nano, func(t time.Time) time.Time { return t.Add(time.Second) }},
		{"2006-01-02T15:04Z07:00", func(t time.Time) time.Time { return t.Add(time.Minute) }},
	} {
		if t, err := time.Parse(f.layout, s); err == nil {
			if f.layout == time.RFC3339Nano && t.Nanosecond() != 0 {
				return t, t.Add(time.Millisecond), true
			}
			return t, f.next(t), true
		}
	}
	return time.Time{}, time.Time{}, false
}

// ExaminedSpan is when a device's GDT result says it examined, as the
// range its value spells: examined_at its second, else examined_on its day.
func ExaminedSpan(info *gdt.Info) (from, to time.Time, ok bool) {
	switch {
	case info == nil:
		return time.Time{}, time.Time{}, false
	case info.ExaminedAt != nil:
		return ValueSpan(*info.ExaminedAt)
	case info.ExaminedOn != nil:
		return ValueSpan(*info.ExaminedOn)
	}
	return time.Time{}, time.Time{}, false
}
