package suggest

import (
	"reflect"
	"testing"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"WDT780SAEM1", "wdt780saem1", 0},
		{"WDT780SAEM1", "WDT780SAEM2", 1},
		{"diagnose_repair", "diagnose_repiar", 1}, // a transposition is one edit
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosestAndHint(t *testing.T) {
	names := []string{"check_compatibility", "diagnose_repair", "get_installation_instructions"}
	tests := []struct {
		name     string
		in       string
		closest  []string
		wantHint string
	}{
		{"typo", "diagnose_repiar", []string{"diagnose_repair"}, ` (did you mean "diagnose_repair"?)`},
		{"nothing close", "weather", nil, ""},
		{"prefix", "check", []string{"check_compatibility"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Closest(tt.in, names, 2, 5, 3)
			if !reflect.DeepEqual(got, tt.closest) && !(len(got) == 0 && len(tt.closest) == 0) {
				t.Errorf("Closest = %v, want %v", got, tt.closest)
			}
			if h := Hint(tt.in, names); h != tt.wantHint {
				t.Errorf("Hint = %q, want %q", h, tt.wantHint)
			}
		})
	}
}
