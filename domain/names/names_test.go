package names_test

import (
	"slices"
	"testing"

	"github.com/praxis-health/praxis/domain/names"
)

func TestFoldReadsNamesAsNameListsDo(t *testing.T) {
	for in, want := range map[string]string{
		"Müller":              "muller",
		"MÜLLER":              "muller",
		"Mueller":             "muller",
		"muller":              "muller",
		"Straße":              "strasse",
		"STRASSE":             "strasse",
		"STRAẞE":              "strasse",
		"Göthe":               "gothe",
		"Goethe":              "gothe",
		"Bäcker":              "backer",
		"Baecker":             "backer",
		"José":                "jose",
		"Müller-Lüdenscheidt": "muller ludenscheidt",
		"O'Brien":             "o brien",
		"  Anna   Maria ":     "anna maria",
		"Müller, Anna":        "muller anna",
		"":                    "",
		"---":                 "",
	} {
		if got := names.Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFoldOfAPrefixIsAPrefix(t *testing.T) {
	for _, name := range []string{"Müller-Lüdenscheidt", "Sauer", "Goethe", "Straße", "Überreiter", "Samuel", "O'Brien"} {
		full := names.Fold(name)
		for i := range []rune(name) {
			p := string([]rune(name)[:i])
			if f := names.Fold(p); len(f) > len(full) || full[:len(f)] != f {
				t.Errorf("Fold(%q) = %q is not a prefix of Fold(%q) = %q", p, f, name, full)
			}
		}
	}
}

func TestWordsFindEachPart(t *testing.T) {
	for in, want := range map[string][]string{
		"Müller-Lüdenscheidt": {"muller", "ludenscheidt"},
		"O'Brien":             {"o", "brien", "obrien"},
		"Anna Anna":           {"anna"},
		"":                    nil,
	} {
		if got := names.Words(in); !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPhoneticIsKoelnerPhonetik(t *testing.T) {
	for in, want := range map[string]string{
		"Müller-Lüdenscheidt": "65752682", // commons-codec's vector
		"Meier":               "67",
		"Meyer":               "67",
		"Maier":               "67",
		"Mayr":                "67",
		"Mayer":               "67",
		"Müller":              "657",
		"Mueller":             "657",
		"Schmidt":             "862",
		"Schmitt":             "862",
		"Wikipedia":           "3412",
		"Christoph":           "47823",
		"Xaver":               "4837",
		"Cäsar":               "487",
		"Celle":               "85",
		"Uebel":               "015",
		"":                    "",
		"123":                 "",
	} {
		if got := names.Phonetic(in); got != want {
			t.Errorf("Phonetic(%q) = %q, want %q", in, got, want)
		}
	}
	if got := names.PhoneticWords("Müller-Lüdenscheidt"); !slices.Equal(got, []string{"657", "52682"}) {
		t.Errorf("PhoneticWords = %q", got)
	}
}
