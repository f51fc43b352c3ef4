package store

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenize splits text into lower-cased search terms; a Put indexes the
// terms of an item's text and a search ranks items by the terms they share
// with the query's, so both go through Tokenize.
//
// Runs of letters and digits form words; each word is followed by its stem
// when that differs (see Stem: "cats" → "cats", "cat"; "hiking" → "hiking",
// "hike"), so that a word matches its other inflections while the exact form
// still scores higher. Runs of Chinese or Japanese characters (Han,
// Hiragana, Katakana), which are written without spaces, are split into
// overlapping character bigrams ("東京都" → "東京", "京都"), the usual way to
// make such text searchable without a dictionary, and each Han character of
// the run is a term of its own too, since one character is often a word
// ("猫を飼う" and "猫について" share "猫" but no bigram); kana characters,
// mostly grammatical endings and particles, and a few very frequent
// function characters (hanStopChars) are not. A CJK run of one character is
// one term. Full-width ASCII letters and digits are folded to their ASCII
// forms.
func Tokenize(text string) []string {
	return ExpandSurfaceTerms(surfaceTerms(text))
}

// ExpandSurfaceTerms adds to surface terms (words, and the bigrams and
// single-character runs of CJK text, in text order) the terms Tokenize
// derives from them: the stems of words and the Han characters of bigrams.
// Tokenize(text) is ExpandSurfaceTerms of text's surface terms, so a store
// that kept only the surface terms of its items (as stores did before stems
// and Han characters were indexed) gets, by expanding them when it reads
// them, the terms Tokenize gives today, and such items match stemmed and
// single-character queries without being rewritten. A run's characters are
// recovered from its chain of bigrams (each starts with the character the
// previous one ends with); two runs that happen to chain ("東京、京都") read
// as one, which counts their shared character once.
func ExpandSurfaceTerms(surface []string) []string {
	out := make([]string, 0, len(surface)+len(surface)/2)
	for i, t := range surface {
		out = append(out, t)
		first, size := utf8.DecodeRuneInString(t)
		if !isCJK(first) {
			if s := Stem(t); s != t {
				out = append(out, s)
			}
			continue
		}
		second, size2 := utf8.DecodeRuneInString(t[size:])
		if size2 == 0 || size+size2 != len(t) {
			continue // a one-character run is already a character term
		}
		out = appendHanChar(out, first)
		chained := false
		if i+1 < len(surface) {
			next, _ := utf8.DecodeRuneInString(surface[i+1])
			chained = next == second && utf8.RuneCountInString(surface[i+1]) == 2
		}
		if !chained {
			out = appendHanChar(out, second)
		}
	}
	return out
}

// appendHanChar appends r as a term when it is a Han character that is not a
// function character.
func appendHanChar(out []string, r rune) []string {
	if unicode.Is(unicode.Han, r) && !hanStopChars[r] {
		out = append(out, string(r))
	}
	return out
}

// hanStopChars are Han characters too frequent in any Chinese or Japanese
// text to make a single-character term: particles, pronouns, the copula,
// negation, "one" and the general classifier. They still make bigrams.
var hanStopChars = map[rune]bool{
	'的': true, '了': true, '是': true, '在': true, '们': true, '这': true, '那': true,
	'个': true, '一': true, '不': true, '吗': true, '呢': true, '吧': true, '啊': true,
	'我': true, '你': true, '他': true, '她': true, '它': true, '私': true, '僕': true,
	'何': true,
}

// surfaceTerms splits text into words and the bigrams (or single-character
// runs) of CJK text, lower-cased, in text order.
func surfaceTerms(text string) []string {
	var (
		tokens []string
		word   strings.Builder
		cjk    []rune
	)
	flushWord := func() {
		if word.Len() > 0 {
			tokens = append(tokens, strings.ToLower(word.String()))
			word.Reset()
		}
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
			return
		case 1:
			tokens = append(tokens, string(cjk))
		default:
			for i := 0; i+1 < len(cjk); i++ {
				tokens = append(tokens, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII
			r -= 0xFEE0
		}
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (word.Len() > 0 && unicode.IsMark(r)):
			flushCJK()
			word.WriteRune(r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return tokens
}

// isCJK reports whether r belongs to a run of Chinese or Japanese text: Han,
// Hiragana and Katakana (half-width included), and the marks written inside
// words (the prolonged sound mark ー and its half-width form, the iteration
// mark 々).
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || r == 'ー' || r == 'ｰ' || r == '々'
}

// IndexText returns the text of value that search indexes. A nil fields slice
// selects every string in value (nested maps and lists included, in key
// order); otherwise only the strings at the listed dotted paths are used, and
// an empty, non-nil slice selects nothing.
func IndexText(value map[string]any, fields []string) []string {
	var out []string
	if fields == nil {
		collectStrings(value, &out)
		return out
	}
	for _, f := range fields {
		if v, ok := Lookup(value, f); ok {
			collectStrings(v, &out)
		}
	}
	return out
}

func collectStrings(v any, out *[]string) {
	switch c := v.(type) {
	case string:
		*out = append(*out, c)
	case []string:
		*out = append(*out, c...)
	case []any:
		for _, x := range c {
			collectStrings(x, out)
		}
	case map[string]any:
		for _, k := range sortedKeys(c) {
			collectStrings(c[k], out)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
