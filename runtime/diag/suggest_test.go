package diag

import "testing"

func TestClosest(t *testing.T) {
	tests := []struct {
		name       string
		candidates []string
		want       string
	}{
		{"gaol", []string{"goal", "model"}, "goal"},
		{"rout", []string{"route", "reply", "set"}, "route"},
		{"modle", []string{"model", "mode"}, "model"},
		{"ask_topc", []string{"ask_topic", "ask_order"}, "ask_topic"},
		{"Model", []string{"model"}, "model"},
		{"x", []string{"y", "zz"}, "y"},
		{"completely", []string{"other", "names"}, ""},
		{"goal", []string{"goal", "gaol"}, "gaol"},
		{"abc", nil, ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.name, tt.candidates); got != tt.want {
			t.Errorf("Closest(%q, %v) = %q, want %q", tt.name, tt.candidates, got, tt.want)
		}
	}
	if got := DidYouMean("gaol", []string{"goal"}); got != `; did you mean "goal"?` {
		t.Errorf("DidYouMean = %q", got)
	}
	if d := EditDistance("kitten", "sitting"); d != 3 {
		t.Errorf("EditDistance(kitten, sitting) = %d, want 3", d)
	}
}
