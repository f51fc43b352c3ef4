package compile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
)

const subgraphHeader = "dsl_version: \"graphctl/v1\"\n"

// TestSubgraphDiagnostics checks that problems of subgraph nodes are
// reported at the right file:line:col: the include line of the including
// file for a missing file, an include cycle or a bad mapping, and the
// child's own file for a problem inside the child.
func TestSubgraphDiagnostics(t *testing.T) {
	child := subgraphHeader + `name: "child"
state: {
	question: {type: "string"}
	count:    {type: "int"}
	answer:   {type: "string"}
}
start: "a"
nodes: {
	a: {type: "compiletest_noop", next: "END"}
}
`
	brokenChild := subgraphHeader + `name: "broken"
state: {
	question: {type: "string"}
}
start: "a"
nodes: {
	a: {type: "route", routes: [{when: "questoin == ''", to: "END"}], default: "END"}
}
`
	tests := []struct {
		name  string
		files map[string]string
		// want lists substrings of the diagnostics, each "file:line:col: [code]".
		want []string
	}{
		{
			name: "missing file",
			files: map[string]string{"parent.cue": subgraphHeader + `name: "parent"
state: question: {type: "string"}
start: "r"
nodes: {
	r: {type: "subgraph", config: {
		graph: "agents/nope.cue"
	}, next: "END"}
}
`},
			want: []string{`parent.cue:7:11: [subgraph-missing] node "r": subgraph file "agents/nope.cue": no such file`},
		},
		{
			name: "cycle",
			files: map[string]string{
				"parent.cue": subgraphHeader + `name: "parent"
state: question: {type: "string"}
start: "r"
nodes: r: {type: "subgraph", config: graph: "b.cue", next: "END"}
`,
				"b.cue": subgraphHeader + `name: "b"
state: question: {type: "string"}
start: "back"
nodes: {
	back: {type: "subgraph", next: "END"
		config: graph: "parent.cue"}
}
`},
			want: []string{`b.cue:7:19: [subgraph-cycle] node "back": subgraph "parent.cue" includes itself: parent.cue → b.cue → parent.cue`},
		},
		{
			name: "bad mappings",
			files: map[string]string{
				"parent.cue": subgraphHeader + `name: "parent"
state: {
	topic:  {type: "string"}
	report: {type: "string"}
}
start: "r"
nodes: r: {type: "subgraph", next: "END", config: {
	graph: "child.cue"
	input: {
		questoin: "topic"
		count:    "topic + '!'"
	}
	output: {
		report: "answr"
		reprot: "answer"
	}
}}
`,
				"child.cue": child},
			want: []string{
				`parent.cue:11:14: [subgraph-mapping] node "r": input names "questoin", which the subgraph child.cue does not declare; did you mean "question"?`,
				`parent.cue:12:14: [expr-error] expression "topic + '!'": expression must yield int, but yields string`,
				`parent.cue:15:12: [unknown-name] expression "answr": unknown name "answr"; did you mean "answer"?`,
				`parent.cue:16:12: [subgraph-mapping] node "r": output names "reprot", which this graph's state does not declare; did you mean "report"?`,
			},
		},
		{
			name: "persist not a bool",
			files: map[string]string{
				"parent.cue": subgraphHeader + `name: "parent"
state: question: {type: "string"}
start: "r"
nodes: r: {type: "subgraph", config: {graph: "child.cue", persist: "yes"}, next: "END"}
`,
				"child.cue": child},
			want: []string{`parent.cue:5:69: [type-mismatch] nodes.r.config.persist: want bool (true or false), got string`},
		},
		{
			name: "error inside the child",
			files: map[string]string{
				"parent.cue": subgraphHeader + `name: "parent"
state: question: {type: "string"}
start: "r"
nodes: r: {type: "subgraph", config: graph: "sub/broken.cue", next: "END"}
`,
				"sub/broken.cue": brokenChild},
			want: []string{`sub/broken.cue:8:38: [unknown-name] expression "questoin == ''": unknown name "questoin"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			g, diags := loadParent(t, dir, tc.files)
			if g != nil {
				t.Fatalf("the graph compiled despite: %v", tc.want)
			}
			got := strings.ReplaceAll(diags.Error(), dir+string(filepath.Separator), "")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("diagnostics lack %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestSubgraphPersist compiles persist: true into the node's subgraph, and
// its absence into a child started afresh on each run.
func TestSubgraphPersist(t *testing.T) {
	g, diags := loadParent(t, t.TempDir(), map[string]string{
		"parent.cue": subgraphHeader + `name: "parent"
state: question: {type: "string"}
start: "kept"
nodes: {
	kept:  {type: "subgraph", config: {graph: "child.cue", persist: true}, next: "fresh"}
	fresh: {type: "subgraph", config: graph: "child.cue", next: "END"}
}
`,
		"child.cue": subgraphHeader + `name: "child"
state: question: {type: "string"}
start: "a"
nodes: a: {type: "compiletest_noop", next: "END"}
`,
	})
	if g == nil {
		t.Fatalf("load: %v", diags)
	}
	if !g.Nodes["kept"].Subgraph.Persist || g.Nodes["fresh"].Subgraph.Persist {
		t.Errorf("persist: kept %v, fresh %v", g.Nodes["kept"].Subgraph.Persist, g.Nodes["fresh"].Subgraph.Persist)
	}
}

// loadParent writes files (name → content) to dir and loads its parent.cue.
func loadParent(t *testing.T, dir string, files map[string]string) (*compile.Graph, diag.List) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, diags, err := runtime.Load(filepath.Join(dir, "parent.cue"))
	if err != nil {
		t.Fatal(err)
	}
	return g, diags
}
