package fhir

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/praxis-health/praxis/domain"
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
	labRow  = "r"
	gdtTest = "t"
)

// rowsOf are a report's rows as objects of the Observation's feed: each
// with its id, the report's version, time of change, patient and status,
// when it was measured (collected, examined), its LOINC code, where it
// comes from ("source"), and the row itself. Nothing else of the report is
// repeated in each row.
func rowsOf(o object) []object {
	source, rows, when := reportRows(o)
	var a fastjson.Arena
	out := make([]object, len(rows))
	for i, row := range rows {
		v := a.NewObject()
		v.Set("id", a.NewString(rowID(o, source, i)))
		v.Set("source", a.NewString(source))
		for _, f := range []string{"version", "updated_at", "customer_id"} {
			if x := o.field(f); x != nil {
				v.Set(f, x)
			}
		}
		v.Set("status", a.NewString(reportStatus(o)))
		if when != "" {
			v.Set("measured_at", a.NewString(when))
		}
		if l := str(row, "loinc_code"); l != "" {
			v.Set("loinc_code", a.NewString(l))
		}
		v.Set("row", row.v)
		out[i] = object{v}
	}
	return out
}

// reportRows are a report's rows, the letter of their ids, and when they
// were measured: a lab result's rows when collected, a GDT result's tests
// when examined.
func reportRows(o object) (letter string, rows []object, when string) {
	if g := examination(o); g.v != nil {
		return gdtTest, g.items("tests"), examinedAt(g)
	}
	return labRow, o.items("results"), str(o, "collected_at")
}

// rowID is the id of a report's row i (from 0).
func rowID(o object, letter string, i int) string { return idOf(o) + "." + letter + strconv.Itoa(i+1) }

// rowReferences are the references a report names its rows by.
func rowReferences(o object) []reference {
	letter, rows, _ := reportRows(o)
	out := make([]reference, len(rows))
	for i := range out {
		out[i] = reference{Reference: "Observation/" + rowID(o, letter, i)}
	}
	return out
}

// rowObservation is a row of a report as an Observation.
func rowObservation(o object) resource {
	if str(o, "source") == gdtTest {
		return testObservation(o)
	}
	return labObservation(o)
}

// labObservation is a lab result's row: its name, LOINC code and the lab's
// own code, the value with the unit as the lab wrote it (not claimed to be
// UCUM) or the text result, the reference range, the lab's flag as
// interpretation, the comment.
func labObservation(o object) resource {
	x, subject := o.obj("row"), patientOf(o)
	r := observationResource{head: headOf("Observation", o), Status: str(o, "status"), Subject: &subject, Category: laboratory,
		Code: codeableConcept{Text: str(x, "name")}, EffectiveDateTime: str(o, "measured_at"), Note: notes(str(x, "comment"))}
	if l := str(x, "loinc_code"); l != "" {
		r.Code.Coding = append(r.Code.Coding, coding{System: systemLOINC, Code: l})
	}
	if c := str(x, "code"); c != "" {
		r.Code.Coding = append(r.Code.Coding, coding{Code: c}) // the lab's own code: its system unknown
	}
	unit := str(x, "unit")
	if q, ok := decimal(x, "value"); ok {
		r.ValueQuantity = &quantity{Value: q, Unit: unit}
	} else {
		r.ValueString = str(x, "value_text")
	}
	rr := referenceRange{Text: str(x, "reference_text")}
	if low, ok := decimal(x, "reference_low"); ok {
		rr.Low = &quantity{Value: low, Unit: unit}
	}
	if high, ok := decimal(x, "reference_high"); ok {
		rr.High = &quantity{Value: high, Unit: unit}
	}
	r.ReferenceRange = rangeOf(rr)
	if code, ok := interpretations[str(x, "flag")]; ok {
		r.Interpretation = []codeableConcept{*concept(systemInterpretation, code)}
	}
	return r
}

