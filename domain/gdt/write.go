package gdt

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

// The GDT versions praxis writes to a device (field 9218).
const (
	V21 = "2.1"
	V30 = "3.0"
)

// The encodings a device reads (field 9206). GDT 2.1 names 2 (IBM CP437)
// and 3 (ISO 8859); GDT 3.0 knows only ISO 8859-15.
const (
	CP437        = "cp437"
	Latin9       = "iso-8859-15"
	maxLineBytes = 999 // LLL has three digits
)

// The GDT record types praxis writes.
const (
	MasterData  = "6301" // Stammdaten übermitteln
	Examination = "6302" // Neue Untersuchung anfordern
	Cancel      = "6303" // Anforderung stornieren (3.0)
	ShowResult  = "6311" // Daten einer Untersuchung zeigen
)

// Patient is the patient as a GDT order names it.
type Patient struct {
	ID        int64  // 3000
	LastName  string // 3101
	FirstName string // 3102
	BirthDate string // 3103, as YYYY-MM-DD
	Sex       string // 3110: female, male, diverse, unknown or ""
	Title     string // 3104
}

// Message is one record praxis writes for a device.
type Message struct {
	Record   string // 6301, 6302, 6303 or 6311
	Version  string // V21 or V30
	Encoding string // CP437 or Latin9
	Receiver string // 8315, the device's GDT id
	Sender   string // 8316, praxis's
	Patient  Patient
	// OrderNumber is 8310, OrderUUID 8314 (written in 3.0 only).
	OrderNumber string
	OrderUUID   string
	Procedure   string   // 8402
	Tests       []string // 8410
	// ExaminedOn (DDMMYYYY) and ExaminedAt (HHMMSS) are 6200/6201 of the
	// examination a 6311 asks the device to show.
	ExaminedOn, ExaminedAt string
	Comment                string // 6227
}

// Written is an encoded record and what could not be written as given.
type Written struct {
	Raw []byte
	// Approximated names the fields whose text the encoding cannot hold:
	// they were written with the closest letters it has (never nil).
	Approximated []string
}

// Encode writes the record: lines "LLLFFFFvalue" CR LF whose length counts
// bytes in the device's encoding, 8100 the record's length in bytes.
// Values lose line breaks and trailing spaces (a reader cannot keep them).
func (m Message) Encode() (Written, error) {
	enc, charset, err := encodingOf(m.Version, m.Encoding)
	if err != nil {
		return Written{}, err
	}
	w := writer{enc: enc}
	version := "02.10"
	if m.Version == V30 {
		version = "03.00"
	}
	w.field("8315", m.Receiver)
	w.field("8316", m.Sender)
	w.field("9206", charset)
	w.field("9218", version)
	w.field("3000", strconv.FormatInt(m.Patient.ID, 10))
	if m.Record != Cancel || m.Version == V30 {
		w.patient(m.Patient, m.Record)
	}
	switch m.Record {
	case MasterData:
	case Examination, Cancel:
		w.order(m)
		for _, t := range m.Tests {
			w.field("8410", t)
		}
	case ShowResult:
		w.field("6200", m.ExaminedOn)
		w.field("6201", m.ExaminedAt)
		w.order(m)
	default:
		return Written{}, fmt.Errorf("gdt: record %q is not one praxis writes", m.Record)
	}
	w.field("6227", m.Comment)
	return Written{Raw: w.record(m.Record), Approximated: orEmpty(w.approximated)}, nil
}

// order writes the order's identity: 8310 (and 8314 in 3.0), 8402.
func (w *writer) order(m Message) {
	w.field("8310", m.OrderNumber)
	if m.Version == V30 {
		w.field("8314", m.OrderUUID)
	}
	w.field("8402", m.Procedure)
}

// patient writes the fields the record requires of the patient (3101–3103)
// and the ones it may carry.
func (w *writer) patient(p Patient, record string) {
	w.field("3101", p.LastName)
	w.field("3102", p.FirstName)
	if p.BirthDate != "" {
		if d, err := time.Parse(time.DateOnly, p.BirthDate); err == nil {
			w.field("3103", d.Format("02012006"))
		}
	}
	if record == ShowResult {
		return
	}
	w.field("3104", p.Title)
	switch p.Sex {
	case "male":
		w.field("3110", "1")
	case "female":
		w.field("3110", "2")
	}
}

