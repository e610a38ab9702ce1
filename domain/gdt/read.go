// Package gdt reads and writes GDT (Gerätedatenträger), the text format
// practices' devices exchange (versions 2.1 and 3.x): one field a line,
// "LLLFFFFcontent", where LLL is the line's length and FFFF the field. Real
// files break the rules, so the reader is lenient and reports what was off
// as warnings, never as a failure; the writer writes what a device reads.
// It knows nothing of kinds, companies or customers: a patient is the
// number in field 3000 (docs/contract.md §7 and §14 say what praxis does
// with it).
package gdt

import (
	"bytes"
	"encoding/json"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Field is one line of a GDT file.
type Field struct {
	ID    string
	Value string
	Line  int
}

// Record is the fields from one record type (8000) to the next.
type Record struct{ Fields []Field }

// Get is the first value of field id in the record.
func (r Record) Get(id string) (string, bool) {
	for _, f := range r.Fields {
		if f.ID == id {
			return f.Value, true
		}
	}
	return "", false
}

// All is every value of field id, in order.
func (r Record) All(id string) []string {
	var out []string
	for _, f := range r.Fields {
		if f.ID == id {
			out = append(out, f.Value)
		}
	}
	return out
}

// File is a read GDT file.
type File struct {
	Records  []Record
	Encoding string // utf-8, cp437 or iso-8859-15
	Warnings []string
}

// Parse reads a GDT file leniently: CR LF, LF or CR line ends, blank
// lines, wrong or 000 lengths, lengths counted in characters, several
// records, no final newline, a Ctrl-Z (old DOS files end with one; it ends
// a line, and whatever follows it is still read: a record hidden behind it
// must not escape the patient check). The encoding is what field 9206 says
// (2 = CP437, 3 = ISO-8859-15), else UTF-8 when the bytes are valid UTF-8,
// else CP437. Any bytes parse; nothing panics.
//
// Its lines come from the same splitter that recognises GDT (LooksLike)
// and checks the patient of every record while a file streams past
// (PatientCheck), so what one of them skips the others skip too.
func Parse(raw []byte) File {
	var f File
	raw = bytes.TrimPrefix(raw, []byte(utf8BOM))
	text := f.decode(raw)
	var current *Record
	lines := lineSplitter{each: func(n int, line []byte) {
		id, value, ok := fieldLine(line)
		if !ok {
			f.warn(n, "is no GDT field line: skipped")
			return
		}
		s := string(line)
		declared, _ := strconv.Atoi(s[:3])
		switch chars := utf8.RuneCountInString(s); declared {
		case len(s) + 2, chars + 2: // CR LF counted, in bytes or in characters
		case len(s) + 1, chars + 1: // a one-character line end counted
		default:
			f.warn(n, "declares length "+s[:3]+", has "+strconv.Itoa(chars+2))
		}
		if id == "8000" || current == nil {
			if id != "8000" {
				f.warn(n, "a field before the first record type 8000")
			}
			f.Records = append(f.Records, Record{})
			current = &f.Records[len(f.Records)-1]
		}
		current.Fields = append(current.Fields, Field{ID: id, Value: value, Line: n})
	}}
	_, _ = lines.Write([]byte(text))
	lines.Close()
	if len(f.Records) == 0 {
		f.Warnings = append(f.Warnings, "no GDT record")
	}
	return f
}

const (
	utf8BOM = "\xef\xbb\xbf"
	ctrlZ   = 0x1a
	// maxLine is how much of one line is kept; the rest of a longer line
	// is dropped, but the line is still read as what its start says.
	maxLine = 64 << 10
)

// lineSplitter splits a GDT byte stream into lines, as it arrives in pieces of
// any size: a byte-order mark at the start is dropped, CR LF, LF, a lone CR
// and a Ctrl-Z each end a line, blank lines are skipped, and the last line
// needs no line end (Close hands it over). each gets the
// line's number (counting every line end) and its bytes, valid only during
// the call.
type lineSplitter struct {
	each    func(n int, line []byte)
	head    []byte // the first bytes, held until a byte-order mark can be told
	line    []byte
	n       int
	started bool // the start was looked at for a byte-order mark
	cr      bool // the last byte was a CR, so a LF right after it ends no line
}

func (l *lineSplitter) Write(p []byte) (int, error) {
	written := len(p)
	if !l.started {
		l.head = append(l.head, p...)
		if len(l.head) < len(utf8BOM) && strings.HasPrefix(utf8BOM, string(l.head)) {
			return written, nil
		}
		p = bytes.TrimPrefix(l.head, []byte(utf8BOM))
		l.head, l.started = nil, true
	}
	l.split(p)
	return written, nil
}

func (l *lineSplitter) split(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n\x1a")
		if i < 0 {
			l.keep(p)
			l.cr = false
			return
		}
		c := p[i]
		l.keep(p[:i])
		lf := c == '\n' && i == 0 && l.cr
		p, l.cr = p[i+1:], c == '\r'
		if !lf { // the LF of a CR LF ends no second line
			l.end()
		}
	}
}

