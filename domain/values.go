package domain

import (
	"bytes"
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
)

// The value types of docs/sections.md. Each states its JSON form once, in
// JSONSchema: the schema validator checks it before a payload is decoded, so
// decoding itself never meets a malformed value.

// Date is a civil date, YYYY-MM-DD, read in the company's time zone.
type Date string

func (Date) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "date"}
}

// Time is the date at midnight UTC, for comparisons.
func (d Date) Time() time.Time {
	t, _ := time.Parse(time.DateOnly, string(d))
	return t
}

// After reports whether d is a later date than e.
func (d Date) After(e Date) bool { return d > e } // YYYY-MM-DD sorts as text

// DateOf is the civil date of t in loc.
func DateOf(t time.Time, loc *time.Location) Date { return Date(t.In(loc).Format(time.DateOnly)) }

// DateTime is an instant written with seconds and an offset; it is kept to
// the second and answered in the company's zone (see localize).
type DateTime struct{ time.Time }

func (DateTime) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "date-time"}
}

func (d *DateTime) UnmarshalJSON(b []byte) error {
	var s string
	if inner, plain := plainString(b); plain {
		s = inner // what every stored payload holds: no reflection for it
	} else if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, err := ParseDateTime(s)
	if err != nil {
		return err
	}
	d.Time = t.Truncate(time.Second)
	return nil
}

// plainString is the text of a JSON string that has no escapes in it.
func plainString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	inner := b[1 : len(b)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || bytes.IndexByte(inner, '"') >= 0 {
		return "", false
	}
	return string(inner), true
}

func (d DateTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.Format(time.RFC3339))
}

// TimeOfDay is a local wall-clock time HH:MM, up to 24:00.
type TimeOfDay string

func (TimeOfDay) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: `^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`}
}

// Decimal is an exact number written as a string: quantities, percentages, measured values.
type Decimal string

const decimalPattern = `^-?[0-9]{1,10}(\.[0-9]{1,6})?$`

func (Decimal) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: decimalPattern}
}

// Rat is the decimal's value; the schema has made sure it parses.
func (d Decimal) Rat() *big.Rat {
	r, ok := new(big.Rat).SetString(string(d))
	if !ok {
		return new(big.Rat)
	}
	return r
}

// Between reports lo ≤ d ≤ hi, exactly.
func (d Decimal) Between(lo, hi string) bool {
	v := d.Rat()
	l, _ := new(big.Rat).SetString(lo)
	h, _ := new(big.Rat).SetString(hi)
	return v.Cmp(l) >= 0 && v.Cmp(h) <= 0
}

// Money is an amount with exactly two decimals, as a string.
type Money string

func (Money) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: `^-?[0-9]{1,10}\.[0-9]{2}$`}
}

// Address is a postal address.
type Address struct {
	Street     string  `json:"street" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	PostalCode string  `json:"postal_code" jsonschema:"required,pattern=^[A-Za-z0-9 -]{2\\,10}$"`
	City       string  `json:"city" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	Country    *string `json:"country" jsonschema:"pattern=^[A-Z]{2}$"`
}

var (
	postalAT = regexp.MustCompile(`^[0-9]{4}$`)
	postalDE = regexp.MustCompile(`^[0-9]{5}$`)
)

// check adds the country's postal-code rule; the country defaults to AT.
func (a *Address) check(path string, errs *FieldErrors) {
	if a == nil {
		return
	}
	if a.Country == nil {
		a.Country = ptr("AT")
	}
	switch *a.Country {
	case "AT":
		if !postalAT.MatchString(a.PostalCode) {
			errs.Add(path+".postal_code", "must be 4 digits in Austria")
		}
	case "DE":
		if !postalDE.MatchString(a.PostalCode) {
			errs.Add(path+".postal_code", "must be 5 digits in Germany")
		}
	}
}

// Contact is a doctor or an institution.
type Contact struct {
	Name      string   `json:"name" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	Specialty *string  `json:"specialty" jsonschema:"maxLength=100,format=line"`
	Address   *Address `json:"address"`
	Phone     *string  `json:"phone" jsonschema:"format=phone"`
	Email     *string  `json:"email" jsonschema:"format=email,maxLength=254"`
}

func (c *Contact) check(path string, errs *FieldErrors) {
	if c != nil {
		c.Address.check(path+".address", errs)
	}
}

func ptr[T any](v T) *T { return &v }

// lineSchema is string(n): one line of at most n characters.
func lineSchema(n uint64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MaxLength: &n, Format: "line"}
}

// blank reports whether an optional text is absent or only white space.
func blank(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

func itoa(i int) string { return strconv.Itoa(i) }

func joinComma(s []string) string { return strings.Join(s, ", ") }
