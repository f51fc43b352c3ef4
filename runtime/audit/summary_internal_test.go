package audit

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
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

// TestSummaryOfLongValues checks that a summary of a long list or object is
// the cut compact JSON of the whole value, though only its start is encoded.
func TestSummaryOfLongValues(t *testing.T) {
	var msgs []any
	obj := map[string]any{}
	for i := 0; i < 500; i++ {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("message <%d> é", i)})
		obj[fmt.Sprintf("k%03d", i)] = []any{i, "x&y"}
	}
	for _, v := range []any{msgs, obj, []any{}, map[string]any{}, []any{1, "two"}, map[string]any{"a": nil}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want := string(b)
		if r := []rune(want); len(r) > summaryRunes {
			want = string(r[:summaryRunes]) + "…"
		}
		if got := Summary(v); got != want {
			t.Errorf("Summary(%T of %d) = %q, want %q", v, len(want), got, want)
		}
	}
}

// A summary of a string is its first summaryRunes runes, as a conversion to
// runes cuts them (invalid UTF-8 in the cut part as U+FFFD), and the whole
// string when it is not longer.
func TestSummaryOfStrings(t *testing.T) {
	long := strings.Repeat("é", summaryRunes)
	for _, s := range []string{
		"", "short", long, long + "x", "x" + long, strings.Repeat("a", 1000),
		"bad \xff " + long, long + "\xff\xfe", "\xff" + strings.Repeat("b", summaryRunes),
	} {
		want := s
		if r := []rune(s); len(r) > summaryRunes {
			want = string(r[:summaryRunes]) + "…"
		}
		if got := Summary(s); got != want {
			t.Errorf("Summary(%q) = %q, want %q", s, got, want)
		}
	}
}

// A summary of a list or an object allocates only the string it returns:
// the encoding is done in a reused buffer.
func TestSummaryAllocatesItsStringOnly(t *testing.T) {
	var list any = []any{"leaking", 2.5, true, nil, []any{"a"}}
	if got := Summary(list); got != `["leaking",2.5,true,null,["a"]]` {
		t.Fatalf("summary %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { Summary(list) }); n > 1 {
		t.Errorf("%v allocations per summary, want 1", n)
	}
}
