package fhir

import (
	"strings"

	"github.com/praxis-health/praxis/domain"
)

// The Patient search reaches the query (docs/contract.md §15, "Finding a
// patient"): each parameter becomes a domain.Condition of the customers'
// list, answered from the store's index, so that every page is full and no
// next link follows the last match. A parameter with a query is never
// matched in memory.

// paramQuery turns a parameter's values (alternatives) with its modifier
// ("" for none) into the condition of the customers' list.
type paramQuery func(x view, name, modifier string, vals []value) (domain.Condition, error)

// nameQuery is a string parameter on a name field: folded prefix of a
// word by default, :exact as written, :contains anywhere in the folded name.
func nameQuery(field domain.SearchField) paramQuery {
	return func(_ view, name, modifier string, vals []value) (domain.Condition, error) {
		op := domain.OpPrefix
		switch modifier {
		case "exact":
			op = domain.OpExact
		case "contains":
			op = domain.OpContains
		}
		out := domain.Condition{Field: field, Op: op}
		for _, v := range vals {
			c, err := domain.NameCondition(name, field, op, v.raw)
			if err != nil {
				return out, fieldProblem(name, err)
			}
			out.Op = c.Op
			out.Values = append(out.Values, c.Values...)
		}
		return out, nil
	}
}

// phoneticQuery: a name of either part that sounds alike (Kölner Phonetik).
func phoneticQuery(x view, name, _ string, vals []value) (domain.Condition, error) {
	return nameQuery(domain.SearchPhonetic)(x, name, "", vals)
}

// birthdateQuery: a birth date by FHIR's date prefixes, at day precision.
func birthdateQuery(_ view, name, _ string, vals []value) (domain.Condition, error) {
	out := domain.Condition{Field: domain.SearchBirthDate, Op: domain.OpRange}
	for _, v := range vals {
		r, ok := domain.ParseDateRange(v.raw)
		if !ok {
			return out, invalidParam(name, name+": "+v.raw+" is not a FHIR date with an optional prefix (eq, ne, gt, ge, lt, le), YYYY, YYYY-MM or YYYY-MM-DD")
		}
		out.Ranges = append(out.Ranges, r)
	}
	return out, nil
}

// genders are the native sexes of FHIR's genders.
var genders = map[string]string{"male": "male", "female": "female", "other": "diverse", "unknown": "unknown"}

// genderQuery: an administrative gender (unknown also where none is held).
func genderQuery(_ view, name, _ string, vals []value) (domain.Condition, error) {
	out := domain.Condition{Field: domain.SearchSex, Op: domain.OpEqual}
	for _, v := range vals {
		sex, ok := genders[v.code]
		if !ok || v.system != nil {
			return out, invalidParam(name, name+": male, female, other or unknown")
		}
		out.Values = append(out.Values, sex)
	}
	return out, nil
}

// identifierQuery: the SVNR, the KVNR or the practice's number, by system;
// without a system any of the three. An SVNR or KVNR whose check digit is
// wrong is refused with why: it names nobody.
func identifierQuery(x view, name, _ string, vals []value) (domain.Condition, error) {
	company := x.company
	{
		var out domain.Condition
		for _, v := range vals {
			var c domain.Condition
			var err error
			switch {
			case v.code == "":
				return out, invalidParam(name, name+": system|value, or a value")
			case v.system == nil || *v.system == "":
				c = domain.Condition{Field: domain.SearchIdentifier, Op: domain.OpEqual, Values: []string{v.code}}
			case *v.system == systemSVNR:
				c, err = domain.IdentifierCondition(name, domain.SearchSVNR, v.code)
			case *v.system == systemKVNR:
				c, err = domain.IdentifierCondition(name, domain.SearchKVNR, v.code)
			case *v.system == localSystem(company):
				c = domain.Condition{Field: domain.SearchID, Op: domain.OpEqual, Values: []string{v.code}}
			default:
				c = domain.Condition{Field: domain.SearchID, Op: domain.OpEqual} // a system of no one's: nothing
			}
			if err != nil {
				return out, fieldProblem(name, err)
			}
			if len(vals) > 1 && out.Field != "" && out.Field != c.Field {
				return out, invalidParam(name, name+": alternatives of one system at a time")
			}
			out.Field, out.Op = c.Field, c.Op
			out.Values = append(out.Values, c.Values...)
		}
		return out, nil
	}
}

// telecomQuery: a phone number (E.164, or national in the practice's
// country, read by the use case) or an e-mail address in any case.
func telecomQuery(field domain.SearchField) paramQuery {
	return func(_ view, name, _ string, vals []value) (domain.Condition, error) {
		out := domain.Condition{Field: field, Op: domain.OpEqual}
		for _, v := range vals {
			if v.system != nil {
				return out, invalidParam(name, name+": the value alone, without a system")
			}
			value := v.code
			if field == domain.SearchEmail {
				value = strings.ToLower(strings.TrimSpace(value))
			}
			out.Values = append(out.Values, value)
		}
		return out, nil
	}
}

// fieldProblem is a domain validation error as an invalid parameter.
func fieldProblem(name string, err error) error {
	if fe, ok := domain.AsFieldErrors(err); ok && len(fe) > 0 {
		return invalidParam(name, name+": "+fe[0].Message)
	}
	return err
}
