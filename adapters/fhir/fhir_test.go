package fhir

import (
	"slices"
	"testing"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/smart"
)

// TestDatePrefixes holds the date search to FHIR R4 §3.1.1.4.2: a value
// is a range at its precision, and each prefix compares the object's range
// with it.
func TestDatePrefixes(t *testing.T) {
	cases := []struct {
		param, field string
		want         bool
	}{
		{"1980", "1980-06-01", true},
		{"1980-06", "1980-06-30", true},
		{"1980-06", "1980-07-01", false},
		{"1980-06-01", "1980-06-01", true},
		{"eq1980-06-01", "1980-06-01T10:00:00Z", true},
		{"ne1980-06-01", "1980-06-02", true},
		{"ne1980-06-01", "1980-06-01", false},
		{"gt1980-06-01", "1980-06-01", false},
		{"gt1980-06-01", "1980-06-02", true},
		{"ge1980-06-01", "1980-06-01", true},
		{"ge1980-06-01", "1980-05-31", false},
		{"lt1980-06-01", "1980-05-31", true},
		{"lt1980-06-01", "1980-06-01", false},
		{"le1980-06-01", "1980-06-01", true},
		{"le1980-06-01", "1980-06-02", false},
		{"ge2026-03-10T09:00:00+01:00", "2026-03-10T08:00:00Z", true},
		{"lt2026-03-10T09:00:00+01:00", "2026-03-10T08:00:00Z", false},
		{"2026-03-10T08:00:00.500Z", "2026-03-10T08:00:00.500Z", true},
	}
	for _, c := range cases {
		v, err := parseValue("date", "date", c.param)
		if err != nil {
			t.Fatalf("%s: %v", c.param, err)
		}
		at := func(item) string { return c.field }
		if got := dateOf(at)(item{}, v); got != c.want {
			t.Errorf("date=%s on %s: %v, want %v", c.param, c.field, got, c.want)
		}
	}
	for _, bad := range []string{"", "19", "1980-13", "1980-02-30", "ge", "xx1980", "1980-01-01T10:00"} {
		if _, err := parseValue("date", "date", bad); err == nil {
			t.Errorf("date=%q read as a date", bad)
		}
	}
}

// TestTokensAndStrings: a token with or without its system; a string
// starts the field, ignoring case; a reference names its type or not.
func TestTokensAndStrings(t *testing.T) {
	o := item{id: "u1", value: &domain.User{FirstName: "Eva", LastName: "Huber"}}
	lastName := stringOf(func(u *domain.User) string { return u.LastName })
	status := tokenOf(func(item) string { return "final" })
	for _, c := range []struct {
		kind, raw string
		match     func(item, value) bool
		want      bool
	}{
		{"token", "final", status, true},
		{"token", "s|final", status, true},
		{"token", "preliminary", status, false},
		{"token", "", status, false},
		{"string", "hu", lastName, true},
		{"string", "HUBER", lastName, true},
		{"string", "uber", lastName, false},
		{"string", "hu", stringOf(func(l *domain.Location) string { return l.Name }), false}, // another section's value
		{"reference", "Practitioner/u1", referencesU1, true},
		{"reference", "u1", referencesU1, true},
		{"reference", "Location/u1", referencesU1, false},
	} {
		v, err := parseValue("p", c.kind, c.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.match(o, v); got != c.want {
			t.Errorf("%s %q: %v, want %v", c.kind, c.raw, got, c.want)
		}
	}
}

// referencesU1: the Practitioner reference a payloadReference query reads
// from v is u1.
func referencesU1(_ item, v value) bool {
	c, err := payloadReference("Practitioner", "user_id")(view{}, "p", "", []value{v})
	return err == nil && len(c.Values) == 1 && c.Values[0] == "u1"
}

// TestCapabilityStatementIsTheTable: the statement lists every served
// type with its parameters and nothing else, and each served type's
// native section exists.
func TestCapabilityStatementIsTheTable(t *testing.T) {
	cs := capabilityStatement("https://praxis.example/fhir/R4", "https://praxis.example/api/oauth/v2/token")
	rs := cs["rest"].([]any)[0].(map[string]any)["resource"].([]any)
	if len(smart.FHIRTypes) != len(resources) {
		t.Errorf("the SMART scopes name %d types, the door serves %d", len(smart.FHIRTypes), len(resources))
	}
	if len(rs) != len(resources) {
		t.Fatalf("%d types stated, %d served", len(rs), len(resources))
	}
	for i, r := range rs {
		rt := resources[i]
		stated := r.(map[string]any)
		if stated["type"] != rt.name {
			t.Errorf("stated %v, served %s", stated["type"], rt.name)
		}
		if rt.section != "" && rt.section != "files" && rt.section != "booking" && domain.KindOf(rt.section) == nil {
			t.Errorf("%s views %s, which is no section", rt.name, rt.section)
		}
		// The SMART scopes the token endpoint grants name the same sections.
		if want := map[bool]string{true: "company", false: rt.section}[rt.section == ""]; smart.FHIRTypes[rt.name] != want {
			t.Errorf("%s: the SMART scopes mean %q, the door serves %q", rt.name, smart.FHIRTypes[rt.name], want)
		}
		if rt.binary {
			if _, searched := stated["searchParam"]; searched || len(stated["interaction"].([]any)) != 1 {
				t.Errorf("%s is read by id only: %v", rt.name, stated)
			}
			continue
		}
		var names []string
		for _, p := range stated["searchParam"].([]any) {
			names = append(names, p.(map[string]any)["name"].(string))
		}
		common := commonParams
		if rt.slots {
			common = nil
		}
		for _, p := range append(slices.Clone(common), rt.params...) {
			if !slices.Contains(names, p.name) {
				t.Errorf("%s: %s served, not stated", rt.name, p.name)
			}
		}
		if rt.patient != slices.Contains(names, "patient") {
			t.Errorf("%s: patient stated %v, served %v", rt.name, slices.Contains(names, "patient"), rt.patient)
		}
	}
}

// A device's number becomes a FHIR decimal only in a form JSON takes as
// written; anything else stays text.
func TestGDTDecimal(t *testing.T) {
	for in, want := range map[string]string{"72,5": "72.5", "72.50": "72.50", "-3": "-3", "0,05": "0.05", " 12 ": "12"} {
		if got, ok := gdtDecimal(in); !ok || string(got) != want {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"+5", "07", ".5", "5.", "1e5", "NaN", "Inf", "0x10", "1,2,3", "1.2,3", "", "positiv", "12 mmHg"} {
		if got, ok := gdtDecimal(in); ok {
			t.Errorf("%q read as the number %q", in, got)
		}
	}
}
