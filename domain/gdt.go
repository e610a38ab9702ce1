package domain

import (
	"bytes"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// GDT (Gerätedatenträger) is the text format practices' devices export
// (versions 2.1 and 3.x): one field a line, "LLLFFFFcontent", where LLL is
// the line's length and FFFF the field. Real files break the rules, so the
// reader is lenient and reports what was off as warnings, never as a failure.

// GDTField is one line of a GDT file.
type GDTField struct {
	ID    string
	Value string
	Line  int
}

// GDTRecord is the fields from one record type (8000) to the next.
type GDTRecord struct{ Fields []GDTField }

// Get is the first value of field id in the record.
func (r GDTRecord) Get(id string) (string, bool) {
	for _, f := range r.Fields {
		if f.ID == id {
			return f.Value, true
		}
	}
	return "", false
}

// All is every value of field id, in order.
func (r GDTRecord) All(id string) []string {
	var out []string
	for _, f := range r.Fields {
		if f.ID == id {
			out = append(out, f.Value)
		}
	}
	return out
}

// GDTFile is a read GDT file.
type GDTFile struct {
	Records  []GDTRecord
	Encoding string // utf-8, cp437 or iso-8859-15
	Warnings []string
}

// ParseGDT reads a GDT file leniently: CR LF, LF or CR line ends, blank
// lines, wrong or 000 lengths, lengths counted in characters, several
// records, no final newline, a Ctrl-Z end. The encoding is UTF-8 when the
// bytes are valid UTF-8, else what field 9206 says (2 = CP437,
// 3 = ISO-8859-15), else CP437. Any bytes parse; nothing panics.
func ParseGDT(raw []byte) GDTFile {
	var f GDTFile
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	if i := bytes.IndexByte(raw, 0x1a); i >= 0 { // Ctrl-Z ends old DOS files
		raw = raw[:i]
	}
	text := f.decode(raw)
	lines := strings.FieldsFunc(strings.ReplaceAll(text, "\r\n", "\n"), func(r rune) bool { return r == '\n' || r == '\r' })
	var current *GDTRecord
	for n, line := range lines {
		n++
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(line) < 7 || !allDigits(line[:7]) {
			f.warn(n, "is no GDT field line: skipped")
			continue
		}
		id, value := line[3:7], strings.TrimRight(line[7:], " ")
		declared, _ := strconv.Atoi(line[:3])
		switch chars := utf8.RuneCountInString(line); declared {
		case len(line) + 2, chars + 2: // CR LF counted, in bytes or in characters
		case len(line) + 1, chars + 1: // a one-character line end counted
		default:
			f.warn(n, "declares length "+line[:3]+", has "+strconv.Itoa(chars+2))
		}
		if id == "8000" || current == nil {
			if id != "8000" {
				f.warn(n, "a field before the first record type 8000")
			}
			f.Records = append(f.Records, GDTRecord{})
			current = &f.Records[len(f.Records)-1]
		}
		current.Fields = append(current.Fields, GDTField{ID: id, Value: value, Line: n})
	}
	if len(f.Records) == 0 {
		f.Warnings = append(f.Warnings, "no GDT record")
	}
	return f
}

func (f *GDTFile) warn(line int, msg string) {
	if len(f.Warnings) < 100 {
		f.Warnings = append(f.Warnings, "line "+strconv.Itoa(line)+": "+msg)
	}
}

func (f *GDTFile) decode(raw []byte) string {
	if utf8.Valid(raw) {
		f.Encoding = "utf-8"
		return string(raw)
	}
	dec := charmap.CodePage437
	f.Encoding = "cp437"
	if charset := field9206(raw); charset == "3" {
		dec, f.Encoding = charmap.ISO8859_15, "iso-8859-15"
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

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Patient is field 3000 of the file's first record that has one, as sent.
func (f GDTFile) Patient() (string, bool) {
	for _, r := range f.Records {
		if v, ok := r.Get("3000"); ok {
			return v, true
		}
	}
	return "", false
}

// GDTTest is one test of an examination (8410–8421).
type GDTTest struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Value string `json:"value"`
	Unit  string `json:"unit"`
}

// GDTInfo is the examination metadata a stored GDT file carries (CONTRACT §7).
type GDTInfo struct {
	RecordType      string    `json:"record_type"`
	Version         *string   `json:"version"`
	SenderID        *string   `json:"sender_id"`
	ReceiverID      *string   `json:"receiver_id"`
	ExaminedAt      *string   `json:"examined_at"`
	ProcedureCode   *string   `json:"procedure_code"`
	Findings        *string   `json:"findings"`
	Tests           []GDTTest `json:"tests"`
	ReferencedFiles []string  `json:"referenced_files"`
}

// Info is the metadata of the file's first record, the examination times read in zone.
func (f GDTFile) Info(zone *time.Location) *GDTInfo {
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
	info := &GDTInfo{Version: opt("9218"), SenderID: opt("8316"), ReceiverID: opt("8315"), ProcedureCode: opt("8402"),
		Tests: []GDTTest{}, ReferencedFiles: []string{}}
	info.RecordType, _ = r.Get("8000")
	if at, ok := examinedAt(r, zone); ok {
		s := at.Format(time.RFC3339)
		info.ExaminedAt = &s
	}
	var findings []string
	for _, fl := range r.Fields {
		switch fl.ID {
		case "6220", "6221", "6227":
			findings = append(findings, fl.Value)
		case "8410": // a test begins
			info.Tests = append(info.Tests, GDTTest{ID: fl.Value})
		case "8411", "8420", "8421":
			if len(info.Tests) == 0 {
				continue
			}
			t := &info.Tests[len(info.Tests)-1]
			switch fl.ID {
			case "8411":
				t.Name = fl.Value
			case "8420":
				t.Value = fl.Value
			case "8421":
				t.Unit = fl.Value
			}
		case "6305":
			info.ReferencedFiles = append(info.ReferencedFiles, path.Base(strings.ReplaceAll(fl.Value, `\`, "/")))
		}
	}
	if len(findings) > 0 {
		joined := strings.Join(findings, "\n")
		info.Findings = &joined
	}
	return info
}

// examinedAt reads 6200 (DDMMYYYY) and 6201 (HHMMSS or HHMM) in zone.
func examinedAt(r GDTRecord, zone *time.Location) (time.Time, bool) {
	day, ok := r.Get("6200")
	if !ok || len(day) != 8 || !allDigits(day) {
		return time.Time{}, false
	}
	clock, _ := r.Get("6201")
	clock += strings.Repeat("0", max(0, 6-len(clock)))
	if !allDigits(clock[:6]) {
		clock = "000000"
	}
	t, err := time.ParseInLocation("02012006150405", day+clock[:6], zone)
	return t, err == nil
}
