package fhir

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/gdt"
	"github.com/praxis-health/praxis/ports"
)

// TestEveryMappingTakesItsFeeds maps, for every served type, an object of
// each feed it reads with every field its section answers — decoded as its
// reader decodes it — and runs every matcher of the type over it. The
// mappings read the sections' own Go types (a renamed field fails to
// compile); what is left to a test is that each mapping is handed the type
// it expects and that every answer of the section decodes.
func TestEveryMappingTakesItsFeeds(t *testing.T) {
	x := view{company: domain.NewCompanyID()}
	for _, rt := range resources {
		if rt.toFHIR == nil {
			continue // Organization (the company), Binary and Slot (no object of a feed)
		}
		for _, it := range feedItems(t, rt) {
			data, err := json.Marshal(rt.toFHIR(x, it))
			if err != nil {
				t.Fatalf("%s: %v", rt.name, err)
			}
			var got struct{ ResourceType, ID string }
			if err := json.Unmarshal(data, &got); err != nil || got.ResourceType != rt.name || got.ID != it.id {
				t.Errorf("%s of %T: %s", rt.name, it.value, data)
			}
			for _, p := range append(slices.Clone(commonParams), rt.params...) {
				if p.match == nil {
					continue
				}
				for _, raw := range sampleValues[p.kind] {
					v, err := parseValue(p.name, p.kind, raw)
					if err != nil {
						t.Fatalf("%s: %v", p.name, err)
					}
					p.match(it, v)
				}
			}
		}
	}
}

// TestEveryQueriedFieldIsAnswered: a parameter that puts a payload field
// into the query names one its section answers (the field names the
// store's query reads are the one place the door still spells them).
func TestEveryQueriedFieldIsAnswered(t *testing.T) {
	for _, rt := range resources {
		if rt.section == "" || rt.section == "files" || rt.slots {
			continue
		}
		props, _ := domain.KindOf(rt.section).Schemas().Output["properties"].(map[string]any)
		for _, p := range rt.params {
			if p.query == nil {
				continue
			}
			raw := sampleValues[p.kind][0]
			v, err := parseValue(p.name, p.kind, raw)
			if err != nil {
				t.Fatal(err)
			}
			c, err := p.query(view{}, p.name, "", []value{v})
			if err != nil {
				continue // a value this parameter refuses: no field read
			}
			for _, path := range payloadPaths(c) {
				if _, ok := props[path]; !ok {
					t.Errorf("%s?%s queries the field %q, which %s does not answer", rt.name, p.name, path, rt.section)
				}
			}
		}
	}
}

// payloadPaths are the payload fields a condition reads.
func payloadPaths(c domain.Condition) []string {
	var out []string
	if c.Field == domain.SearchPayload {
		out = append(out, c.Path)
	}
	for _, a := range c.Any {
		out = append(out, payloadPaths(a)...)
	}
	return out
}

// sampleValues are values of each parameter type, one of each form a match reads.
var sampleValues = map[string][]string{
	"date":      {"2026-03-10", "ne2026-03-10"},
	"token":     {"x", "s|x"},
	"string":    {"xyz"},
	"reference": {"Practitioner/x", "Location/x", "HealthcareService/x", "x"},
}

// feedItems are full objects of every feed the type reads: its section's,
// then a lab result's rows, a GDT result file, a GDT result's tests.
func feedItems(t *testing.T, rt *resourceType) []item {
	t.Helper()
	record := func(section string) item {
		kind := domain.KindOf(section)
		data, err := json.Marshal(fill(kind.Schemas().Output))
		if err != nil {
			t.Fatal(err)
		}
		customer := domain.CustomerID(7)
		it, err := itemOf(kind, ports.StoredObject{ID: "0193a2b4-0000-7000-8000-000000000001", Customer: &customer, Payload: data, Version: 2,
			CreatedAt: time.Now(), UpdatedAt: time.Now()})
		if err != nil {
			t.Fatalf("%s: its answer does not decode into its own type: %v", section, err)
		}
		return it
	}
	var items []item
	if rt.section == "files" {
		items = append(items, fileItem(fullFile()))
	} else {
		items = append(items, record(rt.section))
	}
	for _, f := range rt.then {
		switch f {
		case gdtResultFiles:
			items = append(items, fileItem(fullFile()))
		case labResultRows:
			items = append(items, rowsOf(record("lab-results"))...)
		case gdtResultTests:
			items = append(items, rowsOf(fileItem(fullFile()))...)
		}
	}
	return items
}

