package runtime_test

import (
	"context"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/node"
)

func init() {
	node.MustRegister(node.Type{
		Name:   "runtimetest_say",
		Config: `{text: string}`,
		New: func(b node.Builder) (node.Node, error) {
			var cfg struct{ Text string }
			if err := b.Decode(&cfg); err != nil {
				return nil, err
			}
			if b.Template("text", cfg.Text) == nil {
				return nil, nil
			}
			return node.Func(func(context.Context, *node.Input) (node.Update, error) { return nil, nil }), nil
		},
	})
}

func TestLoadReportsSchemaAndSemanticProblemsTogether(t *testing.T) {
	src := `dsl_version: "graphctl/v1"
name: "g"
state: goal: {type: "string"}
start: "a"
nodes: {
	a: {type: "runtimetest_say", config: {text: "hi", colour: "red"}, next: "b"}
	b: {type: "runtimetest_say", config: text: "goal is ${gaol}", next: "END"}
}
`
	g, diags := runtime.LoadSource("g.cue", []byte(src))
	if g != nil {
		t.Fatal("an invalid graph compiled")
	}
	got := map[string]string{}
	for _, d := range diags {
		got[d.Code] = d.Pos().String()
	}
	want := map[string]string{
		"unknown-field":  "g.cue:6:52", // schema: node a's config
		"template-error": "g.cue:7:56", // semantic: node b's template, reported too
	}
	for code, pos := range want {
		if got[code] != pos {
			t.Errorf("%s at %q, want %q; all: %v", code, got[code], pos, diags)
		}
	}
	if len(diags) != len(want) {
		t.Errorf("want exactly %d diagnostics, got %v", len(want), diags)
	}
}
