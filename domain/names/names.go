// Package names reads people's names as German and Austrian name lists do:
// the folded form a search compares (case, diacritics and the DIN 5007-2
// spellings ä=ae, ö=oe, ü=ue, ß=ss made one), the words a name is found by,
// and its Kölner Phonetik code. Identifiers are never read here: an SVNR or
// a KVNR is compared as written.
package names

import (
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxLength is how much of a value Fold and Words read (a name field holds
// at most 100 characters; a search value is cut to this).
const MaxLength = 200

// casers are case folders for Fold: a cases.Caser keeps state while it
// runs, so each call takes one of its own, and building one a call cost
// more than the folding.
var casers = sync.Pool{New: func() any { c := cases.Fold(); return &c }}

// isMark is a combining mark, which Fold takes off decomposed letters:
// é → e, ü → u.
func isMark(r rune) rune {
	if unicode.Is(unicode.Mn, r) {
		return -1
	}
	return r
}

// digraphs are the DIN 5007-2 spellings of the umlauts, read as the vowel
// alone: after folding, Müller, Mueller and Muller are one key.
var digraphs = strings.NewReplacer("ae", "a", "oe", "o", "ue", "u")

// Fold is the form a name is compared in: full Unicode case folding (ß and
// ẞ become ss, which strings.ToLower leaves alone), diacritics removed, the
// umlauts' two-letter spellings read as the vowel (ae → a, oe → o, ue → u),
// and every run of characters that are neither letters nor digits (spaces,
// hyphens, apostrophes, commas) one space, none at either end.
//
// So "Müller", "MÜLLER", "Mueller" and "muller" are all "muller",
// "Straße" is "strasse", "Müller-Lüdenscheidt" is "muller ludenscheidt".
// The digraph rule is read everywhere, so Michael and Michal fold alike: a
// search finds a little more, never less. Fold of a prefix of a name is a
// prefix of the name's Fold.
func Fold(s string) string {
	if len(s) > MaxLength*4 {
		s = s[:MaxLength*4]
	}
	folded := s
	if !isASCII(s) { // ASCII folds by its letters' case alone, below; it has no marks
		c := casers.Get().(*cases.Caser)
		folded = c.String(s)
		casers.Put(c)
		folded = norm.NFC.String(strings.Map(isMark, norm.NFD.String(folded)))
	}
	var b strings.Builder
	b.Grow(len(folded))
	space := false
	for _, r := range folded {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
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
	return digraphs.Replace(b.String())
}

// isASCII is whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Words are the folded parts a name is found by: each word of it
// ("Müller-Lüdenscheidt": muller, ludenscheidt), and where apostrophes
// join letters, the joined word too ("O'Brien": o, brien, obrien). No word
// is listed twice.
func Words(s string) []string { return words(s, Fold(s)) }

// Name is what a search keeps of a name: its Fold, its Words and its
// PhoneticWords, folding it once for all three.
func Name(s string) (folded string, parts, codes []string) {
	folded = Fold(s)
	return folded, words(s, folded), phoneticWords(folded)
}

// words are Words of s, whose Fold is folded.
func words(s, folded string) []string {
	var out []string
	add := func(w string) {
		for _, have := range out {
			if have == w {
				return
			}
		}
		out = append(out, w)
	}
	for _, w := range strings.Fields(folded) {
		add(w)
	}
	if strings.ContainsAny(s, "'’`´") {
		joined := strings.Map(func(r rune) rune {
			if strings.ContainsRune("'’`´", r) {
				return -1
			}
			return r
		}, s)
		for _, w := range strings.Fields(Fold(joined)) {
			add(w)
		}
	}
	return out
}

// Phonetic is the Kölner Phonetik code of s (Postel 1969; as Apache
// commons-codec's ColognePhonetic computes it): letters only, read after
// folding, each coded by its neighbours, repeated codes once, and 0 only
// at the start. "Müller-Lüdenscheidt" is 65752682; Meier, Meyer, Maier,
// Mayr and Mayer are all 67. A value without letters has no code ("").
func Phonetic(s string) string {
	letters := make([]byte, 0, len(s))
	for _, r := range Fold(s) {
		if r >= 'a' && r <= 'z' {
			letters = append(letters, byte(r-'a'+'A'))
		}
	}
	out := make([]byte, 0, len(letters)+2)
	last := byte('/') // the last code: none yet
	var lastChar byte
	for i, c := range letters {
		var next byte
		if i+1 < len(letters) {
			next = letters[i+1]
		}
		var code byte
		switch {
		case strings.IndexByte("AEIJOUY", c) >= 0:
			code = '0'
		case c == 'H':
			code = '-'
		case c == 'B', c == 'P' && next != 'H':
			code = '1'
		case (c == 'D' || c == 'T') && strings.IndexByte("CSZ", next) < 0:
			code = '2'
		case strings.IndexByte("FPVW", c) >= 0:
			code = '3'
		case strings.IndexByte("GKQ", c) >= 0:
			code = '4'
		case c == 'X' && strings.IndexByte("CKQ", lastChar) < 0:
			if last != '4' {
				out = append(out, '4')
			}
			code, last = '8', '4'
		case c == 'S', c == 'Z':
			code = '8'
		case c == 'C':
			switch {
			case last == '/':
				code = '8'
				if strings.IndexByte("AHKLOQRUX", next) >= 0 {
					code = '4'
				}
			case strings.IndexByte("SZ", lastChar) >= 0 || strings.IndexByte("AHOUKQX", next) < 0:
				code = '8'
			default:
				code = '4'
			}
		case c == 'D', c == 'T', c == 'X':
			code = '8'
		case c == 'L':
			code = '5'
		case c == 'M', c == 'N':
			code = '6'
		case c == 'R':
			code = '7'
		}
		if code != '-' && code != last && (code != '0' || last == '/') {
			out = append(out, code)
		}
		last, lastChar = code, c
	}
	return string(out)
}

// PhoneticWords are the codes of a name's words, each once (the words
// without letters have none).
func PhoneticWords(s string) []string { return phoneticWords(Fold(s)) }

// phoneticWords are PhoneticWords of the name whose Fold is folded.
func phoneticWords(folded string) []string {
	var out []string
	for _, w := range strings.Fields(folded) {
		code := Phonetic(w)
		if code == "" {
			continue
		}
		dup := false
		for _, have := range out {
			dup = dup || have == code
		}
		if !dup {
			out = append(out, code)
		}
	}
	return out
}
