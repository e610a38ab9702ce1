package gdt_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/praxis-health/praxis/domain/gdt"
)

func examination(version, encoding string) gdt.Message {
	return gdt.Message{Record: gdt.Examination, Version: version, Encoding: encoding,
		Receiver: "EKG1", Sender: "PRAXIS",
		Patient:     gdt.Patient{ID: 2345, LastName: "Müller", FirstName: "Jürgen", BirthDate: "1961-03-07", Sex: "male"},
		OrderNumber: "17", OrderUUID: "019bc0e2-1280-781f-a8e2-5d940ed90475", Procedure: "EKG04", Tests: []string{"RUHE", "BELAST"}}
}

func TestGDTWriterWritesWhatTheReaderReads(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ version, encoding, charset string }{
		{gdt.V21, gdt.CP437, "2"},
		{gdt.V21, gdt.Latin9, "3"},
		{gdt.V30, gdt.Latin9, "3"},
	} {
		w, err := examination(c.version, c.encoding).Encode()
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Approximated) != 0 {
			t.Errorf("%s/%s: approximated %v", c.version, c.encoding, w.Approximated)
		}
		checkLines(t, w.Raw)
		f := gdt.Parse(w.Raw)
		if len(f.Records) != 1 || len(f.Warnings) != 0 || f.Encoding != c.encoding {
			t.Fatalf("%s/%s: %+v", c.version, c.encoding, f)
		}
		r := f.Records[0]
		want := map[string]string{"8000": "6302", "8315": "EKG1", "8316": "PRAXIS", "9206": c.charset, "3000": "2345",
			"3101": "Müller", "3102": "Jürgen", "3103": "07031961", "3110": "1", "8310": "17", "8402": "EKG04"}
		for id, v := range want {
			if got, _ := r.Get(id); got != v {
				t.Errorf("%s/%s: %s = %q, want %q", c.version, c.encoding, id, got, v)
			}
		}
		if got := strings.Join(r.All("8410"), ","); got != "RUHE,BELAST" {
			t.Errorf("8410 %s", got)
		}
		uuid, has := r.Get("8314")
		if (c.version == gdt.V30) != has || (has && uuid != "019bc0e2-1280-781f-a8e2-5d940ed90475") {
			t.Errorf("%s: 8314 %q %v", c.version, uuid, has)
		}
	}
}

// checkLines holds every line's declared length against its bytes (CR LF
// counted) and 8100 against the record's.
func checkLines(t *testing.T, raw []byte) {
	t.Helper()
	text := string(raw)
	if !strings.HasSuffix(text, "\r\n") {
		t.Fatalf("no final CR LF: %q", text)
	}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n") {
		n, err := strconv.Atoi(line[:3])
		if err != nil || n != len(line)+2 {
			t.Errorf("line %q declares %s, has %d bytes", line, line[:3], len(line)+2)
		}
		if line[3:7] == "8100" {
			if total, _ := strconv.Atoi(line[7:]); total != len(raw) {
				t.Errorf("8100 %d, the record has %d bytes", total, len(raw))
			}
		}
	}
}

func TestGDTWriterApproximatesWhatTheEncodingLacks(t *testing.T) {
	t.Parallel()
	m := examination(gdt.V21, gdt.CP437)
	m.Patient.LastName, m.Patient.FirstName = "Wałęsa", "Œdipe\r\nX"
	w, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	r := gdt.Parse(w.Raw).Records[0]
	last, _ := r.Get("3101")
	first, _ := r.Get("3102")
	if last != "Walesa" || first != "OEdipe  X" {
		t.Errorf("3101 %q, 3102 %q", last, first)
	}
	if strings.Join(w.Approximated, ",") != "3101,3102" {
		t.Errorf("approximated %v", w.Approximated)
	}
	// ISO 8859-15 has Œ; CP437 has neither.
	m.Encoding = gdt.Latin9
	if w, _ := m.Encode(); strings.Join(w.Approximated, ",") != "3101" {
		t.Errorf("latin-9 approximated %v", w.Approximated)
	}
}

