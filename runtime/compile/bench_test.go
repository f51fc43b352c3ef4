package compile

import (
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
)

// benchGraph builds a graph of n nodes n_0 … n_{n-1}: each renders a template
// and routes on a condition to the next node, every tenth node loops back to the
// one before it, and the last node ends the run.
func benchGraph(b *testing.B, n int) *graph.Graph {
	b.Helper()
	state := []*graph.Field{}
	for _, f := range []struct{ name, typ, reducer string }{
		{"messages", "messages", ""}, {"count", "int", "add"}, {"goal", "string", ""}, {"tags", "list<string>", "union"},
	} {
		t, err := graph.ParseType(f.typ)
		if err != nil {
			b.Fatal(err)
		}
		state = append(state, &graph.Field{Name: f.name, Type: t, TypeText: f.typ, Reducer: f.reducer})
	}
	state[2].Enum = []any{"install", "repair"}
	g := &graph.Graph{File: "bench.cue", Name: "bench", Start: "n_0", State: state, Pos: map[string]diag.Pos{}}
	for i := range n {
		name := fmt.Sprintf("n_%d", i)
		next := graph.End
		if i+1 < n {
			next = fmt.Sprintf("n_%d", i+1)
		}
		nd := &graph.Node{
			Name:   name,
			Type:   "compiletest_text",
			Config: map[string]any{"text": fmt.Sprintf("step %d of ${count}: ${goal}", i)},
			Routes: []graph.Route{{When: fmt.Sprintf("count > %d && goal == 'install'", i), To: next}},
		}
		nd.Default = next
		if i%10 == 9 {
			nd.Default = fmt.Sprintf("n_%d", i-1)
		}
		g.Nodes = append(g.Nodes, nd)
	}
	return g
}

func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			g := benchGraph(b, n)
			if _, diags := Compile(g, Options{}); len(diags) > 0 {
				b.Fatalf("benchmark graph is invalid:\n%s", diags.Error())
			}
			b.ReportAllocs()
			for b.Loop() {
				Compile(g, Options{})
			}
		})
	}
}
