package names_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/praxis-health/praxis/domain/names"
)

// referenceFold is Fold as it was first written (x/text's case folder and
// a normalization chain built for every call): the index a store already
// holds was written by it, so Fold must not answer otherwise.
func referenceFold(s string) string {
	if len(s) > names.MaxLength*4 {
		s = s[:names.MaxLength*4]
	}
	folded := cases.Fold().String(s)
	if plain, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), folded); err == nil {
		folded = plain
	}
	var b strings.Builder
	space := false
	for _, r := range folded {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return strings.NewReplacer("ae", "a", "oe", "o", "ue", "u").Replace(b.String())
}

// TestFoldIsTheReference: Fold answers as the reference does for names of
// the lists, for every script and mark the pieces below hold, and for
// 20,000 strings drawn from them (invalid UTF-8 among them); Name, which
// folds once, answers Fold, Words and PhoneticWords.
func TestFoldIsTheReference(t *testing.T) {
	pieces := []string{"Müller", "MÜLLER", "Mueller", "Straße", "STRAẞE", "Goethe", "José", "O'Brien", "Anna-Maria",
		"Ærø", "Łukasz", "İstanbul", "ΣΊΣΥΦΟΣ", "Ольга", "한국", "ﬀ", "Å", "e\u0301", "\u0301", "ǅ", "Ⅻ", "٣",
		"Zoë", "Ğ", "ĳ", "ǈ", "ﬁ", "ß", "ẞ", "Ä", "ae", "UE", "Oe", " ", "-", ",", "’", "9", "\xff", "\xc3", "Kelvin\u212a"}
	rnd := rand.New(rand.NewPCG(1, 2))
	check := func(s string) {
		if got, want := names.Fold(s), referenceFold(s); got != want {
			t.Errorf("Fold(%q) = %q, the reference %q", s, got, want)
		}
		if folded, parts, codes := names.Name(s); folded != names.Fold(s) || !slices.Equal(parts, names.Words(s)) || !slices.Equal(codes, names.PhoneticWords(s)) {
			t.Errorf("Name(%q) = %q %q %q, not Fold, Words and PhoneticWords", s, folded, parts, codes)
		}
	}
	for _, p := range pieces {
		check(p)
	}
	for range 20000 {
		var b strings.Builder
		for range 1 + rnd.IntN(6) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		check(b.String())
	}
	check(strings.Repeat("Müller ", 200))
}
