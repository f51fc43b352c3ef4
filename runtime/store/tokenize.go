package store

import (
	"slices"
	"strings"
	"unicode"
)

// Tokenize splits text into lower-cased search terms. Runs of letters and
// digits form words; runs of Chinese or Japanese characters (Han, Hiragana,
// Katakana), which are written without spaces, are split into overlapping
// character bigrams ("東京都" → "東京", "京都"), the usual way to make such text
// searchable without a dictionary. A CJK run of one character is one term.
// Full-width ASCII letters and digits are folded to their ASCII forms.
func Tokenize(text string) []string {
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

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || r == 'ー' || r == '々'
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
