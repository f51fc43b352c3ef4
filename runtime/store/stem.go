package store

import "strings"

// Stem returns the stem of a lower-cased English word, so that its
// inflections share one search term: "cats" and "cat" → "cat", "hiking",
// "hikes", "hiked" and "hike" → "hike", "cities" and "city" → "citi". It is
// a light stemmer: steps 1a, 1b and 1c of Porter's English (Snowball, "Porter2")
// stemmer, which undo plurals, -ed, -ing and a final -y, then its rule for a
// final -e, so that "dance" and "dancing" agree; derivational suffixes
// (-ness, -ation, -ful, …) are left alone, as are a few common irregular
// forms, mapped to their base first ("children" → "child", "mice" → "mouse",
// "ran" → "run"). Stems are search terms, not words: "citi" is never shown.
// A word that is not plain ASCII letters (digits, accents, other scripts),
// or of fewer than three letters, is its own stem.
func Stem(word string) string {
	if len(word) < 3 || !asciiLower(word) {
		return word
	}
	switch word[len(word)-1] {
	case 's', 'd', 'g', 'y', 'e':
	default:
		// No rule applies to other endings (-s, -ed, -ing, -edly, -ingly,
		// -y, -e): only an irregular form can change.
		if _, ok := irregular[word]; !ok {
			return word
		}
	}
	if base, ok := irregular[word]; ok {
		word = base
		if len(word) < 3 {
			return word
		}
	}
	if s, ok := stemExceptions[word]; ok {
		return s
	}
	w := []byte(word)
	// Porter2 treats y as a consonant at the start of a word and after a
	// vowel; such a y is written Y while stemming.
	for i, c := range w {
		if c == 'y' && (i == 0 || isVowel(w[i-1])) {
			w[i] = 'Y'
		}
	}
	r1, r2 := regions(w)
	w = step1a(w)
	if !stemInvariants[string(w)] {
		w = step1b(w, r1)
		w = step1c(w)
		w = finalE(w, r1, r2)
	}
	for i, c := range w {
		if c == 'Y' {
			w[i] = 'y'
		}
	}
	if string(w) == word {
		return word
	}
	return string(w)
}

func asciiLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// isVowel reports whether c is a vowel for Porter2 (a, e, i, o, u, y; a Y
// marked as a consonant is not).
func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// regions returns the starts of Porter2's R1 (after the first non-vowel that
// follows a vowel) and R2 (the same rule applied within R1).
func regions(w []byte) (r1, r2 int) {
	r1 = len(w)
	for _, p := range []string{"gener", "commun", "arsen"} {
		if strings.HasPrefix(string(w), p) {
			r1 = len(p)
		}
	}
	if r1 == len(w) {
		r1 = regionAfter(w, 0)
	}
	return r1, regionAfter(w, r1)
}

func regionAfter(w []byte, from int) int {
	for i := from + 1; i < len(w); i++ {
		if !isVowel(w[i]) && isVowel(w[i-1]) {
			return i + 1
		}
	}
	return len(w)
}

// shortSyllableAt reports whether w[:end] ends in a short syllable: a vowel
// followed by a non-vowel other than w, x or Y and preceded by a non-vowel,
// or a vowel at the start followed by a non-vowel.
func shortSyllableAt(w []byte, end int) bool {
	switch {
	case end == 2:
		return isVowel(w[0]) && !isVowel(w[1])
	case end >= 3:
		c := w[end-1]
		return !isVowel(w[end-3]) && isVowel(w[end-2]) && !isVowel(c) && c != 'w' && c != 'x' && c != 'Y'
	}
	return false
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}

