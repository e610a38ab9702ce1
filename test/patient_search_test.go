// Holds docs/contract.md §15 "Finding a patient", natively: the customers'
// list searched on both backends, its answers checked against the document.

package test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestFindingAPatient: the customers' list finds patients by what a person
// types — folded names in either order, a part of a double name, a name
// that sounds alike, a birth date, an identifier, a national phone number —
// ANDs its filters, counts with total=true, and refuses an SVNR whose check
// digit is wrong with why; another company's patient of the same name is
// never found; without a filter the list is the feed.
func TestFindingAPatient(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s) // Anna Berger, 1980-02-29
		other := newPractice(t, s)
		add := func(p practice, body string) string {
			r := p.post(t, "customers", body)
			if r.status != http.StatusCreated {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			return fmt.Sprint(int64(r.decode(t)["id"].(float64)))
		}
		mueller := `{"first_name":"Anna","last_name":"Müller-Lüdenscheidt","birth_date":"1975-06-01","svnr":"1237010180","phone":"+436641234567","email":"A.Mueller@example.at"}`
		anna := add(p, mueller)
		add(other, mueller)
		meier := add(p, `{"first_name":"Sepp","last_name":"Meier","birth_date":"1960-01-15"}`)
		mayr := add(p, `{"first_name":"Maria","last_name":"Mayr","birth_date":"1960-01-16"}`)
		berger := fmt.Sprint(p.customer)

		for _, c := range []struct {
			query string
			want  []string
		}{
			{"q=" + url.QueryEscape("Anna Müller"), []string{anna}},
			{"q=" + url.QueryEscape("Mueller, Anna"), []string{anna}},
			{"q=anna", []string{berger, anna}},
			{"last_name=MULLER", []string{anna}},
			{"last_name=l%C3%BCd", []string{anna}},
			{"first_name=ann&birth_date=1980-02-29", []string{berger}},
			{"phonetic=Mayer", []string{meier, mayr}},
			{"svnr=1237010180", []string{anna}},
			{"phone=" + url.QueryEscape("0664 123 45 67"), []string{anna}}, // national, read in Austria (Europe/Vienna)
			{"email=a.mueller@EXAMPLE.at", []string{anna}},
			{"last_name=Huber", nil},
		} {
			r := p.get(t, "customers?"+c.query+"&total=true")
			if r.status != http.StatusOK {
				t.Errorf("%s: %d %s", c.query, r.status, r.body)
				continue
			}
			page := r.decode(t)
			var got []string
			for _, o := range page["data"].([]any) {
				got = append(got, fmt.Sprint(int64(o.(map[string]any)["id"].(float64))))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.query, got, c.want)
			}
			if page["total"] != float64(len(c.want)) {
				t.Errorf("%s: total %v, want %d", c.query, page["total"], len(c.want))
			}
		}
		// In an order, page by page on the order's own cursor: folded names, birth dates, the last change.
		for _, c := range []struct {
			sort string
			want []string
		}{
			{"last_name", []string{berger, mayr, meier, anna}}, // Müller-Lüdenscheidt folds to muller ludenscheidt
			{"-birth_date", []string{berger, anna, mayr, meier}},
			{"-updated_at", []string{mayr, meier, anna, berger}},
			{"first_name,-last_name", []string{anna, berger, mayr, meier}},
		} {
			var got []string
			for cursor, pages := "", 0; pages < 6; pages++ {
				page := p.get(t, "customers?sort="+c.sort+"&limit=1"+cursor).decode(t)
				for _, o := range page["data"].([]any) {
					got = append(got, fmt.Sprint(int64(o.(map[string]any)["id"].(float64))))
				}
				if page["has_more"] != true {
					break
				}
				cursor = "&cursor=" + page["next_cursor"].(string)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("sort=%s: %v, want %v", c.sort, got, c.want)
			}
		}
		if annas := p.get(t, "customers?q=anna&sort=-last_name").decode(t)["data"].([]any); len(annas) != 2 ||
			annas[0].(map[string]any)["id"] != float64(toInt(t, anna)) {
			t.Errorf("q=anna sorted by last name descending: %v", annas)
		}
		sorted := p.get(t, "customers?sort=last_name&limit=1").decode(t)
		if r := p.get(t, "customers?cursor="+sorted["next_cursor"].(string)); r.status != http.StatusUnprocessableEntity || !hasFieldError(r.decode(t), "cursor") {
			t.Errorf("a sorted list's cursor in the feed: %d %s", r.status, r.body)
		}
		if page := p.get(t, "customers?last_name=Meier").decode(t); page["total"] != nil {
			t.Errorf("total without total=true: %v", page["total"])
		}
		// The feed serves a change once no transaction below it is open anywhere on the
		// database server (§15): other tests' transactions may hold it back a moment.
		var feed map[string]any
		eventually(t, 10*time.Second, "the feed serving the four patients", func() bool {
			feed = p.get(t, "customers").decode(t)
			return len(feed["data"].([]any)) == 4
		})
		if feed["total"] != nil {
			t.Errorf("the feed: total %v without total=true", feed["total"])
		}
		for _, bad := range []struct{ query, field string }{
			{"svnr=1237010181", "svnr"},
			{"kvnr=A123456789", "kvnr"},
			{"birth_date=1980", "birth_date"},
			{"phone=abc", "phone"},
			{"last_name=---", "last_name"},
			{"total=maybe", "total"},
			{"nickname=x", "nickname"},
			{"sort=age", "sort"},
			{"sort=last_name,-last_name", "sort"},
		} {
			r := p.get(t, "customers?"+bad.query)
			if r.status != http.StatusUnprocessableEntity || !hasFieldError(r.decode(t), bad.field) {
				t.Errorf("%s: %d %s, want 422 naming %s", bad.query, r.status, r.body, bad.field)
			}
		}
		if r := p.get(t, "notes?q=anna"); r.status != http.StatusUnprocessableEntity {
			t.Errorf("a search of another section: %d", r.status)
		}
	})
}

