package diagram_test

import (
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/diagram"
	"github.com/graphctl/graphctl/runtime/node"
)

func init() {
	node.MustRegister(node.Type{Name: "diagramtest", Config: "{}", New: func(node.Builder) (node.Node, error) {
		return node.Func(nil), nil
	}})
}

const src = `dsl_version: "graphctl/v1"
name: "d"
state: goal: {type: "string"}
start: "a"
nodes: {
	a: {type: "diagramtest", routes: [{when: "goal == \"x\"", to: "b"}], default: "END"}
	b: {type: "diagramtest", next: "END"}
}
`

func TestBuildAndRender(t *testing.T) {
	g, diags := runtime.LoadSource("d.cue", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	d := diagram.Build(g)
	want := []diagram.Edge{
		{Source: "__start__", Target: "a"},
		{Source: "a", Target: "b", Conditional: true, Label: `goal == "x"`},
		{Source: "a", Target: "__end__", Conditional: true, Label: "default"},
		{Source: "b", Target: "__end__"},
	}
	if len(d.Edges) != len(want) {
		t.Fatalf("edges %+v", d.Edges)
	}
	for i := range want {
		if d.Edges[i] != want[i] {
			t.Errorf("edge %d = %+v, want %+v", i, d.Edges[i], want[i])
		}
	}
	tests := []struct {
		name, out string
		contains  []string
	}{
		{"mermaid", diagram.Mermaid(d), []string{"flowchart TD", `a -.->|"goal == #quot;x#quot;"| b`, "b --> __end__"}},
		{"dot", diagram.DOT(d, "d"), []string{`digraph "d"`, `"a" -> "b" [style=dashed, label="goal == \"x\""]`, `"b" -> "__end__";`}},
	}
	for _, tt := range tests {
		for _, c := range tt.contains {
			if !strings.Contains(tt.out, c) {
				t.Errorf("%s output lacks %q:\n%s", tt.name, c, tt.out)
			}
		}
	}
}
