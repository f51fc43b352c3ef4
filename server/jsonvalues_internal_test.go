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
	strs := []string{"plain", "", `quote " and \ backslash`, "<b>&amp;</b>", "line\nbreak\ttab\r\x00\x1f\b\f\x7f", "é ✓ 日本 😀",
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
}

// A value encoding/json cannot encode is an error, not a partial answer.
func TestAppendValuesReportsUnencodableValues(t *testing.T) {
	g := &compile.Graph{Spec: &graph.Graph{Name: "g"}, Fields: map[string]*compile.Field{}}
	if _, err := appendValues(nil, g, map[string]any{"ch": make(chan int)}); err == nil {
		t.Fatal("a channel was encoded")
	}
}

// BenchmarkFinalValues encodes the final values of a slot-filling thread of
// 200 turns (400 messages) as /runs/wait answers them: "direct" with
// appendValues, "annotate+marshal" by copying the messages with their type
// and encoding the copy with encoding/json.
func BenchmarkFinalValues(b *testing.B) {
	g := &compile.Graph{Spec: &graph.Graph{Name: "slot_filling"}, Fields: map[string]*compile.Field{
		"messages": {Spec: &graph.Field{Name: "messages", Type: graph.Type{Kind: graph.Messages}}}}}
	var msgs []any
	for i := 0; i < 200; i++ {
		msgs = append(msgs,
			map[string]any{"role": "user", "content": "My dishwasher WDT780SAEM1 is leaking", "id": "0195f7c2-1b5e-7a3c-9c1e-5f2d8a4b6c" + string(rune('a'+i%26))},
			map[string]any{"role": "assistant", "content": "Got it: model WDT780SAEM1. I noted the symptoms: leaking. What would you like to do? I can:\n1. give installation instructions for a part\n2. check whether a part is compatible with your model\n3. diagnose and repair a problem\n",
				"id": "0195f7c2-1b5e-7a3c-9c1e-5f2d8a4b6d" + string(rune('a'+i%26))})
	}
	vals := map[string]any{"messages": msgs, "model": "WDT780SAEM1", "part": "", "symptoms": []any{"leaking"}, "goal": "", "missing": []any{}}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		defer reportCPU(b)()
		for b.Loop() {
			var err error
			if buf, err = appendValues(buf[:0], g, vals); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("annotate+marshal", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			cp := maps.Clone(vals)
			annotateMessages(g, cp)
			if _, err := json.Marshal(cp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
