package patientmatch

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/names"
)

// Matching a patient record (FHIR R4 Patient/$match; the native
// POST …/customers/match): what a lab or a hospital knows of a patient is
// held against the practice's patients found by indexed searches only, each
// candidate scored and graded (docs/contract.md §15, "Matching a patient").

// Grade is FHIR's match-grade: how sure a candidate is the patient.
type Grade string

const (
	Certain  Grade = "certain"
	Probable Grade = "probable"
	Possible Grade = "possible"
)

// Thresholds of the grades below certain, and the most a candidate that is
// not certain scores.
const (
	matchProbable = 0.35
	matchPossible = 0.15
	matchCeiling  = 0.9
)

// MaxCandidates is how many patients one candidate search reads.
const MaxCandidates = 50

// Facts is what a match compares, from a customer's payload (the
// customers section's JSON; fields absent or null are unknown).
type Facts struct {
	Family, Given                       string
	BirthDate, SVNR, KVNR, Phone, Email *string
	Sex                                 *string
}

// FactsOf reads a payload; an SVNR or KVNR whose check digit is
// wrong is no evidence and left out.
func FactsOf(payload []byte) Facts {
	var p struct {
		FirstName *string `json:"first_name"`
		LastName  *string `json:"last_name"`
		BirthDate *string `json:"birth_date"`
		SVNR      *string `json:"svnr"`
		KVNR      *string `json:"kvnr"`
		Phone     *string `json:"phone"`
		Email     *string `json:"email"`
		Sex       *string `json:"sex"`
	}
	_ = json.Unmarshal(payload, &p)
	f := Facts{BirthDate: p.BirthDate, Phone: p.Phone, Sex: p.Sex}
	if p.LastName != nil {
		f.Family = *p.LastName
	}
	if p.FirstName != nil {
		f.Given = *p.FirstName
	}
	if p.SVNR != nil && domain.ValidSVNR(*p.SVNR) {
		f.SVNR = p.SVNR
	}
	if p.KVNR != nil && domain.ValidKVNR(*p.KVNR) {
		f.KVNR = p.KVNR
	}
	if p.Email != nil {
		e := strings.ToLower(strings.TrimSpace(*p.Email))
		f.Email = &e
	}
	if f.Sex != nil && *f.Sex == "unknown" {
		f.Sex = nil
	}
	return f
}

// MatchSearches are the indexed searches whose results are the candidates:
// by each identifier, by birth date with the last name and with the first
// name, by phone and by e-mail. ErrInvalid (a FieldErrors on resource) when
// the facts allow none: a name alone is not searched.
func (f Facts) MatchSearches() ([][]domain.Condition, error) {
	var out [][]domain.Condition
	eq := func(field domain.SearchField, v *string) {
		if v != nil && *v != "" {
			out = append(out, []domain.Condition{{Field: field, Op: domain.OpEqual, Values: []string{*v}}})
		}
	}
	eq(domain.SearchSVNR, f.SVNR)
	eq(domain.SearchKVNR, f.KVNR)
	if f.BirthDate != nil {
		if r, ok := domain.ParseDateRange(*f.BirthDate); ok {
			born := domain.Condition{Field: domain.SearchBirthDate, Op: domain.OpRange, Ranges: []domain.DateRange{r}}
			for _, n := range []struct {
				field domain.SearchField
				value string
			}{{domain.SearchFamily, f.Family}, {domain.SearchGiven, f.Given}} {
				// Any word of the name: a typo in another word still finds the patient.
				if words := strings.Fields(names.Fold(n.value)); len(words) > 0 {
					out = append(out, []domain.Condition{born, {Field: n.field, Op: domain.OpPrefix, Values: words}})
				}
			}
		}
	}
	eq(domain.SearchPhone, f.Phone)
	eq(domain.SearchEmail, f.Email)
	if len(out) == 0 {
		return nil, domain.FieldErrors{{Field: "resource", Message: "needs an identifier (SVNR or KVNR), a birth date with a name, a phone number or an e-mail address to find candidates by"}}.Err()
	}
	return out, nil
}

// nameAgreement is how far two names agree: the same when folded, alike
// by their Kölner Phonetik, one typo apart (a letter more, less, changed,
// or two swapped, in names of 5 letters and more), or not at all; unknown
// when either is empty.
type nameAgreement int

const (
	namesUnknown nameAgreement = iota
	namesDiffer
	namesTypo
	namesSound
	namesSame
)

func compareNames(a, b string) nameAgreement {
	fa, fb := names.Fold(a), names.Fold(b)
	switch {
	case fa == "" || fb == "":
		return namesUnknown
	case fa == fb:
		return namesSame
	case slices.Equal(names.PhoneticWords(a), names.PhoneticWords(b)):
		return namesSound
	case len([]rune(fa)) >= 5 && len([]rune(fb)) >= 5 && typoDistance(fa, fb) <= 1:
		return namesTypo
	}
	return namesDiffer
}

// typoDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions, adjacent transpositions).
func typoDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// transposed: the two dates are one with day and month swapped (a common
// slip: 1980-03-04 for 1980-04-03).
func transposed(a, b string) bool {
	if len(a) != 10 || len(b) != 10 || a == b {
		return false
	}
	return a[:4] == b[:4] && a[5:7] == b[8:10] && a[8:10] == b[5:7]
}

// Compare scores held (a practice's patient) against asked (what the
// caller knows) in [0, 1] and grades it:
//   - certain (1.0): the same valid SVNR or KVNR, the same birth date, and a
//     last name that agrees (the same folded, or alike phonetically) with a
//     first name that does not differ; never on names alone;
//   - otherwise a score from the evidence: an identifier 0.5, the birth date
//     0.2 (day and month swapped 0.1), the last name 0.15 / 0.1 / 0.08 (same,
//     sounds alike, a typo), the first name 0.1 / 0.07 / 0.05, phone and
//     e-mail 0.05 each, the sex 0.03; against it, a different identifier
//     −0.5, a different birth date −0.2, a different name −0.1, a different
//     sex −0.1; at most 0.9. Probable from 0.35 (both names and the birth
//     date, even one name with a typo), possible from 0.15, below that no
//     candidate. A married name (the last name differs) is at most probable:
//     there is no birth-name field to hold the earlier one.
func Compare(asked, held Facts) (float64, Grade, bool) {
	score := 0.0
	idMatch := false
	for _, id := range [][2]*string{{asked.SVNR, held.SVNR}, {asked.KVNR, held.KVNR}} {
		if id[0] == nil || id[1] == nil {
			continue
		}
		if *id[0] == *id[1] {
			score += 0.5
			idMatch = true
		} else {
			score -= 0.5
		}
	}
	sameBirth := false
	if asked.BirthDate != nil && held.BirthDate != nil {
		switch {
		case *asked.BirthDate == *held.BirthDate:
			score += 0.2
			sameBirth = true
		case transposed(*asked.BirthDate, *held.BirthDate):
			score += 0.1
		default:
			score -= 0.2
		}
	}
	family, given := compareNames(asked.Family, held.Family), compareNames(asked.Given, held.Given)
	score += map[nameAgreement]float64{namesSame: 0.15, namesSound: 0.1, namesTypo: 0.08, namesDiffer: -0.1}[family]
	score += map[nameAgreement]float64{namesSame: 0.1, namesSound: 0.07, namesTypo: 0.05, namesDiffer: -0.1}[given]
	for _, v := range [][2]*string{{asked.Phone, held.Phone}, {asked.Email, held.Email}} {
		if v[0] != nil && v[1] != nil && *v[0] == *v[1] {
			score += 0.05
		}
	}
	if asked.Sex != nil && held.Sex != nil {
		if *asked.Sex == *held.Sex {
			score += 0.03
		} else {
			score -= 0.1
		}
	}
	switch {
	case idMatch && sameBirth && family >= namesSound && given != namesDiffer:
		return 1, Certain, true
	case score >= matchProbable:
		return min(score, matchCeiling), Probable, true
	case score >= matchPossible:
		return score, Possible, true
	}
	return max(score, 0), "", false
}

// Request is the native match's body (POST …/customers/match): what is
// known of the patient, in the customers section's field names, how many
// candidates at most, and whether only a single certain one is wanted.
type Request struct {
	Customer    json.RawMessage `json:"customer"`
	Count       *int            `json:"count"`
	OnlyCertain *bool           `json:"only_certain_matches"`
}

// matchFields are the customer fields a match reads.
var matchFields = []string{"first_name", "last_name", "birth_date", "sex", "svnr", "kvnr", "phone", "email"}

// ParseRequest reads and checks a native match's body: every problem
// at once, as FieldErrors.
func ParseRequest(body []byte) (Request, error) {
	var r Request
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, domain.FieldErrors{{Field: "body", Message: "must be {\"customer\":{…},\"count\":…,\"only_certain_matches\":…}: " + err.Error()}}.Err()
	}
	var errs domain.FieldErrors
	var fields map[string]any
	if json.Unmarshal(r.Customer, &fields) != nil || fields == nil {
		errs.Add("customer", "must be an object of the customer's fields")
	}
	for name, v := range fields {
		if _, ok := v.(string); !ok && v != nil {
			errs.Add("customer."+name, "must be a string or null")
		}
		if !slices.Contains(matchFields, name) {
			errs.Add("customer."+name, "is not matched on (first_name, last_name, birth_date, sex, svnr, kvnr, phone, email)")
		}
	}
	if r.Count != nil && (*r.Count < 1 || *r.Count > 100) {
		errs.Add("count", "must be from 1 to 100")
	}
	return r, errs.Err()
}

// Certain keeps the one certain candidate among ms, or none when there is
// none or more than one (FHIR's onlyCertainMatches).
func OnlyCertain[M any](ms []M, grade func(M) Grade) []M {
	var out []M
	for _, m := range ms {
		if grade(m) == Certain {
			out = append(out, m)
		}
	}
	if len(out) != 1 {
		return nil
	}
	return out
}
