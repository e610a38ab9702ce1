package fhir

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/gdt"
)

// A report's rows are Observations of their own: each row of a lab result
// (id <report>.r1, .r2, …) and each test (8410) of a device's GDT result
// (<file>.t1, …). They are read, searched and exported with the
// measurements (the Observation's feed: measurements, then the lab
// results', then the GDT results'), and a report names them as its
// results (_include=DiagnosticReport:result adds them to a search). They
// have no store of their own: a row is its report's, with the report's
// version and time of change.

// rowLetters mark a row's id: a lab result's row, a GDT result's test.
const (
	labRowLetter  = "r"
	gdtTestLetter = "t"
)

// row is what a report's row repeats of its report: the patient, the
// report's status and when it was measured (collected, examined).
type row struct {
	patient  domain.CustomerID
	status   string
	measured string
}

// labRow is a lab result's row as an Observation's value.
type labRow struct {
	row
	value domain.LabValue
}

// gdtTest is a GDT result's test (8410) as an Observation's value.
type gdtTest struct {
	row
	test gdt.Test
}

// rowsOf are a report's rows as items of the Observation's feed: each with
// its id, the report's version, time of change and patient. Nothing else
// of the report is repeated in each row.
func rowsOf(report item) []item {
	var out []item
	switch r := report.value.(type) {
	case *domain.LabResult:
		shared := row{patient: r.CustomerID, status: labStatus(r), measured: instant(r.CollectedAt)}
		for i, v := range r.Results {
			out = append(out, rowItem(report, labRowLetter, i, labRow{shared, v}))
		}
	case domain.File:
		if r.GDT == nil {
			return nil
		}
		shared := row{patient: r.CustomerID, status: "final", measured: examinedAt(r.GDT)}
		for i, t := range r.GDT.Tests {
			out = append(out, rowItem(report, gdtTestLetter, i, gdtTest{shared, t}))
		}
	}
	return out
}

// rowItem is row i (from 0) of a report.
func rowItem(report item, letter string, i int, value any) item {
	return item{id: rowID(report.id, letter, i), version: report.version, updated: report.updated, patient: report.patient, value: value}
}

// rowID is the id of a report's row i (from 0).
func rowID(report, letter string, i int) string { return report + "." + letter + strconv.Itoa(i+1) }

// rowReferences are the references a report names its rows by.
func rowReferences(report item) []reference {
	rows := rowsOf(report)
	out := make([]reference, len(rows))
	for i, r := range rows {
		out[i] = reference{Reference: "Observation/" + r.id}
	}
	return out
}

// observedCode is the LOINC code of an Observation's value: a measurement's,
// a lab row's ("" for none, and for a device's test).
func observedCode(it item) string {
	switch v := it.value.(type) {
	case *domain.Measurement:
		return opt(v.LOINCCode)
	case labRow:
		return opt(v.value.LOINCCode)
	}
	return ""
}

// observedAt is when an Observation's value was measured.
func observedAt(it item) string {
	switch v := it.value.(type) {
	case *domain.Measurement:
		return instant(&v.MeasuredAt)
	case labRow:
		return v.measured
	case gdtTest:
		return v.measured
	}
	return ""
}

// labObservation is a lab result's row: its name, LOINC code and the lab's
// own code, the value with the unit as the lab wrote it (not claimed to be
// UCUM) or the text result, the reference range, the lab's flag as
// interpretation, the comment.
func labObservation(it item, l labRow) resource {
	x, subject := l.value, toPatient(l.patient)
	r := observationResource{head: headOf("Observation", it), Status: l.status, Subject: &subject, Category: laboratory,
		Code: codeableConcept{Text: x.Name}, EffectiveDateTime: l.measured, Note: notes(opt(x.Comment))}
	if c := opt(x.LOINCCode); c != "" {
		r.Code.Coding = append(r.Code.Coding, coding{System: systemLOINC, Code: c})
	}
	if c := opt(x.Code); c != "" {
		r.Code.Coding = append(r.Code.Coding, coding{Code: c}) // the lab's own code: its system unknown
	}
	unit := opt(x.Unit)
	if q, ok := decimalOf(x.Value); ok {
		r.ValueQuantity = &quantity{Value: q, Unit: unit}
	} else {
		r.ValueString = opt(x.ValueText)
	}
	rr := referenceRange{Text: opt(x.ReferenceText)}
	if low, ok := decimalOf(x.ReferenceLow); ok {
		rr.Low = &quantity{Value: low, Unit: unit}
	}
	if high, ok := decimalOf(x.ReferenceHigh); ok {
		rr.High = &quantity{Value: high, Unit: unit}
	}
	r.ReferenceRange = rangeOf(rr)
	if code, ok := interpretations[opt(x.Flag)]; ok {
		r.Interpretation = []codeableConcept{*concept(systemInterpretation, code)}
	}
	return r
}