// step1a undoes plurals: -sses → -ss, -ies/-ied → -i (-ie after one letter),
// -s → "" when a vowel comes before the letter preceding it (gaps → gap, but
// gas and this stay).
func step1a(w []byte) []byte {
	s := string(w)
	switch {
	case strings.HasSuffix(s, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(s, "ied"), strings.HasSuffix(s, "ies"):
		if len(w) > 4 {
			return w[:len(w)-2]
		}
		return w[:len(w)-1]
	case strings.HasSuffix(s, "us"), strings.HasSuffix(s, "ss"):
		return w
	case strings.HasSuffix(s, "s"):
		if len(w) >= 3 && hasVowel(w[:len(w)-2]) {
			return w[:len(w)-1]
		}
	}
	return w
}

// step1b undoes -ed, -ing (and -edly, -ingly, -eed, -eedly): hiking → hike,
// running → run, created → create.
func step1b(w []byte, r1 int) []byte {
	s := string(w)
	for _, suf := range []string{"eedly", "eed"} {
		if strings.HasSuffix(s, suf) {
			if len(w)-len(suf) >= r1 {
				return w[:len(w)-len(suf)+2]
			}
			return w
		}
	}
	for _, suf := range []string{"ingly", "edly", "ing", "ed"} {
		if !strings.HasSuffix(s, suf) {
			continue
		}
		stem := w[:len(w)-len(suf)]
		if !hasVowel(stem) {
			return w
		}
		st := string(stem)
		switch {
		case strings.HasSuffix(st, "at"), strings.HasSuffix(st, "bl"), strings.HasSuffix(st, "iz"):
			return append(stem, 'e')
		case doubleEnding(stem):
			return stem[:len(stem)-1]
		case shortWord(stem, r1):
			return append(stem, 'e')
		}
		return stem
	}
	return w
}

// doubleEnding reports whether w ends in bb, dd, ff, gg, mm, nn, pp, rr or tt.
func doubleEnding(w []byte) bool {
	n := len(w)
	if n < 2 || w[n-1] != w[n-2] {
		return false
	}
	return strings.IndexByte("bdfgmnprt", w[n-1]) >= 0
}

// shortWord reports whether w ends in a short syllable and has no R1.
func shortWord(w []byte, r1 int) bool {
	return r1 >= len(w) && shortSyllableAt(w, len(w))
}

// step1c turns a final y after a consonant that is not the first letter into
// i: cry → cri (as cries → cri), but by and say stay.
func step1c(w []byte) []byte {
	n := len(w)
	if n > 2 && (w[n-1] == 'y' || w[n-1] == 'Y') && !isVowel(w[n-2]) {
		w[n-1] = 'i'
	}
	return w
}

// finalE drops a final e in R2, or in R1 when no short syllable precedes
// it: dance → danc (as dancing → danc), while hike and love keep theirs.
func finalE(w []byte, r1, r2 int) []byte {
	n := len(w)
	if n == 0 || w[n-1] != 'e' {
		return w
	}
	if n-1 >= r2 || (n-1 >= r1 && !shortSyllableAt(w, n-1)) {
		return w[:n-1]
	}
	return w
}

// irregular maps common irregular plurals and past forms to their base word.
var irregular = map[string]string{
	"children": "child", "men": "man", "women": "woman", "people": "person",
	"mice": "mouse", "geese": "goose", "feet": "foot", "teeth": "tooth",
	"wives": "wife", "knives": "knife", "wolves": "wolf", "halves": "half",
	"shelves": "shelf", "loaves": "loaf", "thieves": "thief",
	"went": "go", "gone": "go", "goes": "go", "ran": "run", "swam": "swim",
	"ate": "eat", "eaten": "eat", "bought": "buy", "brought": "bring",
	"thought": "think", "taught": "teach", "caught": "catch", "made": "make",
	"took": "take", "taken": "take", "saw": "see", "seen": "see",
	"gave": "give", "given": "give", "wrote": "write", "written": "write",
	"flew": "fly", "flown": "fly", "drove": "drive", "driven": "drive",
	"rode": "ride", "ridden": "ride", "sang": "sing", "sung": "sing",
	"began": "begin", "begun": "begin", "met": "meet", "kept": "keep",
	"slept": "sleep", "felt": "feel", "lost": "lose", "won": "win",
	"built": "build", "sent": "send", "spent": "spend", "told": "tell",
	"sold": "sell", "found": "find", "heard": "hear", "paid": "pay",
	"said": "say", "got": "get", "gotten": "get", "knew": "know",
	"known": "know", "grew": "grow", "grown": "grow", "drank": "drink",
	"drunk": "drink", "fought": "fight",
}

// stemExceptions are Porter2's exceptional forms, and words its step 1 would
// merge with unrelated ones ("morning" with "morn", "evening" with "even").
var stemExceptions = map[string]string{
	"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
	"sky": "sky", "news": "news", "atlas": "atlas", "cosmos": "cosmos", "bias": "bias",
	"morning": "morning", "evening": "evening", "nothing": "nothing",
	"something": "something", "anything": "anything", "everything": "everything",
	"during": "during", "ceiling": "ceiling",
}

// stemInvariants are left as step 1a leaves them (Porter2).
var stemInvariants = map[string]bool{
	"inning": true, "outing": true, "canning": true, "herring": true,
	"earring": true, "proceed": true, "exceed": true, "succeed": true,
}
