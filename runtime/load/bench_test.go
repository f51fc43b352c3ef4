package load

import (
	"fmt"
	"testing"
)

func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		src := GenerateGraph(n, "loadtest_reply", `{text: "hello"}`)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				g, d := Source("bench.cue", src)
				if len(d) > 0 || len(g.Nodes) != n {
					b.Fatalf("load failed: %v", d)
				}
			}
		})
	}
}