// testObservation is a GDT result's test (8410): the device's test id as
// code with its name (8411), the value (8420) and unit (8421), the normal
// range (8460–8462), the limit indicator (8422) as interpretation,
// comments and result text (8470, 8480) as notes.
func testObservation(it item, g gdtTest) resource {
	x, subject := g.test, toPatient(g.patient)
	r := observationResource{head: headOf("Observation", it), Status: "final", Subject: &subject,
		Code:              codeableConcept{Coding: []coding{{Code: x.ID}}, Text: x.Name}, // the device's test id: its system is the device's
		EffectiveDateTime: g.measured, Note: notes(append(nonEmpty(x.Comments), nonEmpty(x.ResultText)...)...)}
	if v, ok := gdtDecimal(x.Value); ok {
		r.ValueQuantity = &quantity{Value: v, Unit: x.Unit}
	} else {
		r.ValueString = x.Value
	}
	rr := referenceRange{Text: strings.Join(nonEmpty(x.NormalText), " ")}
	if low, ok := gdtDecimal(opt(x.NormalLow)); ok {
		rr.Low = &quantity{Value: low, Unit: x.Unit}
	}
	if high, ok := gdtDecimal(opt(x.NormalHigh)); ok {
		rr.High = &quantity{Value: high, Unit: x.Unit}
	}
	r.ReferenceRange = rangeOf(rr)
	if code, ok := limitIndicators[strings.ToUpper(opt(x.LimitIndicator))]; ok {
		r.Interpretation = []codeableConcept{*concept(systemInterpretation, code)}
	}
	return r
}

// nonEmpty are the texts that are not empty.
func nonEmpty(texts []string) []string {
	return slices.DeleteFunc(slices.Clone(texts), func(t string) bool { return t == "" })
}

const systemInterpretation = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"

// rangeOf is a reference range as the element's list: none when empty.
func rangeOf(r referenceRange) []referenceRange {
	if r.empty() {
		return nil
	}
	return []referenceRange{r}
}

// rowsReader reads the rows of the reports another reader reads: its
// objects are rowsOf theirs, a row's id its report's and its number.
type rowsReader struct {
	reports reader
	letter  string
}

// split is a row id's report id and row number (from 0).
func (r rowsReader) split(id string) (string, int, bool) {
	report, n, ok := strings.Cut(id, "."+r.letter)
	i, err := strconv.Atoi(n)
	if !ok || err != nil || i < 1 || strconv.Itoa(i) != n || !r.reports.validID(report) {
		return "", 0, false
	}
	return report, i - 1, true
}

func (r rowsReader) validID(id string) bool { _, _, ok := r.split(id); return ok }

func (r rowsReader) get(ctx context.Context, grant domain.Grant, id string) (item, error) {
	report, i, ok := r.split(id)
	if !ok {
		return item{}, domain.ErrNotFound
	}
	it, err := r.reports.get(ctx, grant, report)
	if err != nil {
		return item{}, err
	}
	rows := rowsOf(it)
	if i >= len(rows) {
		return item{}, domain.ErrNotFound
	}
	return rows[i], nil
}

func (r rowsReader) batch(ctx context.Context, grant domain.Grant, ids []string) ([]item, error) {
	var reports []string
	for _, id := range ids {
		if report, _, ok := r.split(id); ok && !slices.Contains(reports, report) {
			reports = append(reports, report)
		}
	}
	if len(reports) == 0 {
		return nil, nil
	}
	items, err := r.reports.batch(ctx, grant, reports)
	if err != nil {
		return nil, err
	}
	var out []item
	for _, report := range items {
		for _, row := range rowsOf(report) {
			if slices.Contains(ids, row.id) {
				out = append(out, row)
			}
		}
	}
	return out, nil
}

// list reads a page of reports and answers their rows. A page holds at
// most q.Limit rows the query's conditions keep (q.Where: a search's code
// and date; every row without) where it can: when the reports of a page
// have more, fewer reports are read; a report's rows are never split, so
// one report with more than q.Limit is a page of its own. The other rows
// of a report come along, for the search to match them again.
func (r rowsReader) list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (page, error) {
	limit := q.Limit
	for {
		p, err := r.reports.list(ctx, grant, q)
		if err == nil {
			err = decodeAll(p.items)
		}
		if err != nil {
			return page{}, err
		}
		var rows []item
		n := 0
		for _, report := range p.items {
			for _, row := range rowsOf(report) {
				if rowHolds(row, q.Where) {
					n++
				}
				rows = append(rows, row)
			}
		}
		if n <= limit || q.Limit <= 1 {
			p.items = rows
			return p, nil
		}
		q.Limit /= 2
	}
}

// rowHolds tells whether a report's row meets the conditions a search put
// on its rows (an observed row's code and date; others are the report's).
func rowHolds(row item, where []domain.Condition) bool {
	for _, c := range where {
		switch c.Field {
		case domain.SearchCode:
			if !slices.Contains(c.Values, observedCode(row)) {
				return false
			}
		case domain.SearchObserved:
			from, to, ok := domain.ValueSpan(observedAt(row))
			if !ok || !slices.ContainsFunc(c.Instants, func(r domain.InstantRange) bool {
				return value{prefix: r.Prefix, from: r.From, to: r.To}.inRange(from, to)
			}) {
				return false
			}
		}
	}
	return true
}
