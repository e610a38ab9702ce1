package gdt_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain/gdt"
)

var vienna, _ = time.LoadLocation("Europe/Vienna")

// gdtLine is "LLLFFFFvalue" with the length counted over bytes and CR LF.
func gdtLine(field, value string) string {
	return fmt.Sprintf("%03d%s%s\r\n", len(value)+9, field, value)
}

// result6310 is an examination result of patient 02345 with two tests and two images.
var result6310 = gdtLine("8000", "6310") + gdtLine("8100", "00512") + gdtLine("9218", "02.10") + gdtLine("8315", "PRAXIS") +
	gdtLine("8316", "SONO1") + gdtLine("3000", "02345") + gdtLine("3101", "Berger") + gdtLine("6200", "10032026") +
	gdtLine("6201", "091500") + gdtLine("8402", "SONO") + gdtLine("6220", "Leber unauffällig") + gdtLine("6220", "Milz normal groß") +
	gdtLine("8410", "GLU") + gdtLine("8411", "Glucose") + gdtLine("8420", "98") + gdtLine("8421", "mg/dL") +
	gdtLine("8410", "HB") + gdtLine("8411", "Hämoglobin") + gdtLine("8420", "14.1") + gdtLine("8421", "g/dL") +
	gdtLine("6305", `C:\GDT\bilder\SONO_0001.JPG`) + gdtLine("6305", "sono_0002.png")

func TestParseGDTResultWithTestsAndFiles(t *testing.T) {
	t.Parallel()
	f := gdt.Parse([]byte(result6310))
	if len(f.Warnings) != 0 || f.Encoding != "utf-8" || len(f.Records) != 1 {
		t.Fatalf("parse: %+v", f)
	}
	if p := f.Patients(); len(p) != 1 || p[0] != "02345" {
		t.Errorf("patients %q", p)
	}
	info := f.Info(vienna)
	if info.RecordType != "6310" || *info.Version != "02.10" || *info.SenderID != "SONO1" || *info.ReceiverID != "PRAXIS" || *info.ProcedureCode != "SONO" {
		t.Errorf("header: %+v", info)
	}
	if *info.ExaminedAt != "2026-03-10T09:15:00+01:00" {
		t.Errorf("examined_at %s", *info.ExaminedAt)
	}
	if *info.Findings != "Leber unauffällig\nMilz normal groß" {
		t.Errorf("findings %q", *info.Findings)
	}
	if hb := info.Tests[len(info.Tests)-1]; len(info.Tests) != 2 || hb.ID != "HB" || hb.Name != "Hämoglobin" || hb.Value != "14.1" || hb.Unit != "g/dL" {
		t.Errorf("tests %+v", info.Tests)
	}
	if strings.Join(info.ReferencedFiles, ",") != "SONO_0001.JPG,sono_0002.png" {
		t.Errorf("referenced files %v", info.ReferencedFiles)
	}
}

func TestParseGDTEncodingsAndQuirks(t *testing.T) {
	t.Parallel()
	cp437 := "01380006301\r\n0143000456\r\n0163101M\x81ller\r\n0193102Gr\x94\xe1e\r\n"             // ü ö ß in CP437, no 9206
	latin := "01380006301\r\n01092063\r\n0143000456\r\n0163101M\xfcller\r\n0183102Gr\xf6\xdfe\r\n" // ISO-8859-15 named by 9206=3
	for _, c := range []struct {
		name, raw, encoding, last, first string
	}{
		{"CP437 by default", cp437, "cp437", "Größe", "Müller"},
		{"ISO-8859-15 by 9206", latin, "iso-8859-15", "Größe", "Müller"},
		{"UTF-8 when valid", "01380006301\r\n0143000456\r\n0173101Müller\r\n0183102Größe\r\n", "utf-8", "Größe", "Müller"},
	} {
		f := gdt.Parse([]byte(c.raw))
		r := f.Records[0]
		if f.Encoding != c.encoding {
			t.Errorf("%s: encoding %s", c.name, f.Encoding)
		}
		if v, _ := r.Get("3101"); v != c.first {
			t.Errorf("%s: 3101 %q", c.name, v)
		}
		if v, _ := r.Get("3102"); v != c.last {
			t.Errorf("%s: 3102 %q", c.name, v)
		}
	}
	// The quirks of real files: LF, CR, blank lines, 000 and wrong lengths, two records, no final line end, Ctrl-Z.
	quirky := "01380006310\n0000000\n\n0143000456\r0993101Huber\r\n01380006310\r\n0143000789\x1a"
	f := gdt.Parse([]byte(quirky))
	if len(f.Records) != 2 {
		t.Fatalf("records %d: %+v", len(f.Records), f)
	}
	if v, _ := f.Records[1].Get("3000"); v != "789" {
		t.Errorf("the second record's patient %q", v)
	}
	if v, _ := f.Records[0].Get("3101"); v != "Huber" {
		t.Errorf("3101 %q", v)
	}
	if len(f.Warnings) < 2 {
		t.Errorf("the 000 and the wrong lengths are warnings: %v", f.Warnings)
	}
	// A length counted in characters, not bytes, is no warning.
	if f := gdt.Parse([]byte("01380006301\r\n0163101Müller\r\n")); len(f.Warnings) != 0 {
		t.Errorf("a length in characters: %v", f.Warnings)
	}
}

