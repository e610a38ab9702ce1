package domain_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

var vienna, _ = time.LoadLocation("Europe/Vienna")

// rc is a fixed moment after every example's dates.
var rc = domain.RuleContext{Now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Zone: vienna}

func exampleBody(k *domain.Kind) string { return k.ExampleWith(domain.SampleIDs) }

func fieldsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	fe, ok := domain.AsFieldErrors(err)
	if !ok {
		t.Fatalf("want field errors, got %v", err)
	}
	out := map[string]string{}
	for _, e := range fe {
		out[e.Field] = e.Message
	}
	return out
}

func TestEveryKindAcceptsItsExampleAndNamesEachMissingRequiredField(t *testing.T) {
	t.Parallel()
	for _, k := range domain.Kinds() {
		t.Run(k.Slug, func(t *testing.T) {
			t.Parallel()
			body := exampleBody(k)
			obj, err := k.Decode(domain.ParseDocument([]byte(body)), rc)
			if err != nil {
				t.Fatalf("example refused: %v", err)
			}
			var answered map[string]any
			if err := json.Unmarshal(obj.JSON, &answered); err != nil {
				t.Fatal(err)
			}
			props := k.Schemas().Output["properties"].(map[string]any)
			for name := range props {
				if _, ok := answered[name]; !ok && name != "id" && name != "version" && name != "created_at" && name != "updated_at" {
					t.Errorf("answer lacks field %s", name)
				}
			}
			required, _ := k.Schemas().Input["required"].([]any)
			if len(required) == 0 {
				t.Fatal("no required field in the input schema")
			}
			for _, f := range required {
				var doc map[string]any
				_ = json.Unmarshal([]byte(body), &doc)
				doc[f.(string)] = nil // null on create means absent
				blanked, _ := json.Marshal(doc)
				_, err := k.Decode(domain.ParseDocument(blanked), rc)
				if msg, ok := fieldsOf(t, err)[f.(string)]; !ok || msg != "is required" {
					t.Errorf("blanking %s: errors %v", f, err)
				}
			}
		})
	}
}

func TestDecodeReportsEveryFieldAtOnceWithoutValues(t *testing.T) {
	t.Parallel()
	body := `{"customer_id":0,"text":"   ","noted_on":"2999-01-01","title":"Secret\u0007Title","nope":1,"user_id":"ABC"}`
	_, err := domain.KindOf("notes").Decode(domain.ParseDocument([]byte(body)), rc)
	got := fieldsOf(t, err)
	for _, f := range []string{"customer_id", "text", "title", "nope", "user_id"} {
		if _, ok := got[f]; !ok {
			t.Errorf("no error for %s in %v", f, got)
		}
	}
	if strings.Contains(err.Error(), "Secret") || strings.Contains(err.Error(), "ABC") {
		t.Errorf("a message repeats a value: %v", err)
	}
	// noted_on passes the schema; its rule is checked once the schema holds.
	_, err = domain.KindOf("notes").Decode(domain.ParseDocument([]byte(`{"customer_id":1,"text":"x","noted_on":"2999-01-01"}`)), rc)
	if got := fieldsOf(t, err); got["noted_on"] != "must not be in the future" {
		t.Errorf("noted_on: %v", got)
	}
}

func TestKindRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind, body, field string
	}{
		{"customers", `{"first_name":"A","last_name":"B","birth_date":"1980-01-01","svnr":"1237010181"}`, "svnr"},
		{"customers", `{"first_name":"A","last_name":"B","birth_date":"1980-01-01","kvnr":"A123456789"}`, "kvnr"},
		{"customers", `{"first_name":"A","last_name":"B","birth_date":"1980-01-01","iban":"AT611904300234573202"}`, "iban"},
		{"customers", `{"first_name":"A","last_name":"B","birth_date":"1899-12-31"}`, "birth_date"},
		{"customers", `{"first_name":"A","last_name":"B","birth_date":"1980-01-01","phone":"0664 123"}`, "phone"},
		{"customers", `{"first_name":"A","last_name":"B","birth_date":"1980-01-01","email":"Anna <a@b.at>"}`, "email"},
		{"customers", `{"first_name":"A","last_name":"B","birth_date":"1980-01-01","address":{"street":"S","postal_code":"123","city":"W"}}`, "address.postal_code"},
		{"customers", `{"first_name":"A","last_name":"B","birth_date":"1980-01-01","insurer":"oegk","insurer_name":"X"}`, "insurer_name"},
		{"diagnoses", `{"customer_id":1}`, "text"},
		{"diagnoses", `{"customer_id":1,"icd10_code":"i10"}`, "icd10_code"},
		{"diagnoses", `{"customer_id":1,"text":"x","code_system":"icd10_gm"}`, "code_system"},
		{"measurements", `{"customer_id":1,"measured_at":"2026-03-10T09:00:00","type":"pulse","value":"70","unit":"/min"}`, "measured_at"},
		{"measurements", `{"customer_id":1,"measured_at":"2026-03-10T09:00:00Z","type":"pulse","value":"700","unit":"/min"}`, "value"},
		{"measurements", `{"customer_id":1,"measured_at":"2026-03-10T09:00:00Z","type":"pulse","value":"70","unit":"kg"}`, "unit"},
		{"measurements", `{"customer_id":1,"measured_at":"2026-03-10T09:00:00Z","type":"pulse","value":"70","unit":"/min","loinc_code":"8310-5"}`, "loinc_code"},
		{"measurements", `{"customer_id":1,"measured_at":"2026-03-10T09:00:00Z","type":"other","value":"1","unit":"x"}`, "name"},
		{"measurements", `{"customer_id":1,"measured_at":"2026-03-10T09:00:00Z","type":"blood_pressure","components":[{"code":"8480-6","value":"80","unit":"mm[Hg]"},{"code":"8462-4","value":"90","unit":"mm[Hg]"}]}`, "components"},
		{"long-term-medications", `{"customer_id":1,"name":"X","pzn":"1234563"}`, "pzn"},
		{"long-term-medications", `{"customer_id":1,"name":"X","started_on":"2026-02-01","ended_on":"2026-01-01"}`, "ended_on"},
		{"sports-exemptions", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","valid_from":"2026-03-01","scope":"partial"}`, "allowed_activities"},
		{"regulations", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","type":"imaging","items":[{"description":"X"}],"sessions":3}`, "diagnosis_ids"},
		{"regulations", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","type":"imaging","items":[{"description":"X"}],"sessions":3,"diagnosis_ids":["019cd6cf-68f8-70c6-a6a3-a4506513270e"]}`, "sessions"},
		{"regulations", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","type":"medication","items":[{"description":"X","code":"1234563"}],"diagnosis_ids":["019cd6cf-68f8-70c6-a6a3-a4506513270e"]}`, "items[0].code"},
		{"regulations", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","type":"lab","items":[],"diagnosis_ids":["019cd6cf-68f8-70c6-a6a3-a4506513270e"]}`, "items"},
		{"visit-confirmations", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","visit_date":"2026-03-01","diagnosis_ids":["019cd6cf-68f8-70c6-a6a3-a4506513270e"]}`, "diagnosis_ids"},
		{"visit-confirmations", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","visit_date":"2026-03-01","time_from":"10:00"}`, "time_to"},
		{"doctor-letters", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","subject":"S"}`, "text"},
		{"patient-letters", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","subject":"S","text":"t","sent_at":"2026-03-01T10:00:00Z"}`, "sent_at"},
		{"medical-transports", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","transport_type":"taxi","transport_date":"2026-03-01","destination":{"name":"X"},"medical_justification":"m","diagnosis_ids":["019cd6cf-68f8-70c6-a6a3-a4506513270e"],"needs":["oxygen","oxygen"]}`, "needs"},
		{"medical-transports", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","transport_type":"taxi","transport_date":"2026-03-01","destination":{"name":"X"},"medical_justification":"m","diagnosis_ids":["019cd6cf-68f8-70c6-a6a3-a4506513270e"]}`, "destination.address"},
		{"lab-results", `{"customer_id":1,"reported_at":"2026-03-10T16:30:00Z"}`, "results"},
		{"lab-results", `{"customer_id":1,"reported_at":"2026-03-10T16:30:00Z","results":[{"name":"X","value":"1","value_text":"one"}]}`, "results[0].value"},
		{"lab-results", `{"customer_id":1,"reported_at":"2026-03-10T16:30:00Z","collected_at":"2026-03-11T16:30:00Z","results":[{"name":"X","value":"1"}]}`, "collected_at"},
		{"illness-notifications", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","issued_on":"2026-03-09","incapable_from":"2026-03-05","cause":"illness"}`, "incapable_from"},
		{"invoices", strings.Replace(exampleBody(domain.KindOf("invoices")), `"net_amount":"76.50"},`, `"net_amount":"76.49"},`, 1), "items[0].net_amount"},
		{"invoices", strings.Replace(exampleBody(domain.KindOf("invoices")), `"tax_amount":"4.00"`, `"tax_amount":"3.99"`, 1), "taxes[1].tax_amount"},
		{"invoices", strings.Replace(exampleBody(domain.KindOf("invoices")), `"gross_total":"100.50"`, `"gross_total":"100.00"`, 1), "gross_total"},
		{"invoices", strings.Replace(exampleBody(domain.KindOf("invoices")), `,"paid_at":"2026-03-10T10:00:00+01:00"`, ``, 1), "paid_at"},
		{"invoices", strings.Replace(exampleBody(domain.KindOf("invoices")), `{"tax_rate":"0","net_amount":"76.50","tax_amount":"0.00"},`, ``, 1), "taxes"},
		{"fee-notes", strings.Replace(exampleBody(domain.KindOf("fee-notes")), `"svnr":"1237010180",`, ``, 1), "submission_status"},
		{"fee-notes", strings.Replace(exampleBody(domain.KindOf("fee-notes")), `"tax_note":"Medical treatment, exempt from VAT (§ 6 Abs. 1 Z 19 UStG)",`, ``, 1), "tax_note"},
		{"cash-revenues", strings.Replace(exampleBody(domain.KindOf("cash-revenues")), `"kind":"sale"`, `"kind":"withdrawal"`, 1), "gross_total"},
		{"cash-revenues", strings.Replace(exampleBody(domain.KindOf("cash-revenues")), `"reference":"2026/0042",`, `"customer_id":1,`, 1), "customer_id"},
		{"illness-notifications", `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","issued_on":"2026-03-09","incapable_from":"2026-03-06","cause":"illness","ended_by_id":"019cd6cf-68f8-70c6-a6a3-a4506513270e"}`, "ended_by_id"},
	}
	for _, c := range cases {
		_, err := domain.KindOf(c.kind).Decode(domain.ParseDocument([]byte(c.body)), rc)
		if err == nil {
			t.Errorf("%s %s: accepted", c.kind, c.body)
			continue
		}
		if _, ok := fieldsOf(t, err)[c.field]; !ok {
			t.Errorf("%s: want an error on %s, got %v", c.kind, c.field, err)
		}
	}
}

func TestIllnessNotificationAcceptsTheWorkingDayBeforeAcrossAWeekend(t *testing.T) {
	t.Parallel()
	// 2026-03-09 is a Monday: the Friday before is one working day earlier.
	body := `{"customer_id":1,"user_id":"019bc0e2-1280-781f-a8e2-5d940ed90475","issued_on":"2026-03-09","incapable_from":"2026-03-06","cause":"illness"}`
	if _, err := domain.KindOf("illness-notifications").Decode(domain.ParseDocument([]byte(body)), rc); err != nil {
		t.Fatal(err)
	}
}

func TestDateTimesAreAnsweredInTheCompanyZoneAndMeasurementsGetTheirLOINC(t *testing.T) {
	t.Parallel()
	obj, err := domain.KindOf("measurements").Decode(domain.ParseDocument([]byte(`{"customer_id":1,"measured_at":"2026-07-10T07:08:00.9Z","type":"weight","value":"70.5","unit":"kg"}`)), rc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(obj.JSON)
	for _, want := range []string{`"measured_at":"2026-07-10T09:08:00+02:00"`, `"loinc_code":"29463-7"`, `"components":[]`, `"source":"manual"`, `"note":null`} {
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks %s", s, want)
		}
	}
}

func TestMergePatchValidatesTheWholeResult(t *testing.T) {
	t.Parallel()
	k := domain.CustomersKind()
	obj, err := k.Decode(domain.ParseDocument([]byte(exampleBody(k))), rc)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := k.Merge(obj.JSON, domain.ParseDocument([]byte(`{"phone":null,"address":{"city":"Graz","postal_code":"8010"}}`)), rc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(merged.JSON)
	if !strings.Contains(s, `"phone":null`) || !strings.Contains(s, `"city":"Graz"`) || !strings.Contains(s, `"street":"Hauptstraße 1"`) {
		t.Errorf("merged: %s", s)
	}
	if _, err := k.Merge(obj.JSON, domain.ParseDocument([]byte(`{"first_name":null}`)), rc); fieldsOf(t, err)["first_name"] != "is required" {
		t.Errorf("clearing a required field: %v", err)
	}
	if _, err := k.Merge(obj.JSON, domain.ParseDocument([]byte(`{"id":5}`)), rc); fieldsOf(t, err)["id"] != "cannot be changed" {
		t.Errorf("changing the id: %v", err)
	}
}

func TestChecksums(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		valid func(string) bool
		good  []string
		bad   []string
	}{
		{"svnr", domain.ValidSVNR, []string{"1237010180"}, []string{"1238010180", "0237010180", "123701018", "12370101800"}},
		{"kvnr", domain.ValidKVNR, []string{"A123456780"}, []string{"A123456781", "a123456780", "1123456780"}},
		{"iban", domain.ValidIBAN, []string{"AT611904300234573201", "DE89370400440532013000"}, []string{"AT611904300234573202", "at611904300234573201"}},
		{"pzn", domain.ValidPZN, []string{"1234562", "01234562"}, []string{"1234563", "123456"}},
		{"loinc", domain.ValidLOINC, []string{"8480-6", "8462-4", "85354-9", "29463-7", "2339-0"}, []string{"8480-5", "8480", "12345678-1"}},
	} {
		for _, g := range c.good {
			if !c.valid(g) {
				t.Errorf("%s %s refused", c.name, g)
			}
		}
		for _, b := range c.bad {
			if c.valid(b) {
				t.Errorf("%s %s accepted", c.name, b)
			}
		}
	}
}

func TestMedicalFeeServiceTotalAndPatchRules(t *testing.T) {
	t.Parallel()
	k := domain.KindOf("medical-fee-services")
	obj, err := k.Decode(domain.ParseDocument([]byte(exampleBody(k))), rc)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(obj.JSON); !strings.Contains(s, `"total":"76.50"`) || !strings.Contains(s, `"status":"open"`) || !strings.Contains(s, `"invoice_id":null`) {
		t.Fatalf("the spec's worked example: %s", s)
	}
	if _, err := k.Decode(domain.ParseDocument([]byte(strings.Replace(exampleBody(k), `"quantity":"1"`, `"quantity":"1","total":"1.00"`, 1))), rc); fieldsOf(t, err)["total"] != "is set by the server" {
		t.Errorf("a client's total: %v", err)
	}
	changed, err := k.Merge(obj.JSON, domain.ParseDocument([]byte(`{"quantity":"2.5","unit_price":"10.01","discount_percent":"0"}`)), rc)
	if err != nil || !strings.Contains(string(changed.JSON), `"total":"25.03"`) { // 25.025 half up
		t.Fatalf("patched total: %s %v", changed.JSON, err)
	}
	cancelled, err := k.Merge(obj.JSON, domain.ParseDocument([]byte(`{"status":"cancelled"}`)), rc)
	if err != nil || !strings.Contains(string(cancelled.JSON), `"status":"cancelled"`) {
		t.Fatalf("cancel: %s %v", cancelled.JSON, err)
	}
	if _, err := k.Merge(cancelled.JSON, domain.ParseDocument([]byte(`{"name":"X"}`)), rc); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("a PATCH of a cancelled service: %v, want a conflict", err)
	}
	if _, err := k.Merge(obj.JSON, domain.ParseDocument([]byte(`{"status":"billed"}`)), rc); fieldsOf(t, err)["status"] == "" {
		t.Errorf("setting billed: %v", err)
	}
	if _, err := k.Merge(obj.JSON, domain.ParseDocument([]byte(`{"customer_id":99}`)), rc); fieldsOf(t, err)["customer_id"] != "cannot be changed" {
		t.Errorf("changing the customer: %v", err)
	}
}

func TestReceiptCounters(t *testing.T) {
	t.Parallel()
	if p, n, ok := domain.ReceiptCounter("R1-2026-000123"); !ok || p != "R1-2026-" || n != 123 {
		t.Errorf("counter: %q %d %v", p, n, ok)
	}
	if _, _, ok := domain.ReceiptCounter("R1-X"); ok {
		t.Error("a number without a counter")
	}
	if err := domain.CheckGapless("K", []string{"A-3", "A-1", "A-2"}); err != nil {
		t.Errorf("1, 2, 3 in any order: %v", err)
	}
	for _, numbers := range [][]string{{"A-1", "A-3"}, {"A-1", "B-2"}, {"A-1", "A-1"}} {
		if domain.CheckGapless("K", numbers) == nil {
			t.Errorf("%v accepted", numbers)
		}
	}
}

// TestNumbersDatesAndMalformedBodies: an integral JSON number is the integer
// it denotes (JSON Schema 2020-12), a fractional or out-of-range one is a
// 422 naming the field; dates outside 0001–9999 are 422 on both dialects'
// behalf; a body that does not parse is ErrMalformedJSON, never a 422.
func TestNumbersDatesAndMalformedBodies(t *testing.T) {
	t.Parallel()
	k := domain.KindOf("medical-transports")
	with := func(count string) string {
		return strings.Replace(exampleBody(k), `"series":{"count":6,`, `"series":{"count":`+count+`,`, 1)
	}
	if with("2") == exampleBody(k) {
		t.Fatalf("the example has no series count to replace: %s", exampleBody(k))
	}
	for _, n := range []string{"12", "12.0", "1.2e1", "120E-1", "12.000"} {
		obj, err := k.Decode(domain.ParseDocument([]byte(with(n))), rc)
		if err != nil || !strings.Contains(string(obj.JSON), `"count":12`) {
			t.Errorf("count %s: %v %s", n, err, obj.JSON)
		}
	}
	for n, want := range map[string]string{"12.5": "must be of type integer", "1e400": "must be at most 60", "99999999999999999999": "must be at most 60", "1e999999999": "must be of type integer"} {
		_, err := k.Decode(domain.ParseDocument([]byte(with(n))), rc)
		if got := fieldsOf(t, err)["series.count"]; got != want {
			t.Errorf("count %s: %q, want %q (%v)", n, got, want, err)
		}
	}
	notes := domain.KindOf("notes")
	for _, d := range []string{"0000-01-01", "10000-01-01", "2026-02-30"} {
		_, err := notes.Decode(domain.ParseDocument([]byte(`{"customer_id":1,"text":"x","noted_on":"`+d+`"}`)), rc)
		if got := fieldsOf(t, err)["noted_on"]; !strings.HasPrefix(got, "must be a date YYYY-MM-DD") {
			t.Errorf("noted_on %s: %q", d, got)
		}
	}
	for _, d := range []string{"0000-12-31T23:00:00Z", "0001-01-01T00:30:00+01:00", "9999-12-31T23:59:59-01:00"} {
		if _, err := domain.ParseDateTime(d); err == nil {
			t.Errorf("%s: taken, though no database stores its instant", d)
		}
	}
	if _, err := domain.ParseDateTime("0001-01-01T00:00:00Z"); err != nil {
		t.Errorf("the first storable instant: %v", err)
	}
	// RFC 3339's offset hours end at 23; Go's parser alone takes 24. The
	// body's formats, the query's instants and the CLI all read through
	// ParseDateTime, so the rule holds in one place.
	for _, d := range []string{"2026-11-26T10:00:00+24:00", "2026-11-26T10:00:00-24:00", "2026-11-26T10:00:00+24:30"} {
		if _, err := domain.ParseDateTime(d); err == nil {
			t.Errorf("%s: taken, though its offset is outside RFC 3339's range", d)
		}
	}
	if _, err := domain.ParseDateTime("2026-11-26T10:00:00+23:59"); err != nil {
		t.Errorf("the largest offset: %v", err)
	}
	appointment := domain.AppointmentsKind()
	var body map[string]any
	_ = json.Unmarshal([]byte(appointment.ExampleWith(domain.SampleIDs)), &body)
	body["start"] = "2026-12-01T09:00:00+24:00"
	raw, _ := json.Marshal(body)
	if _, err := appointment.Decode(domain.ParseDocument(raw), rc); fieldsOf(t, err)["start"] == "" {
		t.Errorf("an appointment starting at +24:00: %v", err)
	}
	for _, body := range []string{`{"customer_id":1,`, `{'a':1}`, "\xff", `{"a":1}}`} {
		if _, err := notes.Decode(domain.ParseDocument([]byte(body)), rc); !errors.Is(err, domain.ErrMalformedJSON) {
			t.Errorf("%q: %v, want malformed JSON", body, err)
		}
		if _, err := domain.CustomersKind().Merge([]byte(`{}`), domain.ParseDocument([]byte(body)), rc); !errors.Is(err, domain.ErrMalformedJSON) {
			t.Errorf("patch %q: %v, want malformed JSON", body, err)
		}
	}
	if _, err := notes.Decode(domain.ParseDocument([]byte(`[1]`)), rc); errors.Is(err, domain.ErrMalformedJSON) || !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("JSON that is no object is a 422: %v", err)
	}
}

// TestPatchOfACustomerStoredWithoutBirthDate: the operator and the import
// may store a customer without a birth date; a PATCH that leaves it alone
// works, one that clears a stored date is still refused.
func TestPatchOfACustomerStoredWithoutBirthDate(t *testing.T) {
	t.Parallel()
	k := domain.CustomersKind()
	obj, err := k.Decode(domain.ParseDocument([]byte(exampleBody(k))), rc)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := domain.SetFields(obj.JSON, map[string]any{"birth_date": nil})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := k.Merge(stored, domain.ParseDocument([]byte(`{"phone":"+43660123456"}`)), rc)
	if err != nil || !strings.Contains(string(merged.JSON), `"birth_date":null`) {
		t.Fatalf("a patch that leaves the absent birth date alone: %v %s", err, merged.JSON)
	}
	if _, err := k.Merge(stored, domain.ParseDocument([]byte(`{"birth_date":null}`)), rc); fieldsOf(t, err)["birth_date"] != "is required" {
		t.Errorf("clearing it: %v", err)
	}
	if _, err := k.Merge(obj.JSON, domain.ParseDocument([]byte(`{"birth_date":null}`)), rc); fieldsOf(t, err)["birth_date"] != "is required" {
		t.Errorf("clearing a stored birth date: %v", err)
	}
	if m, err := k.Merge(stored, domain.ParseDocument([]byte(`{"birth_date":"1990-05-01"}`)), rc); err != nil || !strings.Contains(string(m.JSON), `"birth_date":"1990-05-01"`) {
		t.Errorf("setting it: %v", err)
	}
}

// TestDateTimeDecodesEveryStringForm: a date-time read without reflection
// (a string with no escapes, as every stored payload holds it) is the one
// encoding/json's reading of the same string gives, escaped or not; what
// is no date-time is refused either way.
func TestDateTimeDecodesEveryStringForm(t *testing.T) {
	for _, c := range []struct{ plain, escaped string }{
		{`"2026-03-10T09:00:00+01:00"`, `"2026-03-10T09:00:00\u002b01:00"`},
		{`"2026-03-10T08:00:00Z"`, `"2026-03-10T08:00:00\u005a"`},
		{`"2026-03-10T08:00:00.750Z"`, `"2026\u002d03-10T08:00:00.750Z"`},
	} {
		var a, b domain.DateTime
		if err := a.UnmarshalJSON([]byte(c.plain)); err != nil {
			t.Fatalf("%s: %v", c.plain, err)
		}
		if err := b.UnmarshalJSON([]byte(c.escaped)); err != nil {
			t.Fatalf("%s: %v", c.escaped, err)
		}
		if !a.Equal(b.Time) || a.Format(time.RFC3339) != b.Format(time.RFC3339) || a.Nanosecond() != 0 {
			t.Errorf("%s read as %v, %s as %v", c.plain, a, c.escaped, b)
		}
	}
	for _, bad := range []string{`""`, `"2026-03-10"`, `"x"`, `"2026-03-10T09:00:00+24:00"`, `"2026-03-10T09:00:00\"Z"`, `7`, `null`, `"`, `"2026-03-10T09:00:00Z`} {
		var d domain.DateTime
		if err := d.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s read as the date-time %v", bad, d)
		}
	}
}