// Close hands over a last line that had no line end.
func (l *lineSplitter) Close() {
	if !l.started {
		l.started = true
		l.split(bytes.TrimPrefix(l.head, []byte(utf8BOM)))
	}
	if len(l.line) > 0 {
		l.end()
	}
}

// end ends the current line: it counts, and goes to each unless blank.
func (l *lineSplitter) end() {
	l.n++
	if len(bytes.TrimSpace(l.line)) > 0 {
		l.each(l.n, l.line)
	}
	l.line = l.line[:0]
}

func (l *lineSplitter) keep(p []byte) {
	if room := maxLine - len(l.line); room > 0 {
		l.line = append(l.line, p[:min(room, len(p))]...)
	}
}

// fieldLine reads "LLLFFFFvalue": false for a line that is no field line.
func fieldLine(line []byte) (id, value string, ok bool) {
	if len(line) < 7 || !allDigits(line[:7]) {
		return "", "", false
	}
	return string(line[3:7]), strings.TrimRight(string(line[7:]), " "), true
}

func (f *File) warn(line int, msg string) {
	if len(f.Warnings) < 100 {
		f.Warnings = append(f.Warnings, "line "+strconv.Itoa(line)+": "+msg)
	}
}

// decode reads the bytes in the charset field 9206 names (2 = CP437,
// 3 = ISO 8859-15); without one, as UTF-8 when they are valid UTF-8, else
// as CP437. A declared single-byte charset wins over the guess: a short
// name such as "ÄŠ" in ISO 8859-15 is also valid UTF-8.
func (f *File) decode(raw []byte) string {
	charset := field9206(raw)
	if charset != "2" && charset != "3" && utf8.Valid(raw) {
		f.Encoding = "utf-8"
		return string(raw)
	}
	dec := charmap.CodePage437
	f.Encoding = CP437
	if charset == "3" {
		dec, f.Encoding = charmap.ISO8859_15, Latin9
	} else if charset != "2" && charset != "" {
		f.Warnings = append(f.Warnings, "field 9206 names charset "+charset+": read as CP437")
	}
	out, err := dec.NewDecoder().Bytes(raw)
	if err != nil { // single-byte charmaps decode every byte; kept for safety
		return string(raw)
	}
	return string(out)
}

// field9206 finds the charset field among the raw bytes (its digits are ASCII in every encoding).
func field9206(raw []byte) string {
	i := bytes.Index(raw, []byte("9206"))
	for i >= 3 {
		if allDigits(string(raw[i-3 : i])) {
			rest := raw[i+4:]
			end := bytes.IndexAny(rest, "\r\n")
			if end < 0 {
				end = len(rest)
			}
			return strings.TrimSpace(string(rest[:end]))
		}
		next := bytes.Index(raw[i+4:], []byte("9206"))
		if next < 0 {
			break
		}
		i += 4 + next
	}
	return ""
}

// allDigits tells whether s is one digit or more, nothing else.
func allDigits[T string | []byte](s T) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// Number reads a number field as devices write it (3000, the patient;
// 8310, the order): digits only, leading zeros allowed (exports often pad
// them: "02345" is 2345), above zero and within int64. Signs, spaces and
// anything else are not numbers.
func Number(s string) (int64, bool) {
	if !allDigits(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimLeft(s, "0"), 10, 64)
	return n, err == nil && n > 0
}

// LooksLike recognises a GDT file from its first bytes: the first line
// the parser reads as a field (past a byte-order mark, blank lines and lines
// that are no field, with any line ends) is a record type 8000. A head with
// a NUL byte is binary, never GDT.
func LooksLike(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	first, decided := false, false
	lines := lineSplitter{each: func(_ int, line []byte) {
		if id, _, ok := fieldLine(line); ok && !decided {
			first, decided = id == "8000", true
		}
	}}
	_, _ = lines.Write(head)
	lines.Close()
	return first
}

