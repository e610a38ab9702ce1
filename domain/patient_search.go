package domain

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain/names"
)

// Finding a patient (docs/contract.md §15, "Finding a patient"). A search of
// the customers' list is a list of Conditions, all of which hold (AND); the
// values of one condition are alternatives (OR). Names are compared in the
// folded form of package names, on words the store keeps beside each
// customer when it is written (PatientIndexOf): an index, never a scan of
// the payloads.

// SearchField is what a condition compares: a name's words, a name as a
// whole, a phonetic code, or a field kept in a column of its own.
type SearchField string

const (
	SearchFamily    SearchField = "family"     // the last name's words
	SearchGiven     SearchField = "given"      // the first name's words
	SearchName      SearchField = "name"       // the words of either
	SearchPhonetic  SearchField = "phonetic"   // the Kölner Phonetik code of a word of either name
	SearchBirthDate SearchField = "birth_date" // YYYY-MM-DD
	SearchSVNR      SearchField = "svnr"
	SearchKVNR      SearchField = "kvnr"
	SearchPhone     SearchField = "phone" // E.164
	SearchEmail     SearchField = "email" // compared in lower case
	SearchSex       SearchField = "sex"
	SearchID        SearchField = "id" // the customer's number (on files, the file's id)
	// SearchIdentifier: the SVNR, the KVNR or the customer's number (an
	// identifier given without its system).
	SearchIdentifier SearchField = "identifier"

	// The files' own columns (ListQuery.Where: a DocumentReference search,
	// a DiagnosticReport's GDT results).
	SearchStored      SearchField = "stored"       // when the file was stored (Instants)
	SearchCategory    SearchField = "category"     // report, image, lab, letter, other
	SearchContentType SearchField = "content_type" // the sniffed media type
	SearchExamination SearchField = "examination"  // OpPresent: a device's GDT result

	// What Observations and reports are searched by (ListQuery.Where on
	// sections that declare HookObserved, and on GDT results).
	SearchCode     SearchField = "code"     // a row's LOINC code
	SearchObserved SearchField = "observed" // when it was measured (Instants, as ranges)
	// SearchPayload compares a payload field (Condition.Path) of a generic
	// section's objects: OpEqual its text, OpInstants the range its date
	// (a day) or instant (a second) spells.
	SearchPayload SearchField = "payload"
	// SearchAny holds when any of its conditions (Condition.Any) does.
	SearchAny SearchField = "any"
	// SearchUpdated compares an object's last change at the second, as the
	// answers spell it (Instants, as ranges: FHIR's _lastUpdated).
	SearchUpdated SearchField = "updated"
)

// SearchOp is how a condition compares.
type SearchOp int

const (
	// OpEqual: the field equals a value (identifiers, dates, codes).
	OpEqual SearchOp = iota
	// OpPrefix: every word of the value starts a word of the name (folded).
	OpPrefix
	// OpContains: the folded value stands anywhere in the folded name.
	OpContains
	// OpExact: the name is the value as written (case and accents too).
	OpExact
	// OpRange: a date within the condition's range (Ranges).
	OpRange
	// OpInstants: an instant within any of the condition's Instants.
	OpInstants
	// OpPresent: the field is held (no values).
	OpPresent
)

// Condition is one filter of a patient search (or of ListQuery.Where: a
// feed narrowed by its columns, payload fields or observed rows): Field
// compared by Op with
// any of Values (already in the form the store compares: folded words,
// phonetic codes, a canonical identifier), or, for OpRange, in any of Ranges.
// A value of OpPrefix or of SearchPhonetic is words separated by spaces,
// all of which must hold.
type Condition struct {
	Field    SearchField
	Op       SearchOp
	Values   []string
	Ranges   []DateRange
	Instants []InstantRange
	// Path is the payload field SearchPayload compares: a name of ours,
	// never a client's; Default, with OpEqual, the value of an object
	// without the field ("" for none: such an object never holds).
	Path, Default string
	// Any, on SearchAny: the condition holds when any of these does (each
	// a SearchPayload with OpEqual).
	Any []Condition
}

