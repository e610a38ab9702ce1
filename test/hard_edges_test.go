// Holds docs/contract.md §4 The resource API (input that once answered 500).

package test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestHardEdgesOfTheResourceAPI: input that once answered 500 is answered
// in the contract's shape on both dialects, and stores nothing when refused.
func TestHardEdgesOfTheResourceAPI(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		problem := func(r reply, status int, typ string) bool {
			return r.status == status && r.header.Get("Content-Type") == "application/problem+json" && r.decode(t)["type"] == typ
		}
		diagnosis := p.post(t, "diagnoses", fmt.Sprintf(`{"customer_id":%d,"user_id":%q,"icd10_code":"M54.5","code_system":"icd10_at","text":"Kreuzschmerz",`+
			`"certainty":"confirmed","kind":"encounter","diagnosed_on":"2026-03-10"}`, p.customer, p.doctor))
		if diagnosis.status != http.StatusCreated {
			t.Fatalf("diagnosis: %d %s", diagnosis.status, diagnosis.body)
		}
		regulation := func(n string) string {
			return fmt.Sprintf(`{"customer_id":%d,"user_id":%q,"diagnosis_ids":[%q],"type":"physiotherapy","sessions":%s,"items":[{"description":"Heilgymnastik","quantity":%s}]}`,
				p.customer, p.doctor, diagnosis.decode(t)["id"], n, n)
		}
		// An integral number is the integer it denotes; a fractional one names its field.
		for _, n := range []string{"4.0", "4e0", "0.4e1", "4.000"} {
			r := p.post(t, "regulations", regulation(n))
			if r.status != http.StatusCreated || !strings.Contains(string(r.body), `"sessions":4`) || !strings.Contains(string(r.body), `"quantity":4`) {
				t.Errorf("%s: %d %s", n, r.status, r.body)
			}
		}
		if r := p.post(t, "regulations", regulation("4.5")); !problem(r, 422, "validation-error") || !contains(fieldsOf(t, r), "sessions") ||
			!contains(fieldsOf(t, r), "items[0].quantity") {
			t.Errorf("4.5: %d %s", r.status, r.body)
		}
		// Dates neither database stores are 422 naming the field or parameter.
		for _, q := range []string{"updated_since=0000-01-01T00:00:00Z", "updated_since=0001-01-01T00:00:00%2B01:00", "updated_since=9999-12-31T23:59:59-01:00"} {
			if r := p.get(t, "notes?"+q); !problem(r, 422, "validation-error") || !contains(fieldsOf(t, r), "updated_since") {
				t.Errorf("%s: %d %s", q, r.status, r.body)
			}
		}
		if r := p.get(t, "appointments?from=0000-01-01"); !problem(r, 422, "validation-error") || !contains(fieldsOf(t, r), "from") {
			t.Errorf("from=0000-01-01: %d %s", r.status, r.body)
		}
		if r := p.get(t, "notes?updated_since=0001-01-01T00:00:00Z"); r.status != http.StatusOK {
			t.Errorf("the first storable instant: %d %s", r.status, r.body)
		}
		if r := p.post(t, "notes", fmt.Sprintf(`{"customer_id":%d,"text":"x","noted_on":"0000-12-31"}`, p.customer)); !problem(r, 422, "validation-error") {
			t.Errorf("noted_on 0000-12-31: %d %s", r.status, r.body)
		}
		// JSON that does not parse is 400 malformed-json; JSON that parses but is no object stays 422.
		for _, body := range []string{`{"customer_id":`, `{'text':'x'}`, "\xff\xfe", `{"a":1}{"b":2}`} {
			if r := p.post(t, "notes", body); !problem(r, 400, "malformed-json") {
				t.Errorf("POST %q: %d %s", body, r.status, r.body)
			}
			if r := s.request(t, http.MethodPatch, resource+fmt.Sprintf("customers/%d", p.customer), "application/merge-patch+json", body, p.auth); !problem(r, 400, "malformed-json") {
				t.Errorf("PATCH %q: %d %s", body, r.status, r.body)
			}
		}
		if r := p.post(t, "notes", `[]`); !problem(r, 422, "validation-error") {
			t.Errorf("an array: %d %s", r.status, r.body)
		}
		if r := p.get(t, "notes"); len(r.decode(t)["data"].([]any)) != 0 {
			t.Errorf("refused requests stored notes: %s", r.body)
		}
		// A customer created without a birth date (the CLI allows it) can be patched.
		plain := s.newCustomer(t, p.company)
		path := fmt.Sprintf("customers/%d", plain)
		if r := p.get(t, path); r.status != http.StatusOK || r.decode(t)["birth_date"] != nil {
			t.Fatalf("the customer without a birth date: %d %s", r.status, r.body)
		}
		if r := s.request(t, http.MethodPatch, resource+path, "application/merge-patch+json", `{"phone":"+43660123456"}`, p.auth); r.status != http.StatusOK ||
			r.decode(t)["phone"] != "+43660123456" {
			t.Errorf("a patch that leaves birth_date alone: %d %s", r.status, r.body)
		}
		if r := s.request(t, http.MethodPatch, resource+path, "application/merge-patch+json", `{"birth_date":null}`, p.auth); !problem(r, 422, "validation-error") {
			t.Errorf("clearing birth_date: %d %s", r.status, r.body)
		}
	})
}
