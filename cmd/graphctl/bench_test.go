package main

import (
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/graphtest"
	"github.com/graphctl/graphctl/runtime/load"
)

// BenchmarkValidate measures what `graphctl validate` does for one file —
// load, schema and config checks, semantic checks, node construction, test
// checks — on generated chains of reply nodes with a template each.
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		src := load.GenerateGraph(n, "reply", `{text: "step ${count} of the conversation"}`)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				g, diags := runtime.LoadSource("bench.cue", src)
				if g == nil || diags.HasErrors() {
					b.Fatalf("generated graph is invalid:\n%v", diags)
				}
				if d := graphtest.Check(g); d.HasErrors() {
					b.Fatal(d)
				}
			}
		})
	}
}