// encodingOf is the encoder and field 9206 of a version and encoding.
func encodingOf(version, encoding string) (*charmap.Charmap, string, error) {
	switch {
	case version != V21 && version != V30:
		return nil, "", fmt.Errorf("gdt: version %q", version)
	case encoding == Latin9:
		return charmap.ISO8859_15, "3", nil
	case encoding == CP437 && version == V21:
		return charmap.CodePage437, "2", nil
	}
	return nil, "", fmt.Errorf("gdt: GDT %s does not take the encoding %q", version, encoding)
}

type writer struct {
	enc          *charmap.Charmap
	lines        bytes.Buffer
	approximated []string
}

// field writes one line; an empty value writes none.
func (w *writer) field(id, value string) {
	value = strings.TrimRight(strings.Map(lineSafe, value), " ")
	if value == "" {
		return
	}
	raw, exact := encodeClosest(w.enc, value)
	if !exact && !slices.Contains(w.approximated, id) {
		w.approximated = append(w.approximated, id)
	}
	if room := maxLineBytes - 9; len(raw) > room {
		raw = raw[:room]
	}
	w.line(id, raw)
}

func (w *writer) line(id string, raw []byte) {
	fmt.Fprintf(&w.lines, "%03d%s", len(raw)+9, id)
	w.lines.Write(raw)
	w.lines.WriteString("\r\n")
}

// record is the lines behind 8000 and 8100, the record's length in bytes.
func (w *writer) record(recordType string) []byte {
	head := fmt.Sprintf("0138000%s\r\n", recordType)
	const lengthLine = 3 + 4 + 5 + 2
	total := len(head) + lengthLine + w.lines.Len()
	out := make([]byte, 0, total)
	out = append(out, head...)
	out = fmt.Appendf(out, "0148100%05d\r\n", total)
	return append(out, w.lines.Bytes()...)
}

// lineSafe replaces what would end a line in a reader (CR, LF, Ctrl-Z) and
// other control characters with a space.
func lineSafe(r rune) rune {
	if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
		return ' '
	}
	return r
}

// encodeClosest encodes s, each character the encoding lacks replaced by
// the closest it has: without its accents (ł has none to drop, so it has a
// table), else "?". exact is false when anything was replaced.
func encodeClosest(enc *charmap.Charmap, s string) (raw []byte, exact bool) {
	exact = true
	for _, r := range s {
		if b, ok := enc.EncodeRune(r); ok && (r <= 0x7f || b >= 0x80) {
			raw = append(raw, b)
			continue
		}
		exact = false
		for _, c := range closest(r) {
			if b, ok := enc.EncodeRune(c); ok {
				raw = append(raw, b)
			} else {
				raw = append(raw, '?')
			}
		}
	}
	return raw, exact
}

// closest is a character written without what makes it special.
func closest(r rune) string {
	if s, ok := plainLetters[r]; ok {
		return s
	}
	var base []rune
	for _, c := range norm.NFD.String(string(r)) {
		if !unicode.Is(unicode.Mn, c) {
			base = append(base, c)
		}
	}
	if len(base) == 0 || string(base) == string(r) {
		return "?"
	}
	return string(base)
}

// plainLetters are letters without a decomposition, by their usual stand-ins.
var plainLetters = map[rune]string{
	'ł': "l", 'Ł': "L", 'đ': "d", 'Đ': "D", 'ø': "o", 'Ø': "O", 'æ': "ae", 'Æ': "AE",
	'œ': "oe", 'Œ': "OE", 'ı': "i", 'þ': "th", 'Þ': "Th", 'ð': "d", 'Ð': "D", 'ß': "ss",
	'ŀ': "l", 'Ŀ': "L", 'ħ': "h", 'Ħ': "H", 'ŧ': "t", 'Ŧ': "T", '€': "EUR",
}