// TestGDTInfoHoldsWhatTheResultHolds: test details and comments (8410–8480),
// result tables (6228) and free categories (6330ff) reach the metadata in a
// shape of their own, from every record; without 6201 the time stays unknown.
func TestGDTInfoHoldsWhatTheResultHolds(t *testing.T) {
	t.Parallel()
	raw := gdtLine("8000", "6310") + gdtLine("3000", "77") + gdtLine("6200", "10032026") +
		gdtLine("8410", "GLU") + gdtLine("8411", "Glucose") + gdtLine("8418", "B") + gdtLine("8420", "180") + gdtLine("8421", "mg/dL") +
		gdtLine("8422", "+") + gdtLine("8460", "nüchtern") + gdtLine("8461", "70") + gdtLine("8462", "99") +
		gdtLine("8470", "Probe nicht nüchtern") + gdtLine("8470", "Kontrolle empfohlen") + gdtLine("8480", "erhöht") +
		gdtLine("6228", "Segment  Wert") + gdtLine("6228", "S1       0.92") +
		gdtLine("6330", "Geräteeinstellung") + gdtLine("6331", "Sonde C5-2") + gdtLine("6331", "Tiefe 16 cm") + gdtLine("6332", "Leer") +
		gdtLine("8000", "6310") + gdtLine("3000", "0077") + gdtLine("8410", "HB") + gdtLine("8420", "14") + gdtLine("6220", "zweiter Befund")
	info := gdt.Parse([]byte(raw)).Info(vienna)
	if info.ExaminedAt != nil || info.ExaminedOn == nil || *info.ExaminedOn != "2026-03-10" {
		t.Errorf("without 6201 the date alone: examined_at %v, examined_on %v", info.ExaminedAt, info.ExaminedOn)
	}
	if info.Records != 2 || len(info.Tests) != 2 || info.Tests[1].ID != "HB" || info.Findings == nil || *info.Findings != "zweiter Befund" {
		t.Fatalf("every record's tests and findings: %+v", info)
	}
	glu := info.Tests[0]
	if *glu.Status != "B" || *glu.LimitIndicator != "+" || *glu.NormalLow != "70" || *glu.NormalHigh != "99" ||
		strings.Join(glu.NormalText, "|") != "nüchtern" || strings.Join(glu.Comments, "|") != "Probe nicht nüchtern|Kontrolle empfohlen" ||
		strings.Join(glu.ResultText, "|") != "erhöht" {
		t.Errorf("test details: %+v", glu)
	}
	if strings.Join(info.ResultTable, "|") != "Segment  Wert|S1       0.92" {
		t.Errorf("result table %q", info.ResultTable)
	}
	if len(info.Categories) != 2 || info.Categories[0].Name != "Geräteeinstellung" || strings.Join(info.Categories[0].Lines, "|") != "Sonde C5-2|Tiefe 16 cm" ||
		info.Categories[1].Name != "Leer" || len(info.Categories[1].Lines) != 0 {
		t.Errorf("categories %+v", info.Categories)
	}
	// Lists are [] in JSON, never null, also for metadata stored before they existed.
	old, err := json.Marshal(gdt.Info{RecordType: "6310", Tests: []gdt.Test{{ID: "X"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"result_table":[]`, `"categories":[]`, `"referenced_files":[]`, `"comments":[]`, `"records":1`, `"examined_on":null`} {
		if !strings.Contains(string(old), want) {
			t.Errorf("%s missing in %s", want, old)
		}
	}
	// A time of four digits is HHMM; a broken one is no time at all.
	for clock, want := range map[string]string{"0915": "2026-03-10T09:15:00+01:00", "091530": "2026-03-10T09:15:30+01:00", "9:15": "", "2561": ""} {
		info := gdt.Parse([]byte(gdtLine("8000", "6310") + gdtLine("6200", "10032026") + gdtLine("6201", clock))).Info(vienna)
		if got := ""; info.ExaminedAt != nil {
			got = *info.ExaminedAt
			if got != want {
				t.Errorf("6201 %q: %s, want %q", clock, got, want)
			}
		} else if want != "" {
			t.Errorf("6201 %q: no time, want %s", clock, want)
		}
	}
}

// gdtQuirks are forms of one file of two records that real exports take:
// each must be read as GDT and its patients checked.
func gdtQuirks(lines ...string) map[string]string {
	join := func(sep string) string { return strings.Join(lines, sep) }
	return map[string]string{
		"CR LF":                   join("\r\n") + "\r\n",
		"LF":                      join("\n") + "\n",
		"CR":                      join("\r") + "\r",
		"mixed line ends":         mixEnds(lines),
		"no final line end":       join("\r\n"),
		"leading blank lines":     "\r\n\n  \r\n" + join("\r\n"),
		"byte-order mark":         "\xef\xbb\xbf" + join("\r\n"),
		"mark then blank lines":   "\xef\xbb\xbf\r\n\r\n" + join("\n"),
		"blank lines between":     join("\r\n\r\n\r\n"),
		"a line that is no field": "GDT-Export Gerät 7\r\n" + join("\r\n"),
		"Ctrl-Z end":              join("\r\n") + "\r\n\x1a",
		"Ctrl-Z between records":  strings.Join(lines[:len(lines)/2], "\r\n") + "\x1a" + strings.Join(lines[len(lines)/2:], "\r\n"),
	}
}

func mixEnds(lines []string) string {
	var sb strings.Builder
	for i, l := range lines {
		sb.WriteString(l + []string{"\r\n", "\n", "\r"}[i%3])
	}
	return sb.String()
}

// field is a GDT line without its line end, with a length that may be wrong.
func field(id, value string) string { return fmt.Sprintf("%03d%s%s", len(value)+9, id, value) }

// TestGDTPatientCheckReadsEveryRecord: a file whose second record names
// another patient is found out, in every form a real file takes, however
// the bytes arrive; wrong lengths (8100 and per line) switch nothing off.
func TestGDTPatientCheckReadsEveryRecord(t *testing.T) {
	t.Parallel()
	ours := int64(2345)
	same := []string{field("8000", "6310"), "9998100000000", field("3000", "02345"), "0993101Berger", field("8000", "6310"), field("3000", "2345")}
	other := []string{field("8000", "6310"), field("8100", "00042"), field("3000", "02345"), field("6220", "Leber"), field("8000", "6310"), "0123000999", field("6220", "fremd")}
	for _, c := range []struct {
		name  string
		lines []string
		other string
	}{{"one patient in two records", same, ""}, {"a second patient in the second record", other, "999"}} {
		for form, raw := range gdtQuirks(c.lines...) {
			if !gdt.LooksLike([]byte(raw)) {
				t.Errorf("%s, %s: not recognised as GDT", c.name, form)
			}
			parsed := gdt.Parse([]byte(raw))
			if len(parsed.Records) != 2 {
				t.Errorf("%s, %s: %d records", c.name, form, len(parsed.Records))
			}
			for _, size := range []int{1, 2, 3, 7, 64, len(raw)} {
				check := gdt.NewPatientCheck(ours)
				for b := []byte(raw); len(b) > 0; b = b[min(size, len(b)):] {
					_, _ = check.Write(b[:min(size, len(b))])
				}
				got, found := check.OtherPatient()
				if found != (c.other != "") || got != c.other {
					t.Errorf("%s, %s, written %d bytes at a time: other patient %q %v, want %q", c.name, form, size, got, found, c.other)
				}
			}
		}
	}
	// The patient of a record far past the first megabyte is read too.
	long := field("8000", "6310") + "\r\n" + field("3000", "2345") + "\r\n" + strings.Repeat(field("6228", strings.Repeat("x", 60))+"\r\n", 40000) +
		field("8000", "6310") + "\r\n" + field("3000", "5432") + "\r\n"
	check := gdt.NewPatientCheck(ours)
	_, _ = check.Write([]byte(long))
	if got, found := check.OtherPatient(); !found || got != "5432" {
		t.Errorf("a patient %d bytes into the file: %q %v", len(long)-20, got, found)
	}
	// An overlong 3000 line is still a 3000 line, and no patient number.
	check = gdt.NewPatientCheck(ours)
	_, _ = check.Write([]byte(field("8000", "6310") + "\n" + "9993000" + "2345" + strings.Repeat("0", 100<<10)))
	if _, found := check.OtherPatient(); !found {
		t.Error("an overlong 3000 line passed as the patient")
	}
}

func TestParseGDTNeverFails(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"", "\x1a", "garbage", "0", "\xff\xfe\x00", "0000000", strings.Repeat("8000", 1000)} {
		f := gdt.Parse([]byte(raw))
		if f.Info(time.UTC) != nil && len(f.Records) == 0 {
			t.Errorf("%q: info without a record", raw)
		}
	}
}

// gdtSeeds are the fuzzers' seeds: results of one and of several records
// (one patient and two), in every quirky form.
func gdtSeeds() [][]byte {
	seeds := [][]byte{[]byte(result6310), []byte("01380006301\r\n01092062\r\n0143000456\r\n")}
	two := []string{field("8000", "6310"), field("3000", "2345"), field("8000", "6310"), field("3000", "999")}
	for _, lines := range [][]string{two, two[:2]} {
		for _, raw := range gdtQuirks(lines...) {
			seeds = append(seeds, []byte(raw))
		}
	}
	return seeds
}

func FuzzParseGDT(f *testing.F) {
	for _, s := range gdtSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		g := gdt.Parse(raw)
		if info := g.Info(time.UTC); info != nil {
			if _, err := json.Marshal(info); err != nil {
				t.Fatal(err)
			}
		}
		_ = g.Patients()
	})
}

// FuzzLooksLikeGDT: recognition and parsing agree. What is recognised parses
// into records of which the first begins with 8000, whatever comes before it.
func FuzzLooksLikeGDT(f *testing.F) {
	for _, s := range gdtSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !gdt.LooksLike(raw) {
			return
		}
		g := gdt.Parse(raw)
		if len(g.Records) == 0 || g.Records[0].Fields[0].ID != "8000" {
			t.Fatalf("recognised as GDT, parsed as %+v", g.Records)
		}
	})
}

// FuzzGDTPatientCheck: the streaming check finds another patient exactly when
// the parsed file names one, however the bytes are cut into writes.
func FuzzGDTPatientCheck(f *testing.F) {
	for _, s := range gdtSeeds() {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, raw []byte, cut uint8) {
		ours := int64(2345)
		want := false
		for _, p := range gdt.Parse(raw).Patients() {
			want = want || !gdt.IsPatient(p, ours)
		}
		check := gdt.NewPatientCheck(ours)
		size := int(cut%64) + 1
		for b := raw; len(b) > 0; b = b[min(size, len(b)):] {
			_, _ = check.Write(b[:min(size, len(b))])
		}
		if _, found := check.OtherPatient(); found != want {
			t.Fatalf("streaming check %v, parsed file %v", found, want)
		}
	})
}

// BenchmarkParseGDT reads a 6310 result of a few hundred lines: MB/s of GDT read and its metadata taken.
func BenchmarkParseGDT(b *testing.B) {
	var sb strings.Builder
	for range 20 {
		sb.WriteString(result6310)
	}
	raw := []byte(sb.String())
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		f := gdt.Parse(raw)
		_ = f.Info(vienna)
	}
}

// BenchmarkParseGDTLatin1 is the same for an ISO-8859-15 file, decoded through x/text's charmap.
func BenchmarkParseGDTLatin1(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("01380006310\r\n01092063\r\n")
	for range 400 {
		sb.WriteString("0163101M\xfcller\r\n0183102Gr\xf6\xdfe\r\n")
	}
	raw := []byte(sb.String())
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		_ = gdt.Parse(raw)
	}
}

// TestLooksLike: a record type line after what the parser skips is GDT;
// anything else, or a NUL byte, is not.
func TestLooksLike(t *testing.T) {
	t.Parallel()
	if !gdt.LooksLike([]byte("01380006310\r\n")) {
		t.Error("GDT record type line not recognised")
	}
	for _, s := range []string{"\r\n\r\n01380006310", "\xef\xbb\xbf\n01380006310\n", "Export\r01380006310", "9998000"} {
		if !gdt.LooksLike([]byte(s)) {
			t.Errorf("%q not recognised: what the parser skips, recognition skips", s)
		}
	}
	for _, s := range []string{"", "0138", "%PDF-1.7", "abc80006310", "01360016310", "\n\n01360016310\r\n01380006310", "0138000\x006310"} {
		if gdt.LooksLike([]byte(s)) {
			t.Errorf("%q taken for GDT", s)
		}
	}
}
