package load

import (
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/node"
)

// BenchmarkLoad loads generated graphs of plain data (which take the path
// without the CUE evaluator) and, as evaluator=true, the same graphs with
// the evaluator, as files with references or comprehensions are loaded.
func BenchmarkLoad(b *testing.B) {
	for _, evaluator := range []bool{false, true} {
		for _, n := range []int{10, 100, 1000} {
			src := GenerateGraph(n, "loadtest_reply", `{text: "hello"}`)
			name := fmt.Sprintf("nodes=%d", n)
			if evaluator {
				name += "/evaluator=true"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				for b.Loop() {
					g, d := loadWith(node.Default(), []SourceFile{{Name: "bench.cue", Data: src}}, evaluator)
					if len(d) > 0 || len(g.Nodes) != n {
						b.Fatalf("load failed: %v", d)
					}
				}
			})
		}
	}
}