// toInt reads a customer number.
func toInt(t *testing.T, id string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// hasFieldError: a problem's errors[] names field.
func hasFieldError(problem map[string]any, field string) bool {
	errs, _ := problem["errors"].([]any)
	return slices.ContainsFunc(errs, func(e any) bool { m, _ := e.(map[string]any); return m["field"] == field })
}

// TestMatchingAPatient: a lab's record is matched natively and in FHIR's
// Patient/$match — the same SVNR, birth date and name certain, a typo with
// the same birth date probable, twins told apart, onlyCertainMatches one
// patient or none, an SVNR with a wrong check digit no evidence — graded and
// scored best first; a record with nothing to search by, a resource of
// another type, a parameter $match does not take are refused; a native
// match replays its Idempotency-Key; another company's patients are never
// candidates.
func TestMatchingAPatient(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		other := newPractice(t, s)
		add := func(p practice, body string) string {
			r := p.post(t, "customers", body)
			if r.status != http.StatusCreated {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			return fmt.Sprint(int64(r.decode(t)["id"].(float64)))
		}
		lena := add(p, `{"first_name":"Lena","last_name":"Gruber","birth_date":"2001-05-07","sex":"female","svnr":"1237010180"}`)
		lisa := add(p, `{"first_name":"Lisa","last_name":"Gruber","birth_date":"2001-05-07","sex":"female"}`) // her twin
		add(other, `{"first_name":"Lena","last_name":"Gruber","birth_date":"2001-05-07","sex":"female","svnr":"1237010180"}`)

		type candidate struct{ id, grade string }
		native := func(customer string, extra string) []candidate {
			r := p.post(t, "customers/match", `{"customer":`+customer+extra+`}`)
			if r.status != http.StatusOK {
				t.Fatalf("match %s: %d %s", customer, r.status, r.body)
			}
			var out []candidate
			last := 2.0
			for _, m := range r.decode(t)["data"].([]any) {
				m := m.(map[string]any)
				if score := m["score"].(float64); score > last {
					t.Errorf("%s: not best first", customer)
				} else {
					last = score
				}
				out = append(out, candidate{fmt.Sprint(int64(m["customer"].(map[string]any)["id"].(float64))), m["grade"].(string)})
			}
			return out
		}
		fhirMatch := func(patient, extra string) reply {
			return p.fhirWrite(t, http.MethodPost, "Patient/$match", `{"resourceType":"Parameters","parameter":[{"name":"resource","resource":`+patient+`}`+extra+`]}`)
		}
		for _, c := range []struct {
			name, customer, patient string
			want                    []candidate
		}{
			{"SVNR, birth date and name",
				`{"first_name":"Lena","last_name":"Gruber","birth_date":"2001-05-07","svnr":"1237010180"}`,
				`{"resourceType":"Patient","name":[{"family":"Gruber","given":["Lena"]}],"birthDate":"2001-05-07","identifier":[{"system":"urn:oid:1.2.40.0.10.1.4.3.1","value":"1237010180"}]}`,
				[]candidate{{lena, "certain"}, {lisa, "possible"}}},
			{"a typo with the birth date",
				`{"first_name":"Lena","last_name":"Gurber","birth_date":"2001-05-07"}`,
				`{"resourceType":"Patient","name":[{"family":"Gurber","given":["Lena"]}],"birthDate":"2001-05-07"}`,
				[]candidate{{lena, "probable"}}}, // her twin is no candidate: neither Gurber nor Lena finds her
			{"a wrong check digit is no evidence",
				`{"first_name":"Lisa","last_name":"Gruber","birth_date":"2001-05-07","svnr":"1237010181"}`,
				`{"resourceType":"Patient","name":[{"family":"Gruber","given":["Lisa"]}],"birthDate":"2001-05-07","identifier":[{"system":"urn:oid:1.2.40.0.10.1.4.3.1","value":"1237010181"}]}`,
				[]candidate{{lisa, "probable"}, {lena, "possible"}}},
		} {
			if got := native(c.customer, ""); !slices.Equal(got, c.want) {
				t.Errorf("native, %s: %v, want %v", c.name, got, c.want)
			}
			r := fhirMatch(c.patient, "")
			if r.status != http.StatusOK {
				t.Fatalf("$match, %s: %d %s", c.name, r.status, r.body)
			}
			var got []candidate
			for _, e := range r.decode(t)["entry"].([]any) {
				e := e.(map[string]any)
				search := e["search"].(map[string]any)
				grade := search["extension"].([]any)[0].(map[string]any)
				if grade["url"] != "http://hl7.org/fhir/StructureDefinition/match-grade" || search["mode"] != "match" {
					t.Errorf("$match, %s: search %v", c.name, search)
				}
				got = append(got, candidate{e["resource"].(map[string]any)["id"].(string), grade["valueCode"].(string)})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("$match, %s: %v, want %v", c.name, got, c.want)
			}
		}
		onlyCertain := `,{"name":"onlyCertainMatches","valueBoolean":true}`
		certain := fhirMatch(`{"resourceType":"Patient","name":[{"family":"Gruber","given":["Lena"]}],"birthDate":"2001-05-07","identifier":[{"system":"urn:oid:1.2.40.0.10.1.4.3.1","value":"1237010180"}]}`, onlyCertain).decode(t)
		if entries, _ := certain["entry"].([]any); len(entries) != 1 {
			t.Errorf("onlyCertainMatches with one certain: %v", certain["entry"])
		}
		none := fhirMatch(`{"resourceType":"Patient","name":[{"family":"Gruber","given":["Lena"]}],"birthDate":"2001-05-07"}`, onlyCertain).decode(t)
		if entries, _ := none["entry"].([]any); len(entries) != 0 {
			t.Errorf("onlyCertainMatches with none certain: %v", none["entry"])
		}
		if got := native(`{"first_name":"Lena","last_name":"Gruber","birth_date":"2001-05-07"}`, `,"count":1`); len(got) != 1 {
			t.Errorf("count 1: %v", got)
		}

		// The native match replays its Idempotency-Key.
		body := `{"customer":{"last_name":"Gruber","birth_date":"2001-05-07"}}`
		first := p.post(t, "customers/match", body, "Idempotency-Key: match-1")
		again := p.post(t, "customers/match", body, "Idempotency-Key: match-1")
		if first.status != http.StatusOK || again.status != http.StatusOK || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
			t.Errorf("a replayed match: %d %d %q", first.status, again.status, again.header.Get("Idempotent-Replayed"))
		}

		// Refusals.
		for _, bad := range []struct{ body, field string }{
			{`{"customer":{"first_name":"Lena","last_name":"Gruber"}}`, "resource"},
			{`{"customer":{"nickname":"L"}}`, "customer.nickname"},
			{`{"customer":{"birth_date":5}}`, "customer.birth_date"},
			{`{"customer":{"last_name":"Gruber","birth_date":"2001-05-07"},"count":0}`, "count"},
		} {
			r := p.post(t, "customers/match", bad.body)
			if r.status != http.StatusUnprocessableEntity || !hasFieldError(r.decode(t), bad.field) {
				t.Errorf("%s: %d %s, want 422 naming %s", bad.body, r.status, r.body, bad.field)
			}
		}
		outcome(t, "$match without a resource", p.fhirWrite(t, http.MethodPost, "Patient/$match", `{"resourceType":"Parameters","parameter":[]}`), http.StatusBadRequest, "invalid")
		outcome(t, "$match of another type", fhirMatch(`{"resourceType":"Practitioner"}`, ""), http.StatusBadRequest, "invalid")
		outcome(t, "$match with a parameter it does not take", fhirMatch(`{"resourceType":"Patient","birthDate":"2001-05-07"}`, `,{"name":"limit","valueInteger":3}`), http.StatusBadRequest, "invalid")
		if r := fhirMatch(`{"resourceType":"Patient","name":[{"family":"Gruber"}]}`, ""); r.status < 400 || r.status >= 500 {
			t.Errorf("$match of a name alone: %d %s", r.status, r.body)
		}
	})
}
