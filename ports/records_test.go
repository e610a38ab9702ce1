package ports_test

import (
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/patientmatch"
	"github.com/praxis-health/praxis/ports"
)

// TestParseObjectReadsBackWhatAppendWrote: an object of every section, as
// the resource API renders it (and as an Idempotency-Key keeps it), is read
// back to the object that renders the same bytes: id, version, times and
// the payload, nested "version" keys and all.
func TestParseObjectReadsBackWhatAppendWrote(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 8, 30, 5, 0, time.UTC)
	ids := domain.ExampleIDs{Customer: 7, User: domain.NewObjectID(), Location: domain.NewObjectID(), Service: domain.NewObjectID(), Device: domain.NewObjectID()}
	for _, k := range domain.Kinds() {
		id := domain.NewObjectID()
		if k.NumericIDs() {
			id = "7"
		}
		for _, payload := range []string{k.ExampleWith(ids), `{}`, `{"customer_id":7,"nested":{"version":9,"id":"x"},"note":",\"version\":3"}`} {
			o := ports.StoredObject{ID: id, Payload: []byte(payload), Version: 4, CreatedAt: at, UpdatedAt: at.Add(time.Hour)}
			rendered := o.JSON(k)
			back, err := ports.ParseObject(k, rendered)
			if err != nil {
				t.Fatalf("%s: %v: %s", k.Slug, err, rendered)
			}
			if again := back.JSON(k); string(again) != string(rendered) {
				t.Errorf("%s: rendered again\n%s\nfirst\n%s", k.Slug, again, rendered)
			}
			if back.ID != id || back.Version != 4 || !back.CreatedAt.Equal(at) || !back.UpdatedAt.Equal(at.Add(time.Hour)) {
				t.Errorf("%s: read back %+v", k.Slug, back)
			}
			if k.HasCustomer() && strings.Contains(payload, `"customer_id":7`) && (back.Customer == nil || *back.Customer != 7) {
				t.Errorf("%s: the customer %v", k.Slug, back.Customer)
			}
		}
	}
	for _, bad := range []string{``, `[]`, `{"id":"x"}`, `{"id":"x","version":0,"created_at":"2026-11-29T08:30:05Z","updated_at":"2026-11-29T08:30:05Z"}`,
		`{"version":1,"id":"x","created_at":"2026-11-29T08:30:05Z","updated_at":"2026-11-29T08:30:05Z"}`} {
		if _, err := ports.ParseObject(domain.CustomersKind(), []byte(bad)); err == nil {
			t.Errorf("%q read as an object", bad)
		}
	}
}

// TestParseMatchesReadsBackWhatAppendMatchesWrote: a match's candidates,
// kept under a key, render again to the bytes first answered.
func TestParseMatchesReadsBackWhatAppendMatchesWrote(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 8, 30, 5, 0, time.UTC)
	customer := func(id, name string) ports.StoredObject {
		return ports.StoredObject{ID: id, Payload: []byte(`{"first_name":"Lena","last_name":"` + name + `"}`), Version: 2, CreatedAt: at, UpdatedAt: at}
	}
	for _, matches := range [][]ports.Match{nil, {
		{Customer: customer("12", "Gruber"), Score: 0.35, Grade: patientmatch.Grade("probable")},
		{Customer: customer("3", "Grüber"), Score: 1.0 / 3, Grade: patientmatch.Grade("possible")},
	}} {
		rendered := ports.AppendMatches(nil, matches)
		back, err := ports.ParseMatches(rendered)
		if err != nil {
			t.Fatal(err)
		}
		if again := ports.AppendMatches(nil, back); string(again) != string(rendered) {
			t.Errorf("rendered again\n%s\nfirst\n%s", again, rendered)
		}
	}
}
