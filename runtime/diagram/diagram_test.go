package diagram_test

import (
	"os"
	"path/filepath"
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

// TestMermaidSubgraphs draws a subgraph node as a Mermaid subgraph holding
// the child graph's nodes, their ids prefixed with the subgraph's.
func TestMermaidSubgraphs(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"parent.cue": `dsl_version: "graphctl/v1"
name: "parent"
state: goal: {type: "string"}
start: "a"
nodes: {
	a:        {type: "diagramtest", next: "research"}
	research: {type: "subgraph", config: graph: "child.cue", next: "END"}
}
`,
		"child.cue": `dsl_version: "graphctl/v1"
name: "child"
state: goal: {type: "string"}
start: "look"
nodes: look: {type: "diagramtest", next: "END"}
`,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, diags, err := runtime.Load(filepath.Join(dir, "parent.cue"))
	if err != nil || g == nil {
		t.Fatalf("load: %v %v", err, diags)
	}
	out := diagram.Mermaid(diagram.Build(g))
	for _, want := range []string{
		"  subgraph research [\"research<br/><small>subgraph child</small>\"]\n",
		"    research__look[\"look<br/><small>diagramtest</small>\"]\n",
		"    research____start__ --> research__look\n",
		"    research__look --> research____end__\n",
		"  end\n",
		"  a --> research\n",
		"  research --> __end__\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Mermaid lacks %q:\n%s", want, out)
		}
	}
}
