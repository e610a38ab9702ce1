package domain

import (
	"errors"
	"math/big"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Formats of our own, named in payload tags (`format=svnr`) and checked by
// the schema validator, so that a checksum rule lives beside its field.
var formats = []*jsonschema.Format{
	{Name: "line", Validate: onString(func(s string) bool { return !strings.ContainsFunc(s, unicode.IsControl) })},
	{Name: "text", Validate: onString(func(s string) bool {
		return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' })
	})},
	{Name: "phone", Validate: onString(phonePattern.MatchString)},
	{Name: "svnr", Validate: onString(ValidSVNR)},
	{Name: "kvnr", Validate: onString(ValidKVNR)},
	{Name: "iban", Validate: onString(ValidIBAN)},
	{Name: "pzn", Validate: onString(ValidPZN)},
	{Name: "loinc", Validate: onString(ValidLOINC)},
	{Name: "uuid", Validate: onString(ValidObjectID)},
	{Name: "gdt-id", Validate: onString(gdtIDPattern.MatchString)},
	{Name: "gdt-code", Validate: onString(gdtCodePattern.MatchString)},
	{Name: "gdt-file-name", Validate: onString(gdtFileName.MatchString)},
	// Dates and times as RFC 3339 writes them, and only those that both
	// databases store: years 0001 to 9999 (PostgreSQL has no year 0).
	{Name: "date", Validate: onString(func(s string) bool { _, err := ParseDate(s); return err == nil })},
	{Name: "date-time", Validate: onString(func(s string) bool { _, err := ParseDateTime(s); return err == nil })},
}

// ParseDate reads a date YYYY-MM-DD in the years every store keeps.
func ParseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || !Storable(t) {
		return time.Time{}, errFormat
	}
	return t, nil
}

// ParseDateTime reads an RFC 3339 date-time with an offset whose instant
// lies in the years every store keeps.
func ParseDateTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !Storable(t) || !Storable(t.UTC()) || !offsetInRange(t) {
		return time.Time{}, errFormat
	}
	return t, nil
}

// offsetInRange holds RFC 3339's offset hours, 00 to 23: Go's parser takes
// +24:00 too, which no other reader of the date-time would.
func offsetInRange(t time.Time) bool {
	_, off := t.Zone()
	return off > -24*3600 && off < 24*3600
}

// Storable tells whether t's year is one PostgreSQL and SQLite both store
// and Go writes back the same: 0001 to 9999.
func Storable(t time.Time) bool { return t.Year() >= 1 && t.Year() <= 9999 }

var formatDescriptions = map[string]string{
	"line":          "one line without control characters",
	"text":          "text without control characters other than line breaks and tabs",
	"phone":         "an E.164 phone number (+ and 7 to 15 digits)",
	"svnr":          "a valid Austrian social insurance number (10 digits, check digit 4)",
	"kvnr":          "a valid German health insurance number (a letter, 9 digits, check digit last)",
	"iban":          "a valid IBAN (upper case, no spaces, mod-97 check)",
	"pzn":           "a valid PZN (7 or 8 digits, mod-11 check digit)",
	"loinc":         "a valid LOINC code (digits, hyphen, Luhn check digit)",
	"uuid":          "a UUID in canonical lower-case form",
	"date":          "a date YYYY-MM-DD from 0001-01-01 to 9999-12-31",
	"date-time":     "an RFC 3339 date-time with seconds and an offset, from year 0001 to 9999",
	"email":         "an e-mail address without a display name",
	"gdt-id":        "a GDT id: 1 to 8 letters and digits",
	"gdt-code":      "1 to 20 letters, digits, '_', '.' or '-'",
	"gdt-file-name": "a file name of 1 to 32 letters, digits, '_' or '-', a dot and an extension of 1 to 3 letters or digits",
}

// FormatDescription says in words what a value of the format is.
func FormatDescription(name string) string {
	if d, ok := formatDescriptions[name]; ok {
		return d
	}
	return "a valid " + name
}

var errFormat = errors.New("format")

func onString(ok func(string) bool) func(any) error {
	return func(v any) error {
		if s, isString := v.(string); isString && !ok(s) {
			return errFormat
		}
		return nil
	}
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for _, f := range formats {
		c.RegisterFormat(f)
	}
	return c
}

var (
	phonePattern = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	digits       = regexp.MustCompile(`^[0-9]+$`)
	ibanShape    = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]+$`)
)

func digitAt(s string, i int) int { return int(s[i] - '0') }

// ValidSVNR checks an Austrian social insurance number: 10 digits, the
// first not 0, digit 4 the weighted check digit (a remainder of 10 is never valid).
func ValidSVNR(s string) bool {
	if len(s) != 10 || !digits.MatchString(s) || s[0] == '0' {
		return false
	}
	weights := [10]int{3, 7, 9, 0, 5, 8, 4, 2, 1, 6}
	sum := 0
	for i, w := range weights {
		sum += w * digitAt(s, i)
	}
	r := sum % 11
	return r != 10 && r == digitAt(s, 3)
}

// ValidKVNR checks a German health insurance number: a letter (01–26) and 9
// digits; the first 10 digits weighted 1, 2, 1, 2 …, their digit sums added
// mod 10 give the last.
func ValidKVNR(s string) bool {
	if len(s) != 10 || s[0] < 'A' || s[0] > 'Z' || !digits.MatchString(s[1:]) {
		return false
	}
	letter := int(s[0]-'A') + 1
	ds := []int{letter / 10, letter % 10}
	for i := 1; i < 9; i++ {
		ds = append(ds, digitAt(s, i))
	}
	sum := 0
	for i, d := range ds {
		p := d * (1 + i%2)
		sum += p/10 + p%10
	}
	return sum%10 == digitAt(s, 9)
}

// ValidIBAN checks an IBAN: upper case, no spaces, ISO 13616 mod 97 = 1.
func ValidIBAN(s string) bool {
	if len(s) < 15 || len(s) > 34 || !ibanShape.MatchString(s) {
		return false
	}
	var b strings.Builder
	for _, r := range s[4:] + s[:4] {
		if r >= 'A' && r <= 'Z' {
			b.WriteString(big.NewInt(int64(r-'A') + 10).String())
		} else {
			b.WriteRune(r)
		}
	}
	n, _ := new(big.Int).SetString(b.String(), 10)
	return new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// ValidPZN checks a pharmacy product number of 7 (AT) or 8 (DE) digits,
// left-padded to 8: digits 1–7 weighted 1–7, sum mod 11 = digit 8.
func ValidPZN(s string) bool {
	if (len(s) != 7 && len(s) != 8) || !digits.MatchString(s) {
		return false
	}
	s = strings.Repeat("0", 8-len(s)) + s
	sum := 0
	for i := range 7 {
		sum += (i + 1) * digitAt(s, i)
	}
	r := sum % 11
	return r != 10 && r == digitAt(s, 7)
}

// ValidLOINC checks `digits-check`, the check digit the Luhn (mod 10) digit of the digits before it.
func ValidLOINC(s string) bool {
	body, check, ok := strings.Cut(s, "-")
	if !ok || len(body) < 1 || len(body) > 7 || len(check) != 1 || !digits.MatchString(body) || !digits.MatchString(check) {
		return false
	}
	sum := 0
	for i := range len(body) {
		d := digitAt(body, len(body)-1-i)
		if i%2 == 0 { // from the right, the first digit is doubled
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return (10-sum%10)%10 == digitAt(check, 0)
}