// InstantRange is a date search value against an instant (FHIR R4
// §3.1.1.4.2): the prefix and the range [From, To) the value spells at its
// precision (a day, a second). The instant compared is a point: eq holds
// when it lies in the range, gt when at or after To, ge at or after From,
// lt before From, le before To, ne outside.
type InstantRange struct {
	Prefix   string
	From, To time.Time
}

// DateRange is a date search value at day precision (FHIR R4 §3.1.1.4.2):
// the prefix and the dates [From, To) the value spells.
type DateRange struct {
	Prefix   string // eq, ne, gt, ge, lt, le
	From, To string // YYYY-MM-DD
}

// ParseDateRange reads a date search value: an optional prefix, then
// YYYY, YYYY-MM or YYYY-MM-DD.
func ParseDateRange(s string) (DateRange, bool) {
	r := DateRange{Prefix: "eq"}
	if len(s) > 2 && slices.Contains([]string{"eq", "ne", "gt", "ge", "lt", "le"}, s[:2]) {
		r.Prefix, s = s[:2], s[2:]
	}
	from, to, ok := DateSpan(s)
	if !ok {
		return DateRange{}, false
	}
	r.From, r.To = from.Format(time.DateOnly), to.Format(time.DateOnly)
	return r, true
}

// DateSpan is the range [from, to) of days a date at its precision spells:
// YYYY a year, YYYY-MM a month, YYYY-MM-DD a day (UTC).
func DateSpan(s string) (from, to time.Time, ok bool) {
	for _, f := range []struct {
		layout string
		next   func(time.Time) time.Time
	}{
		{"2006", func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }},
		{"2006-01", func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }},
		{"2006-01-02", func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }},
	} {
		if len(s) != len(f.layout) {
			continue
		}
		if t, err := time.Parse(f.layout, s); err == nil {
			return t, f.next(t), true
		}
	}
	return time.Time{}, time.Time{}, false
}

// NameCondition is a condition on a name field from what a client typed:
// the value folded and split into words (OpPrefix), folded whole
// (OpContains), as written (OpExact), or as phonetic codes of its words
// (SearchPhonetic). A value with nothing to compare (only punctuation)
// is a FieldErrors on param.
func NameCondition(param string, field SearchField, op SearchOp, raw string) (Condition, error) {
	c := Condition{Field: field, Op: op}
	switch {
	case len([]rune(raw)) > names.MaxLength:
		return c, FieldErrors{{Field: param, Message: "is longer than 200 characters"}}.Err()
	case field == SearchPhonetic:
		c.Op, c.Values = OpEqual, []string{strings.Join(names.PhoneticWords(raw), " ")}
	case op == OpExact:
		c.Values = []string{strings.TrimSpace(raw)}
	case op == OpContains:
		c.Values = []string{names.Fold(raw)}
		if len([]rune(c.Values[0])) < 3 {
			return c, FieldErrors{{Field: param, Message: "a contains-search needs at least 3 letters or digits"}}.Err()
		}
	default:
		c.Values = []string{names.Fold(raw)}
	}
	if len(c.Values) == 0 || c.Values[0] == "" {
		return c, FieldErrors{{Field: param, Message: "has no letters or digits to search for"}}.Err()
	}
	return c, nil
}

// PatientIndex is what the store keeps beside a customer's payload for the
// search: the folded names, their words and phonetic codes, and the fields
// compared as they are. Version says which rules wrote it: a row written by
// an older version is indexed again by the backfill.
type PatientIndex struct {
	Family, Given string // folded whole
	BirthDate     *string
	SVNR, KVNR    *string
	Phone, Email  *string
	// Words are the index's words: a field (SearchFamily, SearchGiven, or
	// SearchPhonetic) and the folded word or code.
	Words []IndexWord
}

// IndexWord is one word a customer is found by.
type IndexWord struct {
	Field SearchField
	Word  string
}

// PatientIndexVersion is the version of the rules PatientIndexOf follows;
// a change of Fold, Words or Phonetic raises it (and a migration's partial
// index names the new number).
const PatientIndexVersion = 1