func TestGDTWriterRecords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		record, version string
		has, lacks      []string
	}{
		{gdt.MasterData, gdt.V21, []string{"3000", "3101", "3102", "3103"}, []string{"8310", "8402"}},
		{gdt.Cancel, gdt.V30, []string{"3000", "3101", "8310", "8314", "8402"}, nil},
		{gdt.ShowResult, gdt.V21, []string{"3000", "6200", "6201", "8310", "8402"}, []string{"3110", "8314"}},
	} {
		m := examination(c.version, gdt.Latin9)
		m.Record, m.ExaminedOn, m.ExaminedAt = c.record, "26112026", "101500"
		w, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		checkLines(t, w.Raw)
		r := gdt.Parse(w.Raw).Records[0]
		if rt, _ := r.Get("8000"); rt != c.record {
			t.Errorf("8000 %s", rt)
		}
		for _, id := range c.has {
			if _, ok := r.Get(id); !ok {
				t.Errorf("%s lacks %s", c.record, id)
			}
		}
		for _, id := range c.lacks {
			if _, ok := r.Get(id); ok {
				t.Errorf("%s has %s", c.record, id)
			}
		}
	}
	for _, bad := range []gdt.Message{
		{Record: gdt.Examination, Version: gdt.V30, Encoding: gdt.CP437},
		{Record: gdt.Examination, Version: "3.5", Encoding: gdt.Latin9},
		{Record: "6310", Version: gdt.V21, Encoding: gdt.Latin9},
	} {
		if _, err := bad.Encode(); err == nil {
			t.Errorf("%+v encoded", bad)
		}
	}
	long := examination(gdt.V21, gdt.Latin9)
	long.Comment = strings.Repeat("x", 2000)
	w, _ := long.Encode()
	checkLines(t, w.Raw)
}

// FuzzGDTWriterRoundTrip holds the writer to the reader: whatever it writes
// from values its encoding holds reads back through gdt.Parse to the same
// fields (line breaks and trailing spaces, which no reader keeps, aside),
// and a value it cannot hold is named in Approximated.
func FuzzGDTWriterRoundTrip(f *testing.F) {
	f.Add("Müller", "Jürgen", "EKG04", "RUHE", "Befund: gut", "17", uint8(0))
	f.Add("Wałęsa", "Œdipe", "SONO01", "", "", "9999999", uint8(1))
	f.Add("ÄŠ", " x ", "ab", "Größe", "€", "1", uint8(2))
	f.Fuzz(func(t *testing.T, last, first, procedure, test, comment, number string, which uint8) {
		for _, s := range []string{last, first, procedure, test, comment, number} {
			if !utf8.ValidString(s) || len(s) > 300 {
				return
			}
		}
		versions := [][2]string{{gdt.V21, gdt.CP437}, {gdt.V21, gdt.Latin9}, {gdt.V30, gdt.Latin9}}
		v := versions[int(which)%len(versions)]
		m := gdt.Message{Record: gdt.Examination, Version: v[0], Encoding: v[1], Receiver: "DEV", Sender: "PRAXIS",
			Patient:     gdt.Patient{ID: 42, LastName: last, FirstName: first},
			OrderNumber: number, OrderUUID: "019bc0e2-1280-781f-a8e2-5d940ed90475", Procedure: procedure, Tests: []string{test}, Comment: comment}
		w, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		checkLines(t, w.Raw)
		file := gdt.Parse(w.Raw)
		if len(file.Records) != 1 || len(file.Warnings) != 0 {
			t.Fatalf("%q: %+v", w.Raw, file)
		}
		r := file.Records[0]
		for id, sent := range map[string]string{"3101": last, "3102": first, "8402": procedure, "8410": test, "6227": comment, "8310": number} {
			want := strings.TrimRight(strings.Map(func(r rune) rune {
				if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
					return ' '
				}
				return r
			}, sent), " ")
			got, ok := r.Get(id)
			approximated := false
			for _, a := range w.Approximated {
				approximated = approximated || a == id
			}
			switch {
			case want == "" && ok:
				t.Errorf("%s: written though empty: %q", id, got)
			case want != "" && !approximated && got != want:
				t.Errorf("%s: sent %q, read %q (%s)", id, sent, got, v[1])
			case approximated && utf8.RuneCountInString(got) == 0:
				t.Errorf("%s: approximated to nothing", id)
			}
		}
		if p := file.Patients(); len(p) != 1 || p[0] != "42" {
			t.Errorf("patients %v", p)
		}
	})
}
