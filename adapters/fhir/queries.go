package fhir

import (
	"maps"
	"slices"

	"github.com/praxis-health/praxis/domain"
)

// The other types' parameters reach the query too (docs/contract.md §15):
// each becomes a domain.Condition of ListQuery.Where, on the section's
// columns, its payload's fields or the rows the store keeps beside it.

// instantQuery: a date parameter on an instant the store keeps in a column
// (a file's time of storing), by FHIR's prefixes at the value's precision.
func instantQuery(field domain.SearchField) paramQuery {
	return func(_ view, name, _ string, vals []value) (domain.Condition, error) {
		out := domain.Condition{Field: field, Op: domain.OpInstants}
		for _, v := range vals {
			d, err := parseValue(name, "date", v.raw)
			if err != nil {
				return out, err
			}
			out.Instants = append(out.Instants, domain.InstantRange{Prefix: d.prefix, From: d.from, To: d.to})
		}
		return out, nil
	}
}

// tokenQuery: a token parameter on a code the store keeps in a column; the
// system, when given, is not compared (the codes are the server's own).
func tokenQuery(field domain.SearchField) paramQuery {
	return func(_ view, _, _ string, vals []value) (domain.Condition, error) {
		return domain.Condition{Field: field, Op: domain.OpEqual, Values: codesOf(vals, nil)}, nil
	}
}

// codesOf are the codes of token values (an empty one names nothing), each
// read as the native values that map to it (natives: nil for the same codes).
func codesOf(vals []value, natives map[string]string) []string {
	out := []string{}
	for _, v := range vals {
		switch {
		case v.code == "":
		case natives == nil:
			out = append(out, v.code)
		default:
			for _, native := range slices.Sorted(maps.Keys(natives)) {
				if natives[native] == v.code {
					out = append(out, native)
				}
			}
		}
	}
	return out
}

// observedQuery: Observation's and DiagnosticReport's date, compared with
// the observed rows' ranges in the query (their rows are matched again).
var observedQuery = instantQuery(domain.SearchObserved)

// payloadToken: a token parameter on a payload field, each FHIR code read
// as the native values that map to it (natives: nil for the same codes).
func payloadToken(path string, natives map[string]string) paramQuery {
	return payloadTokenOr(path, "", natives)
}

// payloadTokenOr is payloadToken on a field whose absence means def.
func payloadTokenOr(path, def string, natives map[string]string) paramQuery {
	return func(_ view, _, _ string, vals []value) (domain.Condition, error) {
		return domain.Condition{Field: domain.SearchPayload, Op: domain.OpEqual, Path: path, Default: def, Values: codesOf(vals, natives)}, nil
	}
}

// payloadReference: a reference parameter to typ on a payload field that
// holds its id.
func payloadReference(typ, path string) paramQuery {
	return func(_ view, _, _ string, vals []value) (domain.Condition, error) {
		out := domain.Condition{Field: domain.SearchPayload, Op: domain.OpEqual, Path: path, Values: []string{}}
		for _, v := range vals {
			if id, ok := referenceID(typ, v.raw); ok {
				out.Values = append(out.Values, id)
			}
		}
		return out, nil
	}
}

// payloadDate: a date parameter on a payload field holding a date or an
// instant, compared as the range it spells.
func payloadDate(path string) paramQuery {
	return func(x view, name, modifier string, vals []value) (domain.Condition, error) {
		c, err := instantQuery(domain.SearchPayload)(x, name, modifier, vals)
		c.Path = path
		return c, err
	}
}

// activeStatuses are the FHIR codes of a catalogue object's active flag.
var activeStatuses = map[string]string{"true": "active", "false": "inactive"}

// scheduleActorQuery: a Schedule's actor, a Practitioner, Location or
// HealthcareService reference (a bare id: any of the three).
func scheduleActorQuery(x view, name, modifier string, vals []value) (domain.Condition, error) {
	out := domain.Condition{Field: domain.SearchAny}
	for _, a := range []struct{ typ, path string }{{"Practitioner", "user_id"}, {"Location", "location_id"}, {"HealthcareService", "service_id"}} {
		c, err := payloadReference(a.typ, a.path)(x, name, modifier, vals)
		if err != nil {
			return out, err
		}
		out.Any = append(out.Any, c)
	}
	return out, nil
}