// PatientIndexOf reads a customer's payload (the customers section's JSON).
func PatientIndexOf(payload []byte) PatientIndex {
	var p struct {
		FirstName string  `json:"first_name"`
		LastName  string  `json:"last_name"`
		BirthDate *string `json:"birth_date"`
		SVNR      *string `json:"svnr"`
		KVNR      *string `json:"kvnr"`
		Phone     *string `json:"phone"`
		Email     *string `json:"email"`
	}
	_ = json.Unmarshal(payload, &p)
	family, familyWords, familyCodes := names.Name(p.LastName)
	given, givenWords, givenCodes := names.Name(p.FirstName)
	x := PatientIndex{Family: family, Given: given, BirthDate: p.BirthDate, SVNR: p.SVNR, KVNR: p.KVNR, Phone: p.Phone}
	if p.Email != nil {
		e := strings.ToLower(*p.Email)
		x.Email = &e
	}
	seen := map[IndexWord]bool{}
	add := func(f SearchField, words []string) {
		for _, w := range words {
			if iw := (IndexWord{f, w}); !seen[iw] {
				seen[iw] = true
				x.Words = append(x.Words, iw)
			}
		}
	}
	add(SearchFamily, familyWords)
	add(SearchGiven, givenWords)
	add(SearchPhonetic, familyCodes)
	add(SearchPhonetic, givenCodes)
	return x
}

// TotalMode is what a search answers of how many match (FHIR _total).
type TotalMode int

const (
	TotalNone     TotalMode = iota
	TotalAccurate           // counted
	TotalEstimate           // the planner's estimate where the backend has one, else counted
)

// SearchParam is a filter of the customers' list (GET …/customers): its
// query parameter, what it does (the OpenAPI document says it), its value's
// format there, and how a value becomes a condition.
type SearchParam struct {
	Name, Doc, Format string
	Parse             func(raw string) (Condition, error)
}

// PatientSearchParams are the customers' list's filters, in the document's
// order (docs/integrators/finding-patients.md). total is read beside them.
var PatientSearchParams = []SearchParam{
	{Name: "q", Doc: "words that each start a word of the last or the first name, in any order (\"Anna Müller\" and \"Müller, Anna\" find the same patient); case, accents and the spellings ü=ue, ö=oe, ä=ae, ß=ss are folded",
		Parse: func(raw string) (Condition, error) { return NameCondition("q", SearchName, OpPrefix, raw) }},
	{Name: "last_name", Doc: "the last name starts with this, or a part of it does (Müller-Lüdenscheidt is found by Lüd); folded as q",
		Parse: func(raw string) (Condition, error) { return NameCondition("last_name", SearchFamily, OpPrefix, raw) }},
	{Name: "first_name", Doc: "the first name, or one of several, starts with this; folded as q",
		Parse: func(raw string) (Condition, error) { return NameCondition("first_name", SearchGiven, OpPrefix, raw) }},
	{Name: "phonetic", Doc: "the last or the first name sounds like this (Kölner Phonetik: Meier finds Meyer, Maier, Mayr and Mayer)",
		Parse: func(raw string) (Condition, error) { return NameCondition("phonetic", SearchPhonetic, OpEqual, raw) }},
	{Name: "birth_date", Doc: "born on this date", Format: "date",
		Parse: func(raw string) (Condition, error) {
			r, ok := ParseDateRange(raw)
			if !ok || len(raw) != len(time.DateOnly) {
				return Condition{}, FieldErrors{{Field: "birth_date", Message: "must be a date, YYYY-MM-DD"}}.Err()
			}
			return Condition{Field: SearchBirthDate, Op: OpRange, Ranges: []DateRange{r}}, nil
		}},
	{Name: "svnr", Doc: "the Austrian social insurance number, exactly (10 digits; one with a wrong check digit is refused)",
		Parse: func(raw string) (Condition, error) { return IdentifierCondition("svnr", SearchSVNR, raw) }},
	{Name: "kvnr", Doc: "the German health insurance number, exactly (a letter and 9 digits; one with a wrong check digit is refused)",
		Parse: func(raw string) (Condition, error) { return IdentifierCondition("kvnr", SearchKVNR, raw) }},
	{Name: "phone", Doc: "the phone number: E.164 (+43664…), or a national number (0664 …) read in the practice's country (by its time zone)",
		Parse: func(raw string) (Condition, error) {
			return Condition{Field: SearchPhone, Op: OpEqual, Values: []string{raw}}, nil
		}},
	{Name: "email", Doc: "the e-mail address, in any case", Format: "email",
		Parse: func(raw string) (Condition, error) {
			return Condition{Field: SearchEmail, Op: OpEqual, Values: []string{strings.ToLower(strings.TrimSpace(raw))}}, nil
		}},
}

