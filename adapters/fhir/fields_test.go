package fhir

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/invopop/jsonschema"
	"github.com/valyala/fastjson"

	"github.com/praxis-health/praxis/domain"
)

// TestEveryFieldReadIsAnswered walks every mapping and search parameter of
// every served type over objects of its feeds that hold every field their
// answer's schema names, and holds each field name read to those objects:
// a field the door reads by name that its section no longer answers (a
// rename, a removal) fails here instead of leaving a resource without it.
// It sets the package's fieldRead hook, so it must not run in parallel.
func TestEveryFieldReadIsAnswered(t *testing.T) {
	fileSchema := fileViewSchema(t)
	x := view{company: domain.NewCompanyID()}
	for _, rt := range resources {
		if rt.toFHIR == nil {
			continue // Organization (the company, no object), Binary and Slot (no mapping by name)
		}
		objs := feedObjects(t, rt, fileSchema)
		answered := map[string]bool{}
		for _, o := range objs {
			namesIn(o.v, answered)
		}
		read := map[string]bool{}
		fieldRead = func(name string) { read[name] = true }
		for _, o := range objs {
			rt.toFHIR(x, o)
			for _, p := range append(slices.Clone(commonParams), rt.params...) {
				if p.match == nil {
					continue
				}
				for _, raw := range sampleValues[p.kind] {
					v, err := parseValue(p.name, p.kind, raw)
					if err != nil {
						t.Fatalf("%s: %v", p.name, err)
					}
					p.match(o, v)
				}
			}
		}
		fieldRead = nil
		if rt.patient != "" {
			read[rt.patient] = true
		}
		for _, field := range rt.includes {
			if field != "" {
				read[field] = true
			}
		}
		if len(read) == 0 {
			t.Errorf("%s: no field read: the walk reached no mapping", rt.name)
		}
		for _, name := range slices.Sorted(maps.Keys(read)) {
			if !answered[name] {
				t.Errorf("%s reads the field %q, which no object of its feeds answers", rt.name, name)
			}
		}
	}
}

// sampleValues are values of each parameter type, one of each form a match reads.
var sampleValues = map[string][]string{
	"date":      {"2026-03-10", "ne2026-03-10"},
	"token":     {"x", "s|x"},
	"string":    {"x"},
	"reference": {"Practitioner/x", "Location/x", "HealthcareService/x", "x"},
}

// feedObjects are full objects of every feed the type reads: its section's,
// then a lab result's rows, a GDT result file, a GDT result's tests.
func feedObjects(t *testing.T, rt *resourceType, fileSchema map[string]any) []object {
	t.Helper()
	full := func(schema map[string]any) object {
		data, err := json.Marshal(fill(schema))
		if err != nil {
			t.Fatal(err)
		}
		return objectOf(t, string(data))
	}
	section := fileSchema
	if rt.section != "files" {
		section = domain.KindOf(rt.section).Schemas().Output
	}
	objs := []object{full(section)}
	for _, f := range rt.then {
		switch f {
		case gdtResultFiles:
			objs = append(objs, full(fileSchema))
		case labResultRows:
			objs = append(objs, rowsOf(full(domain.KindOf("lab-results").Schemas().Output))...)
		case gdtResultTests:
			objs = append(objs, rowsOf(full(fileSchema))...)
		}
	}
	if rt.section == "lab-results" || rt.section == "files" {
		for _, o := range slices.Clone(objs) { // a report's rows are read with it (_include)
			objs = append(objs, rowsOf(o)...)
		}
	}
	return objs
}

// fileViewSchema is the schema of a file as the files' section answers it.
func fileViewSchema(t *testing.T) map[string]any {
	t.Helper()
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true}
	data, err := json.Marshal(r.ReflectFromType(reflect.TypeFor[domain.FileView]()))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	return schema
}

// fill is a value of schema with every property present: objects whole,
// arrays of one element, strings "x", numbers 1, booleans true.
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

// namesIn adds the name of every field in v, at any depth, to names.
func namesIn(v *fastjson.Value, names map[string]bool) {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		o.Visit(func(k []byte, x *fastjson.Value) {
			names[string(k)] = true
			namesIn(x, names)
		})
	case fastjson.TypeArray:
		all, _ := v.Array()
		for _, x := range all {
			namesIn(x, names)
		}
	}
}
