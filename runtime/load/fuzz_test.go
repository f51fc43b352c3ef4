package load

import (
	"reflect"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/node"
)

func FuzzSource(f *testing.F) {
	seeds := []struct{ name, src string }{
		{"g.cue", validCUE},
		{"g.yaml", validYAML},
		{"g.cue", string(GenerateGraph(3, "loadtest_reply", `{text: "hi"}`))},
		{"g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_reply\", config: {text: 1, role: \"user\", x: 2}}\n}\n"},
		{"g.cue", hdr + "nodes: {\n\ta: {type: \"loadtest_route\",\n}\n"},
		{"g.cue", hdr + "state: x: {type: \"lst<\", reducer: {expr: 5}}\nnodes: a: {next: 5, routes: [{}], retry: {max_attempts: 0}}\n"},
		{"g.cue", "x: y\n#D: {a: int}\nnodes: b: #D & {a: \"s\"}\n"},
		{"g.cue", "[1, 2]"},
		{"g.cue", "\"\"\"\n\tmulti\n\t\"\"\"\n"},
		{"g.cue", hdr + "nodes: a: {type: #\"loadtest_route\"#, description: \"\"\"\n\t\tx\n\t\t\"\"\"}\n"},
		{"g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a:\n    type: [\n"},
		{"g.yaml", "- a\n---\nb: 1\n"},
		{"g.yaml", "a: &x {b: *x}\n"},
		{"g.yaml", "nodes:\n  a:\n    type: loadtest_reply\n    config:\n      text: |\n        hello\n"},
		{"g.cue", hdr + "nodes: a: {type: \"loadtest_words\", config: {namespace: [\"n\"], max: 100, mode: \"slow\", token: {env: \"T\"}, tags: []}}\n"},
		{"g.cue", hdr + "vars: {x: -9223372036854775808, y: 1.0, y: 1.00000000000000000001, z: 1e-400}\nnodes: a: {type: \"loadtest_route\", retry: {backoff: 0.99999999999999999999}}\n"},
		{"g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nvars:\n  a: !!float 3\n  b: &x {c: 1.5e+3}\n  d: {<<: *x, e: 0x1F}\n  1: ~\nnodes: {}\n"},
		{"g.cue", hdr + "state: n: {type: \"int\", default: -1, enum: [1, 2.5e1]}\nvars: v: {a: null, b: [true]}\nnodes: {a: {type: \"loadtest_set\", config: {set: {x: \"y\"}, limit: 2}, next: [\"b\"]}, b: {type: \"loadtest_reply\", config: text: \"\"\"\n\tx\n\t\"\"\"}}\n"},
	}
	for _, s := range seeds {
		f.Add(s.name, []byte(s.src))
	}
	f.Fuzz(func(t *testing.T, name string, src []byte) {
		if !strings.HasSuffix(name, ".yaml") {
			name = "g.cue"
		}
		g, d := Source(name, src)
		for _, x := range d {
			if x.Code == "internal" {
				t.Fatalf("internal error: %v", x)
			}
			if x.File != name {
				t.Fatalf("diagnostic outside the user's file: %v", x)
			}
			if x.Line < 1 || x.Col < 1 {
				t.Fatalf("diagnostic without a position: %v", x)
			}
		}
		if g == nil && !d.HasErrors() {
			t.Fatal("nil graph without errors")
		}
		// Plain data loads without the evaluator exactly as with it.
		want, wantDiags := loadWith(node.Default(), []SourceFile{{Name: name, Data: src}}, true)
		if !reflect.DeepEqual(g, want) || !reflect.DeepEqual(d, wantDiags) {
			t.Fatalf("differs from the evaluator's load:\ngraph %+v\nwant  %+v\ndiagnostics %v\nwant        %v", g, want, d, wantDiags)
		}
	})
}