// IdentifierCondition is a search by an SVNR or a KVNR, compared as written
// (never folded). One whose check digit is wrong matches nobody: it is
// refused with why (a FieldErrors on param), rather than answered empty.
func IdentifierCondition(param string, field SearchField, raw string) (Condition, error) {
	v := strings.TrimSpace(raw)
	switch {
	case field == SearchSVNR && !ValidSVNR(v):
		return Condition{}, FieldErrors{{Field: param, Message: "is not a valid Austrian social insurance number: 10 digits whose check digit (the fourth) must match the others"}}.Err()
	case field == SearchKVNR && !ValidKVNR(v):
		return Condition{}, FieldErrors{{Field: param, Message: "is not a valid German health insurance number: a capital letter and 9 digits whose last is the check digit"}}.Err()
	}
	return Condition{Field: field, Op: OpEqual, Values: []string{v}}, nil
}

// countryCodes are the calling codes of the practices' countries, by the
// time zone a company names (a national number is read in its country).
var countryCodes = map[string]string{
	"Europe/Vienna": "43", "Europe/Berlin": "49", "Europe/Busingen": "49", "Europe/Zurich": "41", "Europe/Vaduz": "423",
}

// PhoneE164 reads a phone number a person typed as E.164: "+43 664 123
// 4567", "0043 664 1234567", or the national "0664 1234567" in the country
// of zone (a company's time zone). Spaces, hyphens, slashes, dots and
// brackets are ignored; false when what is left is no E.164 number.
func PhoneE164(raw, zone string) (string, bool) {
	var b strings.Builder
	for i, r := range strings.TrimSpace(raw) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
			b.WriteRune(r)
		case strings.ContainsRune(" -/.()", r):
		default:
			return "", false
		}
	}
	n := b.String()
	switch {
	case strings.HasPrefix(n, "+"):
	case strings.HasPrefix(n, "00"):
		n = "+" + n[2:]
	case strings.HasPrefix(n, "0") && countryCodes[zone] != "":
		n = "+" + countryCodes[zone] + n[1:]
	default:
		return "", false
	}
	return n, phonePattern.MatchString(n)
}

// ReadPhones turns the phone conditions' values into E.164 in the country
// of zone; one that is no phone number is a FieldErrors on param.
func ReadPhones(conds []Condition, param, zone string) error {
	for i, c := range conds {
		if c.Field != SearchPhone {
			continue
		}
		for j, v := range c.Values {
			n, ok := PhoneE164(v, zone)
			if !ok {
				return FieldErrors{{Field: param, Message: "must be a phone number: E.164 (+43664…) or a national number (0664…)"}}.Err()
			}
			conds[i].Values[j] = n
		}
	}
	return nil
}

// SortKey is a key a patient search may be answered in the order of
// (FHIR _sort, the native sort): names folded as they are searched.
type SortKey string

const (
	SortFamily      SortKey = "family"     // the folded last name
	SortGiven       SortKey = "given"      // the folded first name
	SortBirthDate   SortKey = "birth_date" // YYYY-MM-DD; none before every date
	SortLastUpdated SortKey = "updated"    // the last change, in the order the writes committed
)

// NativeSortKeys and FHIRSortKeys name the keys in the customers' list's
// sort and in FHIR's _sort.
var (
	NativeSortKeys = map[string]SortKey{"last_name": SortFamily, "first_name": SortGiven, "birth_date": SortBirthDate, "updated_at": SortLastUpdated}
	FHIRSortKeys   = map[string]SortKey{"family": SortFamily, "given": SortGiven, "birthdate": SortBirthDate, "_lastUpdated": SortLastUpdated}
)

