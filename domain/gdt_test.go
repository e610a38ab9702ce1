package domain_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

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
	f := domain.ParseGDT([]byte(result6310))
	if len(f.Warnings) != 0 || f.Encoding != "utf-8" || len(f.Records) != 1 {
		t.Fatalf("parse: %+v", f)
	}
	if p, _ := f.Patient(); p != "02345" {
		t.Errorf("patient %q", p)
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
	if len(info.Tests) != 2 || info.Tests[1] != (domain.GDTTest{ID: "HB", Name: "Hämoglobin", Value: "14.1", Unit: "g/dL"}) {
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
		f := domain.ParseGDT([]byte(c.raw))
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
	f := domain.ParseGDT([]byte(quirky))
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
	if f := domain.ParseGDT([]byte("01380006301\r\n0163101Müller\r\n")); len(f.Warnings) != 0 {
		t.Errorf("a length in characters: %v", f.Warnings)
	}
}

func TestParseGDTNeverFails(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"", "\x1a", "garbage", "0", "\xff\xfe\x00", "0000000", strings.Repeat("8000", 1000)} {
		f := domain.ParseGDT([]byte(raw))
		if f.Info(time.UTC) != nil && len(f.Records) == 0 {
			t.Errorf("%q: info without a record", raw)
		}
	}
}

func FuzzParseGDT(f *testing.F) {
	f.Add([]byte(result6310))
	f.Add([]byte("01380006301\r\n01092062\r\n0143000456\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		g := domain.ParseGDT(raw)
		_ = g.Info(time.UTC)
		_, _ = g.Patient()
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
		f := domain.ParseGDT(raw)
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
		_ = domain.ParseGDT(raw)
	}
}
