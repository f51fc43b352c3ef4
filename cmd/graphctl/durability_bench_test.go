package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/workspace"
)

// BenchmarkDurability measures what --durability costs per super-step on a
// data directory: a chain of 20 set nodes, each step one pending write and
// one checkpoint. ns/step is the figure to read.
func BenchmarkDurability(b *testing.B) {
	const steps = 20
	g, diags := runtime.LoadSource("bench.cue", load.GenerateGraph(steps, "set", `{set: count: "1"}`))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	for _, mode := range []string{"batch", "fsync"} {
		b.Run(mode, func(b *testing.B) {
			ws, err := workspace.OpenConfig(context.Background(), workspace.Config{Dir: b.TempDir(), Durability: mode})
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			eng := ws.Engine(g, engine.Options{RecursionLimit: steps + 1})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := eng.Run(context.Background(), engine.Request{ThreadID: fmt.Sprint("t", i), Input: map[string]any{}}, nil)
				if err != nil || res.Status != engine.StatusCompleted {
					b.Fatalf("run: %v %v", err, res)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
		})
	}
}
