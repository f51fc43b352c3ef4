package server

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/graph"
)

// appendValues writes what annotating the messages and encoding the values
// with encoding/json writes, byte for byte.
func TestAppendValuesIsAnnotatedJSON(t *testing.T) {
	g := &compile.Graph{Spec: &graph.Graph{Name: "g"}, Fields: map[string]*compile.Field{
		"messages": {Spec: &graph.Field{Name: "messages", Type: graph.Type{Kind: graph.Messages}}},
		"history":  {Spec: &graph.Field{Name: "history", Type: graph.Type{Kind: graph.Messages}}},
		"notes":    {Spec: &graph.Field{Name: "notes", Type: graph.Type{Kind: graph.List}}},
	}}
	type point struct {
		X int     `json:"x"`
		Y float64 `json:"y,omitempty"`
	}
	strs := []string{"plain", "", `quote " and \ backslash`, "<b>&amp;</b>", "line\nbreak\ttab\r\x00\x1f", "é ✓ 日本 😀",
		"sep \u2028 \u2029", "bad \xff utf-8", "\xe2\x80"}
	var anys []any
	for _, s := range strs {
		anys = append(anys, s)
	}
	for _, tt := range []struct {
		name string
		vals map[string]any
	}{
		{"empty", map[string]any{}},
		{"nil", nil},
		{"conversation", map[string]any{
			"messages": []any{
				map[string]any{"role": "user", "content": "My dishwasher WDT780SAEM1 is leaking", "id": "m1"},
				map[string]any{"role": "assistant", "content": "Got it <ok> & done", "id": "m2", "tool_calls": []any{map[string]any{"name": "t", "args": map[string]any{"a": 1.5}}}},
				map[string]any{"role": "tool", "content": "r", "type": "kept? no: replaced"},
				map[string]any{"role": "critic", "content": "unknown role", "type": "custom"},
				map[string]any{"content": "no role"},
				"a bare string", nil, 3.0,
			},
			"history": nil,
			"model":   "WDT780SAEM1", "symptoms": []any{"leaking", "noisy"}, "goal": "",
		}},
		{"scalars", map[string]any{"f": 1.5, "big": 1e21, "small": 1e-7, "neg": -0.0, "int": 42, "i64": int64(-7), "num": json.Number("9007199254740993"),
			"t": true, "f0": false, "null": nil, "strs": anys, "nested": map[string]any{"z": map[string]any{}, "a": []any{}, "n": []any(nil), "m": map[string]any(nil)}}},
		{"typed values", map[string]any{"ss": []string{"a", "<"}, "ms": map[string]string{"k": "v"}, "p": point{X: 1}, "pp": &point{Y: 2.5},
			"__interrupt__": []map[string]any{{"value": "v", "id": "i1", "when": "during", "resumable": true, "ns": []string{"n"}}}}},
		{"messages not a list", map[string]any{"messages": "text"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := maps.Clone(tt.vals)
			if want == nil {
				want = map[string]any{}
			}
			annotateMessages(g, want)
			wantJSON, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendValues(nil, g, tt.vals)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(wantJSON) {
				t.Errorf("got\n%s\nwant\n%s", got, wantJSON)
			}
		})
	}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("string %q: got %s, want %s", s, got, want)
		}
	}
}

// A value encoding/json cannot encode is an error, not a partial answer.
func TestAppendValuesReportsUnencodableValues(t *testing.T) {
	g := &compile.Graph{Spec: &graph.Graph{Name: "g"}, Fields: map[string]*compile.Field{}}
	if _, err := appendValues(nil, g, map[string]any{"ch": make(chan int)}); err == nil {
		t.Fatal("a channel was encoded")
	}
}
