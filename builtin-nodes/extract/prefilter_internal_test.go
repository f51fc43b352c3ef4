package extract

import (
	"strings"
	"testing"
)

// A lexicon matcher skips its regexp only for texts it cannot match.
func TestLexiconPrefilterSkipsOnlyTextsWithoutAMatch(t *testing.T) {
	phrases := []string{"won't drain", "Standing  water", "leak", "not draining", "what's wrong", "door bin"}
	re, err := lowerLexiconRegexp(phrases)
	if err != nil {
		t.Fatal(err)
	}
	m := matcher{re: re, value: "v", words: firstWords(phrases)}
	for _, tt := range []struct {
		text string
		want bool // the regexp matches
	}{
		{"my dishwasher won't   drain", true},
		{"there is standing\twater", true},
		{"it leaks", false},    // "leak" is a whole word only
		{"a leak!", true},      // punctuation after the word
		{"Not Draining", true}, // texts are lower-cased before matching
		{"what's wrong with it", true},
		{"the door is fine", false},
		{"hello", false},
		{"", false},
	} {
		lower := strings.ToLower(tt.text)
		if got := re.MatchString(lower); got != tt.want {
			t.Fatalf("%q: regexp matches %v, want %v", tt.text, got, tt.want)
		}
		if tt.want && !m.mayMatch(lower) {
			t.Errorf("%q: the prefilter skips a text the lexicon matches", tt.text)
		}
	}
	for _, text := range []string{"hello", "the fridge is fine", ""} {
		if m.mayMatch(text) {
			t.Errorf("%q: the prefilter runs the regexp on a text with none of the first words", text)
		}
	}
	if p := (matcher{re: re}); !p.mayMatch("anything") {
		t.Error("a pattern matcher (no words) must always run")
	}
}