// fullFile is a GDT result file with every field held.
func fullFile() domain.File {
	s := func(v string) *string { return &v }
	info := &gdt.Info{RecordType: "6310", Version: s("02.10"), ExaminedOn: s("2026-03-10"), ExaminedAt: s("2026-03-10T09:00:00+01:00"),
		ProcedureCode: s("EKG"), OrderNumber: s("17"), Findings: s("Sinus rhythm"), ReferencedFiles: []string{"a.pdf"}, Records: 1,
		Tests: []gdt.Test{{ID: "HR", Name: "Heart rate", Value: "72", Unit: "/min", Status: s("B"), LimitIndicator: s("+"),
			NormalText: []string{"60-100"}, NormalLow: s("60"), NormalHigh: s("100"), Comments: []string{"rest"}, ResultText: []string{"ok"}}}}
	return domain.File{ID: domain.NewFileID(), CustomerID: 7, Name: "ekg.gdt", ContentType: "text/plain", Size: 120, Source: domain.SourceGDT,
		Category: "report", Description: s("EKG"), GDT: info, DeviceOrderID: s("0193a2b4-0000-7000-8000-000000000002"), Version: 1,
		CreatedAt: time.Now(), UpdatedAt: time.Now()}
}

// fill is a value of schema with every property present: objects whole,
// arrays of one element, dates and instants as such, other strings "x",
// numbers 1, booleans true.
func fill(schema map[string]any) any {
	if props, ok := schema["properties"].(map[string]any); ok {
		out := map[string]any{}
		for name, p := range props {
			sub, _ := p.(map[string]any)
			out[name] = fill(sub)
		}
		return out
	}
	if items, ok := schema["items"].(map[string]any); ok {
		return []any{fill(items)}
	}
	for _, alt := range []string{"anyOf", "oneOf"} {
		if alts, ok := schema[alt].([]any); ok {
			for _, a := range alts {
				if sub, ok := a.(map[string]any); ok && typeOf(sub) != "null" {
					return fill(sub)
				}
			}
		}
	}
	switch typeOf(schema) {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "null":
		return nil
	}
	switch schema["format"] {
	case "date-time":
		return "2026-03-10T09:00:00+01:00"
	case "date":
		return "2026-03-10"
	}
	return "x"
}

// typeOf is a schema's type, the first that is not null where it lists several.
func typeOf(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, _ := x.(string); s != "null" {
				return s
			}
		}
		return "null"
	}
	return ""
}

// TestEveryWrittenFieldIsTaken: the native fields a writer sets from a
// resource are fields the section's create takes, each with the FHIR path
// its refusals name.
func TestEveryWrittenFieldIsTaken(t *testing.T) {
	for _, c := range []struct {
		name string
		kind *domain.Kind
		body string
	}{
		{"Patient", domain.CustomersKind(), `{"resourceType":"Patient","name":[{"use":"official","family":"Huber","given":["Eva"],"prefix":["Dr."]}],
			"gender":"female","birthDate":"1980-02-29","identifier":[{"system":"` + systemSVNR + `","value":"1237010180"},{"system":"` + systemKVNR + `","value":"A123456780"}],
			"telecom":[{"system":"phone","value":"+436641234567"},{"system":"email","value":"eva@example.at"}],
			"address":[{"line":["Hauptstraße 1"],"postalCode":"1010","city":"Wien","country":"AT"}]}`},
		{"Appointment", domain.BookingKind, `{"resourceType":"Appointment","status":"booked","start":"2026-03-10T09:00:00+01:00","comment":"x",
			"participant":[{"actor":{"reference":"Patient/7"}},{"actor":{"reference":"Practitioner/u"}},{"actor":{"reference":"Location/l"}},{"actor":{"reference":"HealthcareService/s"}}]}`},
	} {
		w := resourceByName(c.name).writer
		props, _ := c.kind.Schemas().Input["properties"].(map[string]any)
		for field := range w.paths {
			if _, ok := props[field]; !ok {
				t.Errorf("%s names the field %q, which %s does not take", c.name, field, c.kind.Slug)
			}
		}
		for _, full := range []bool{false, true} {
			fields, err := w.fields([]byte(c.body), full)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if len(fields) == 0 {
				t.Errorf("%s: no field written", c.name)
			}
			for field := range fields {
				if _, ok := w.paths[field]; !ok {
					t.Errorf("%s writes the field %q without a FHIR path", c.name, field)
				}
			}
		}
	}
}

// TestExportLinesAreEncodingJSONs: the export's encoder (goccy/go-json,
// for its speed) writes every mapped resource byte for byte as
// encoding/json does, texts that need escaping included.
func TestExportLinesAreEncodingJSONs(t *testing.T) {
	x := view{company: domain.NewCompanyID()}
	odd := "<Müller & Söhne> \u2028\u2029 \"quoted\" \\ \t\n\x01 \xff\xfe end"
	var all []resource
	for _, rt := range resources {
		if rt.toFHIR == nil {
			continue
		}
		for _, it := range feedItems(t, rt) {
			all = append(all, rt.toFHIR(x, it))
		}
	}
	title := odd
	all = append(all, practitioner(x, item{id: "u", version: 1, value: &domain.User{Title: &title, FirstName: odd, LastName: odd}}),
		organization(domain.Company{ID: x.company, Name: odd}))
	for _, r := range all {
		var got, want bytes.Buffer
		if err := lineEncoder(&got).Encode(r); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("the export wrote\n%s\nwhere encoding/json writes\n%s", got.Bytes(), want.Bytes())
		}
	}
}
