package store

import "testing"

func TestStem(t *testing.T) {
	tests := []struct {
		name  string
		words []string
		stem  string
	}{
		{"plural -s", []string{"cat", "cats"}, "cat"},
		{"plural -es", []string{"box", "boxes"}, "box"},
		{"plural -ches", []string{"church", "churches"}, "church"},
		{"plural -sses", []string{"class", "classes"}, "class"},
		{"plural -oes", []string{"potato", "potatoes"}, "potato"},
		{"plural -ies", []string{"city", "cities"}, "citi"},
		{"-ies after one letter", []string{"tie", "ties", "tying"}, "tie"},
		{"-ing and -ed with e", []string{"hike", "hikes", "hiking", "hiked"}, "hike"},
		{"-ing and -ed without e", []string{"walk", "walks", "walking", "walked"}, "walk"},
		{"doubled consonant", []string{"run", "runs", "running", "ran"}, "run"},
		{"e dropped after -nc", []string{"dance", "dances", "dancing", "danced"}, "danc"},
		{"-ate verbs", []string{"create", "creates", "creating", "created"}, "creat"},
		{"-y verbs", []string{"study", "studies", "studying", "studied"}, "studi"},
		{"y after a vowel", []string{"play", "plays", "playing", "played"}, "play"},
		{"hope is not hop", []string{"hope", "hoping", "hoped"}, "hope"},
		{"hop is not hope", []string{"hop", "hopping", "hopped"}, "hop"},
		{"irregular plural", []string{"child", "children"}, "child"},
		{"irregular plural in -ves", []string{"wife", "wives"}, "wife"},
		{"irregular past", []string{"swim", "swimming", "swam"}, "swim"},
		{"short words kept", []string{"was"}, "was"},
		{"no vowel before -s", []string{"gas"}, "gas"},
		{"-us", []string{"bus"}, "bus"},
		{"-ing that is no suffix", []string{"thing"}, "thing"},
		{"-ing nouns kept apart", []string{"morning"}, "morning"},
		{"news is not new", []string{"news"}, "news"},
		{"non-ASCII", []string{"café"}, "café"},
		{"digits", []string{"4o"}, "4o"},
		{"two letters", []string{"is"}, "is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.words {
				if got := Stem(w); got != tt.stem {
					t.Errorf("Stem(%q) = %q, want %q", w, got, tt.stem)
				}
			}
		})
	}
}