// SortBy is one key of a search's order.
type SortBy struct {
	Key  SortKey
	Desc bool
}

// ParseSort reads an order: keys separated by commas, each by a name of
// names, "-" before it for descending; ties go by the customer's number,
// the way the last key goes.
func ParseSort(param, raw string, names map[string]SortKey) ([]SortBy, error) {
	var out []SortBy
	for _, part := range strings.Split(raw, ",") {
		key, ok := names[strings.TrimPrefix(part, "-")]
		if !ok {
			return nil, FieldErrors{{Field: param, Message: "orders by " + strings.Join(slices.Sorted(maps.Keys(names)), ", ") +
				", each with - before it for descending, separated by commas"}}.Err()
		}
		if slices.ContainsFunc(out, func(s SortBy) bool { return s.Key == key }) {
			return nil, FieldErrors{{Field: param, Message: "names " + strings.TrimPrefix(part, "-") + " twice"}}.Err()
		}
		out = append(out, SortBy{Key: key, Desc: strings.HasPrefix(part, "-")})
	}
	return out, nil
}

// OrderOf spells an order as its cursors carry it ("family,-birth_date";
// "" for the feed's order).
func OrderOf(sort []SortBy) string {
	parts := make([]string, len(sort))
	for i, s := range sort {
		parts[i] = string(s.Key)
		if s.Desc {
			parts[i] = "-" + parts[i]
		}
	}
	return strings.Join(parts, ",")
}

// SortKeysOf are a customer's values of the keys of sort, as the store
// compares them: the index's folded names and birth date (PatientIndexOf;
// "" for none), the change stamp in decimal.
func SortKeysOf(sort []SortBy, payload []byte, change int64) []string {
	var x *PatientIndex
	keys := make([]string, len(sort))
	for i, s := range sort {
		if s.Key == SortLastUpdated {
			keys[i] = strconv.FormatInt(change, 10)
			continue
		}
		if x == nil {
			ix := PatientIndexOf(payload)
			x = &ix
		}
		switch s.Key {
		case SortFamily:
			keys[i] = x.Family
		case SortGiven:
			keys[i] = x.Given
		case SortBirthDate:
			if x.BirthDate != nil {
				keys[i] = *x.BirthDate
			}
		}
	}
	return keys
}

// CheckCursor refuses a cursor handed out for another order than q's: its
// keys would be read as another order's (a client must keep the sort of
// the request whose next link it follows).
func (q ListQuery) CheckCursor() error {
	if q.After == nil {
		return nil
	}
	if q.After.Order != OrderOf(q.Sort) || len(q.After.Keys) != len(q.Sort) {
		return invalid("cursor", "is not a cursor of this order: keep the sort of the request that handed it out")
	}
	for i, s := range q.Sort {
		if _, err := strconv.ParseInt(q.After.Keys[i], 10, 64); s.Key == SortLastUpdated && err != nil {
			return invalid("cursor", "is not a cursor this API handed out")
		}
	}
	return nil
}

// ValueSpan is the range [from, to) a FHIR date, dateTime or instant
// spells at its precision: YYYY a year, YYYY-MM a month, YYYY-MM-DD a day
// (UTC), an instant its second (its millisecond when it has a fraction), a
// dateTime without seconds its minute.
func ValueSpan(s string) (from, to time.Time, ok bool) {
	if from, to, ok := DateSpan(s); ok {
		return from, to, true
	}
	for _, f := range []struct {
		layout string
		next   func(time.Time) time.Time
	}{
		{time.RFC3339Nano, func(t time.Time) time.Time { return t.Add(time.Second) }},
		{"2006-01-02T15:04Z07:00", func(t time.Time) time.Time { return t.Add(time.Minute) }},
	} {
		if t, err := time.Parse(f.layout, s); err == nil {
			if f.layout == time.RFC3339Nano && t.Nanosecond() != 0 {
				return t, t.Add(time.Millisecond), true
			}
			return t, f.next(t), true
		}
	}
	return time.Time{}, time.Time{}, false
}
