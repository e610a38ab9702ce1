package patientmatch_test

import (
	"slices"
	"testing"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/patientmatch"
)

// TestMatchGrades: the rules of docs/contract.md §15 "Matching a patient",
// case by case.
func TestMatchGrades(t *testing.T) {
	held := `{"first_name":"Anna","last_name":"Müller","birth_date":"1980-04-03","sex":"female","svnr":"1237010180","phone":"+436641234567"}`
	for _, c := range []struct {
		name, asked string
		want        patientmatch.Grade // "" for no candidate
	}{
		{"SVNR, birth date and name", `{"first_name":"Anna","last_name":"Mueller","birth_date":"1980-04-03","svnr":"1237010180"}`, patientmatch.Certain},
		{"SVNR, birth date, a last name alike", `{"last_name":"Miller","birth_date":"1980-04-03","svnr":"1237010180"}`, patientmatch.Certain},
		{"SVNR and birth date without a name", `{"birth_date":"1980-04-03","svnr":"1237010180"}`, patientmatch.Probable},
		{"names and birth date, no SVNR", `{"first_name":"Anna","last_name":"Müller","birth_date":"1980-04-03"}`, patientmatch.Probable},
		{"a typo in the last name, the same birth date", `{"first_name":"Anna","last_name":"Mülelr","birth_date":"1980-04-03"}`, patientmatch.Probable},
		{"day and month swapped", `{"first_name":"Anna","last_name":"Müller","birth_date":"1980-03-04"}`, patientmatch.Probable},
		{"names alone are never certain", `{"first_name":"Anna","last_name":"Müller"}`, patientmatch.Possible},
		{"a twin: same last name and birth date, another first name", `{"first_name":"Eva","last_name":"Müller","birth_date":"1980-04-03"}`, patientmatch.Possible},
		{"a married name with the SVNR is not certain", `{"first_name":"Anna","last_name":"Huber","birth_date":"1980-04-03","svnr":"1237010180"}`, patientmatch.Probable},
		{"a married name without it", `{"first_name":"Anna","last_name":"Huber","birth_date":"1980-04-03"}`, patientmatch.Possible},
		{"an SVNR with a wrong check digit is no evidence", `{"first_name":"Anna","last_name":"Müller","birth_date":"1980-04-03","svnr":"1237010181"}`, patientmatch.Probable},
		{"another SVNR: someone else", `{"first_name":"Anna","last_name":"Müller","birth_date":"1980-04-03","svnr":"9994210469"}`, ""},
		{"another person", `{"first_name":"Karl","last_name":"Huber","birth_date":"1950-01-01"}`, ""},
	} {
		score, grade, ok := patientmatch.Compare(patientmatch.FactsOf([]byte(c.asked)), patientmatch.FactsOf([]byte(held)))
		if grade != c.want || ok != (c.want != "") {
			t.Errorf("%s: %s (%.2f), want %q", c.name, grade, score, c.want)
		}
		if score < 0 || score > 1 || (grade != patientmatch.Certain && score > 0.9) {
			t.Errorf("%s: score %.2f", c.name, score)
		}
	}
}

func TestMatchSearchesAreIndexedOnly(t *testing.T) {
	if _, err := patientmatch.FactsOf([]byte(`{"first_name":"Anna","last_name":"Müller"}`)).MatchSearches(); err == nil {
		t.Error("a name alone: searched")
	}
	s, err := patientmatch.FactsOf([]byte(`{"first_name":"Anna","last_name":"Müller","birth_date":"1980-04-03","svnr":"1237010180","email":"A@B.at"}`)).MatchSearches()
	if err != nil || len(s) != 4 { // svnr, birth date + last name, birth date + first name, e-mail
		t.Errorf("searches %v %v", s, err)
	}
}

// TestSortIsReadAndItsCursorKeepsIt: an order is keys by their names, "-"
// for descending; an unknown or repeated key is refused with what is
// offered; a sorted page's cursor carries its order and keys, and is
// refused for another order (or for the feed's), as a feed cursor is for a sort.
func TestSortIsReadAndItsCursorKeepsIt(t *testing.T) {
	sort, err := domain.ParseSort("_sort", "family,-birthdate,_lastUpdated", domain.FHIRSortKeys)
	if err != nil || domain.OrderOf(sort) != "family,-birth_date,updated" {
		t.Fatalf("read %+v %v", sort, err)
	}
	for _, bad := range []string{"", "name", "family,-family", "--family", "family,"} {
		_, err := domain.ParseSort("_sort", bad, domain.FHIRSortKeys)
		fe, ok := domain.AsFieldErrors(err)
		if !ok || fe[0].Field != "_sort" {
			t.Errorf("%q: %v, want a field error of _sort", bad, err)
		}
	}
	_, err = domain.ParseSort("sort", "age", domain.NativeSortKeys)
	if fe, _ := domain.AsFieldErrors(err); len(fe) == 0 || fe[0].Message != "orders by birth_date, first_name, last_name, updated_at, each with - before it for descending, separated by commas" {
		t.Errorf("the refusal names the keys: %v", err)
	}
	payload := []byte(`{"first_name":"Ödön","last_name":"Müller-Lüdenscheidt"}`)
	keys := domain.SortKeysOf(sort, payload, 42)
	if !slices.Equal(keys, []string{"muller ludenscheidt", "", "42"}) {
		t.Errorf("keys %q", keys)
	}
	cur := domain.Cursor{ID: "7", Order: domain.OrderOf(sort), Keys: keys}
	back, err := domain.ParseCursor(cur.Encode())
	if err != nil || back.Order != cur.Order || !slices.Equal(back.Keys, keys) || back.ID != "7" {
		t.Fatalf("round trip %+v %v", back, err)
	}
	if err := (domain.ListQuery{After: &back, Sort: sort}).CheckCursor(); err != nil {
		t.Errorf("its own order: %v", err)
	}
	feed := domain.Cursor{Change: 9, ID: "7"}
	for name, q := range map[string]domain.ListQuery{
		"another order":         {After: &back, Sort: sort[:1]},
		"the feed's":            {After: &back},
		"a feed cursor, sorted": {After: &feed, Sort: sort},
		"a forged change key":   {After: &domain.Cursor{ID: "7", Order: cur.Order, Keys: []string{"a", "b", "c"}}, Sort: sort},
	} {
		if err := q.CheckCursor(); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
	if err := (domain.ListQuery{After: &feed}).CheckCursor(); err != nil {
		t.Errorf("a feed cursor in the feed: %v", err)
	}
}
