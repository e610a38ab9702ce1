// Holds docs/contract.md §15 "Finding a patient", natively: the customers'
// list searched on both backends, its answers checked against the document.

package test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
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
		if page := p.get(t, "customers?last_name=Meier").decode(t); page["total"] != nil {
			t.Errorf("total without total=true: %v", page["total"])
		}
		feed := p.get(t, "customers").decode(t)
		if len(feed["data"].([]any)) != 4 || feed["total"] != nil {
			t.Errorf("the feed: %d objects, total %v", len(feed["data"].([]any)), feed["total"])
		}
		for _, bad := range []struct{ query, field string }{
			{"svnr=1237010181", "svnr"},
			{"kvnr=A123456789", "kvnr"},
			{"birth_date=1980", "birth_date"},
			{"phone=abc", "phone"},
			{"last_name=---", "last_name"},
			{"total=maybe", "total"},
			{"nickname=x", "nickname"},
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

// hasFieldError: a problem's errors[] names field.
func hasFieldError(problem map[string]any, field string) bool {
	errs, _ := problem["errors"].([]any)
	return slices.ContainsFunc(errs, func(e any) bool { m, _ := e.(map[string]any); return m["field"] == field })
}