// testObservation is a GDT result's test (8410): the device's test id as
// code with its name (8411), the value (8420) and unit (8421), the normal
// range (8460–8462), the limit indicator (8422) as interpretation,
// comments and result text (8470, 8480) as notes.
func testObservation(o object) resource {
	x, subject := o.obj("row"), patientOf(o)
	r := observationResource{head: headOf("Observation", o), Status: "final", Subject: &subject,
		Code:              codeableConcept{Coding: []coding{{Code: str(x, "id")}}, Text: str(x, "name")}, // the device's test id: its system is the device's
		EffectiveDateTime: str(o, "measured_at"), Note: notes(append(strs(x, "comments"), strs(x, "result_text")...)...)}
	unit := str(x, "unit")
	if v, ok := gdtDecimal(str(x, "value")); ok {
		r.ValueQuantity = &quantity{Value: v, Unit: unit}
	} else {
		r.ValueString = str(x, "value")
	}
	rr := referenceRange{Text: strings.Join(strs(x, "normal_text"), " ")}
	if low, ok := gdtDecimal(str(x, "normal_low")); ok {
		rr.Low = &quantity{Value: low, Unit: unit}
	}
	if high, ok := gdtDecimal(str(x, "normal_high")); ok {
		rr.High = &quantity{Value: high, Unit: unit}
	}
	r.ReferenceRange = rangeOf(rr)
	if code, ok := limitIndicators[strings.ToUpper(str(x, "limit_indicator"))]; ok {
		r.Interpretation = []codeableConcept{*concept(systemInterpretation, code)}
	}
	return r
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

func (r rowsReader) get(ctx context.Context, grant domain.Grant, id string) (native, error) {
	report, i, ok := r.split(id)
	if !ok {
		return native{}, domain.ErrNotFound
	}
	v, err := r.reports.get(ctx, grant, report)
	if err != nil {
		return native{}, err
	}
	o, err := decodeObject(v.body)
	if err != nil {
		return native{}, err
	}
	rows := rowsOf(o)
	if i >= len(rows) {
		return native{}, domain.ErrNotFound
	}
	return native{body: rows[i].v.MarshalTo(nil), version: v.version}, nil
}

func (r rowsReader) batch(ctx context.Context, grant domain.Grant, ids []string) ([]byte, error) {
	var reports []string
	for _, id := range ids {
		if report, _, ok := r.split(id); ok && !slices.Contains(reports, report) {
			reports = append(reports, report)
		}
	}
	if len(reports) == 0 {
		return []byte("[]"), nil
	}
	data, err := r.reports.batch(ctx, grant, reports)
	if err != nil {
		return nil, err
	}
	return rowsData(data, func(row object) bool { return slices.Contains(ids, idOf(row)) })
}

// list reads a page of reports and answers their rows. A page holds at
// most q.Limit rows the query's conditions keep (q.Where: a search's code
// and date; every row without) where it can: when the reports of a page
// have more, fewer reports are read; a report's rows are never split, so
// one report with more than q.Limit is a page of its own. The other rows
// of a report come along, for the search to match them again.
func (r rowsReader) list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (nativePage, error) {
	limit := q.Limit
	for {
		page, err := r.reports.list(ctx, grant, q)
		if err != nil {
			return nativePage{}, err
		}
		n := 0
		data, err := rowsData(page.data, func(row object) bool {
			if rowHolds(row, q.Where) {
				n++
			}
			return true
		})
		if err != nil || n <= limit || q.Limit <= 1 {
			page.data = data
			return page, err
		}
		q.Limit /= 2
	}
}

// rowHolds tells whether a report's row meets the conditions a search put
// on its rows (an observed row's code and date; others are the report's).
func rowHolds(row object, where []domain.Condition) bool {
	for _, c := range where {
		switch c.Field {
		case domain.SearchCode:
			if !slices.Contains(c.Values, str(row, "loinc_code")) {
				return false
			}
		case domain.SearchObserved:
			from, to, ok := domain.ValueSpan(str(row, "measured_at"))
			if !ok || !slices.ContainsFunc(c.Instants, func(r domain.InstantRange) bool {
				return value{prefix: r.Prefix, from: r.From, to: r.To}.inRange(from, to)
			}) {
				return false
			}
		}
	}
	return true
}

// rowsData are the rows of a JSON array of reports, those keep tells.
func rowsData(reports []byte, keep func(row object) bool) ([]byte, error) {
	objs, err := decodeObjects(reports)
	if err != nil {
		return nil, err
	}
	out := bytes.NewBufferString("[")
	for _, o := range objs {
		for _, row := range rowsOf(o) {
			if !keep(row) {
				continue
			}
			if out.Len() > 1 {
				out.WriteByte(',')
			}
			out.Write(row.v.MarshalTo(nil))
		}
	}
	out.WriteByte(']')
	return out.Bytes(), nil
}
