package audit

import (
	"reflect"
	"testing"
)

func TestIdentifiers(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{`{"when":"state.goal == \"x\" && len(missing) > 0"}`, []string{"when", "state", "x", "len", "missing"}},
		{`9abc a.b _c1 é`, []string{"abc", "a", "_c1"}},
		{``, nil},
	}
	for _, tt := range tests {
		want := map[string]bool{}
		for _, w := range tt.want {
			want[w] = true
		}
		if got := identifiers(tt.text); !reflect.DeepEqual(got, want) {
			t.Errorf("identifiers(%q) = %v, want %v", tt.text, got, want)
		}
	}
}