// Patients is every patient number (field 3000) the file's records name, as
// sent, each number once (leading zeros ignored), in the order they appear.
func (f File) Patients() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range f.Records {
		for _, v := range r.All("3000") {
			if k := patientKey(v); !seen[k] {
				seen[k] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// patientKey is the patient a 3000 value names: the number without leading
// zeros, or the value itself when it is no number.
func patientKey(v string) string {
	if n, ok := Number(strings.TrimSpace(v)); ok {
		return strconv.FormatInt(n, 10)
	}
	return "?" + v
}

// IsPatient tells whether a field 3000 value names the patient.
func IsPatient(value string, patient int64) bool {
	n, ok := Number(strings.TrimSpace(value))
	return ok && n == patient
}

// PatientCheck reads a GDT file as it streams past (it is an io.Writer)
// and remembers the first field 3000, in any record, that names another
// patient than the one it is filed under: one file must never file a second patient's
// results under the first (docs/contract.md §7). It reads its lines with the
// parser's own splitter and keeps no more than one line in memory.
type PatientCheck struct {
	patient int64
	lines   lineSplitter
	other   *string
}

// NewPatientCheck checks a file that is to be filed under the patient.
func NewPatientCheck(patient int64) *PatientCheck {
	c := &PatientCheck{patient: patient}
	c.lines.each = func(_ int, line []byte) {
		if id, value, ok := fieldLine(line); ok && id == "3000" && c.other == nil && !IsPatient(value, c.patient) {
			c.other = &value
		}
	}
	return c
}

func (c *PatientCheck) Write(p []byte) (int, error) { return c.lines.Write(p) }

// OtherPatient ends the file and returns the first field 3000 as sent that
// is not the patient's number.
func (c *PatientCheck) OtherPatient() (string, bool) {
	c.lines.Close()
	if c.other == nil {
		return "", false
	}
	return *c.other, true
}

// Test is one test of an examination: fields 8410 (which begins it) to 8480.
type Test struct {
	ID             string   `json:"id"`              // 8410
	Name           string   `json:"name"`            // 8411
	Value          string   `json:"value"`           // 8420
	Unit           string   `json:"unit"`            // 8421
	Status         *string  `json:"status"`          // 8418
	LimitIndicator *string  `json:"limit_indicator"` // 8422, e.g. "+", "-", "H", "L"
	NormalText     []string `json:"normal_text"`     // 8460
	NormalLow      *string  `json:"normal_low"`      // 8461
	NormalHigh     *string  `json:"normal_high"`     // 8462
	Comments       []string `json:"comments"`        // 8470
	ResultText     []string `json:"result_text"`     // 8480
}

// Category is a free category of a result (6330 to 6399): a name from an
// even field, its lines from the odd field after it.
type Category struct {
	Name  string   `json:"name"`
	Lines []string `json:"lines"`
}

// Info is the examination metadata a stored GDT file carries (docs/contract.md §7).
// The header (record type to procedure) is the first record's; findings,
// tests, tables, categories and references are every record's, in order.
// Nothing is invented: without 6201 the time of the examination is unknown,
// and examined_at is null while examined_on holds the date.
type Info struct {
	RecordType      string     `json:"record_type"`
	Version         *string    `json:"version"`
	SenderID        *string    `json:"sender_id"`
	ReceiverID      *string    `json:"receiver_id"`
	ExaminedOn      *string    `json:"examined_on"` // 6200, a date
	ExaminedAt      *string    `json:"examined_at"` // 6200 + 6201 in the company's zone
	ProcedureCode   *string    `json:"procedure_code"`
	OrderNumber     *string    `json:"order_number"` // 8310
	OrderUUID       *string    `json:"order_uuid"`   // 8314 (GDT 3.x)
	Findings        *string    `json:"findings"`
	Tests           []Test     `json:"tests"`
	ResultTable     []string   `json:"result_table"` // 6228, one formatted line each
	Categories      []Category `json:"categories"`
	ReferencedFiles []string   `json:"referenced_files"`
	Records         int        `json:"records"`
}

// MarshalJSON writes absent lists as [] (files stored before a list was read have none).
func (i Info) MarshalJSON() ([]byte, error) {
	type plain Info
	p := plain(i)
	p.Tests, p.ResultTable, p.Categories, p.ReferencedFiles = orEmpty(p.Tests), orEmpty(p.ResultTable), orEmpty(p.Categories), orEmpty(p.ReferencedFiles)
	if p.Records == 0 {
		p.Records = 1
	}
	return json.Marshal(p)
}

// MarshalJSON writes absent lists as [].
func (t Test) MarshalJSON() ([]byte, error) {
	type plain Test
	p := plain(t)
	p.NormalText, p.Comments, p.ResultText = orEmpty(p.NormalText), orEmpty(p.Comments), orEmpty(p.ResultText)
	return json.Marshal(p)
}

// MarshalJSON writes absent lines as [].
func (c Category) MarshalJSON() ([]byte, error) {
	type plain Category
	p := plain(c)
	p.Lines = orEmpty(p.Lines)
	return json.Marshal(p)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Info is the metadata of the file, the examination time read in zone.
func (f File) Info(zone *time.Location) *Info {
	if len(f.Records) == 0 {
		return nil
	}
	r := f.Records[0]
	opt := func(id string) *string {
		if v, ok := r.Get(id); ok && v != "" {
			return &v
		}
		return nil
	}
	info := &Info{Version: opt("9218"), SenderID: opt("8316"), ReceiverID: opt("8315"), ProcedureCode: opt("8402"),
		OrderNumber: opt("8310"), OrderUUID: opt("8314"),
		Tests: []Test{}, ResultTable: []string{}, Categories: []Category{}, ReferencedFiles: []string{}, Records: len(f.Records)}
	info.RecordType, _ = r.Get("8000")
	if day, ok := examinedOn(r); ok {
		s := day.Format(time.DateOnly)
		info.ExaminedOn = &s
		if at, ok := examinedAt(day, r, zone); ok {
			s := at.Format(time.RFC3339)
			info.ExaminedAt = &s
		}
	}
	var findings []string
	for _, rec := range f.Records {
		var test *Test
		var category *Category
		for _, fl := range rec.Fields {
			switch id := fl.ID; {
			case id == "6220" || id == "6221" || id == "6227":
				findings = append(findings, fl.Value)
			case id == "6228":
				info.ResultTable = append(info.ResultTable, fl.Value)
			case id == "6305":
				info.ReferencedFiles = append(info.ReferencedFiles, path.Base(strings.ReplaceAll(fl.Value, `\`, "/")))
			case id == "8410": // a test begins
				info.Tests = append(info.Tests, Test{ID: fl.Value})
				test = &info.Tests[len(info.Tests)-1]
			case id > "8410" && id <= "8480" && test != nil:
				test.take(id, fl.Value)
			case id >= "6330" && id <= "6399":
				category = info.takeCategory(category, id, fl.Value)
			}
		}
	}
	if len(findings) > 0 {
		joined := strings.Join(findings, "\n")
		info.Findings = &joined
	}
	return info
}

// take sets the test's field id (8411 to 8480); fields it does not know are left out.
func (t *Test) take(id, value string) {
	v := value
	switch id {
	case "8411":
		t.Name = v
	case "8418":
		t.Status = &v
	case "8420":
		t.Value = v
	case "8421":
		t.Unit = v
	case "8422":
		t.LimitIndicator = &v
	case "8460":
		t.NormalText = append(t.NormalText, v)
	case "8461":
		t.NormalLow = &v
	case "8462":
		t.NormalHigh = &v
	case "8470":
		t.Comments = append(t.Comments, v)
	case "8480":
		t.ResultText = append(t.ResultText, v)
	}
}

// takeCategory reads a free-category field: an even one (6330, 6332, …)
// names a new category, the odd one after it adds a line to that category.
// A line without its name opens a category without one.
func (i *Info) takeCategory(current *Category, id, value string) *Category {
	n, _ := strconv.Atoi(id)
	if n%2 == 0 {
		i.Categories = append(i.Categories, Category{Name: value, Lines: []string{}})
		return &i.Categories[len(i.Categories)-1]
	}
	if current == nil {
		i.Categories = append(i.Categories, Category{Lines: []string{}})
		current = &i.Categories[len(i.Categories)-1]
	}
	current.Lines = append(current.Lines, value)
	return current
}

// examinedOn reads 6200 (DDMMYYYY), a civil date.
func examinedOn(r Record) (time.Time, bool) {
	day, ok := r.Get("6200")
	if !ok || len(day) != 8 || !allDigits(day) {
		return time.Time{}, false
	}
	t, err := time.Parse("02012006", day)
	return t, err == nil
}

// examinedAt is the date with 6201 (HHMMSS or HHMM) in zone; false without a valid 6201.
func examinedAt(day time.Time, r Record, zone *time.Location) (time.Time, bool) {
	clock, ok := r.Get("6201")
	if !ok || (len(clock) != 4 && len(clock) != 6) || !allDigits(clock) {
		return time.Time{}, false
	}
	clock += strings.Repeat("0", 6-len(clock))
	t, err := time.ParseInLocation("20060102150405", day.Format("20060102")+clock, zone)
	return t, err == nil
}
