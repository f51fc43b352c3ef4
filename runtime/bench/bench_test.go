package bench_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime/bench"
	"github.com/graphctl/graphctl/runtime/engine"
)

// The scenarios run to completion at a small size and report every figure
// with a positive value.
func TestScenariosRun(t *testing.T) {
	var got []bench.Result
	opts := bench.Options{LoopSteps: 20, LoopRuns: 1, ChatTurns: 30, FanOut: 5, FanOutRuns: 2, ValidateNodes: 20, Dir: t.TempDir()}
	if err := bench.Run(context.Background(), opts, func(r bench.Result) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"per super-step, memory", "per super-step, badger", "per super-step, badger-sync", "per super-step, badger-fsync", "late turn / early turn",
		"on disk / final state", "per run of 5 tasks + join, badger", "load and check a 20-node graph",
		"warm-up turns before the chat, on a thread then deleted", "late turn / new thread's turn, same moments (medians)",
		"late turn / early turn (medians), memory", "late turn / early turn, bytes allocated (medians)"}
	table := bench.Table(got)
	for _, w := range want {
		if !strings.Contains(table, w) {
			t.Errorf("no %q in\n%s", w, table)
		}
	}
	for _, r := range got {
		if r.Value <= 0 && r.Unit != "µs" {
			t.Errorf("%s %s = %v", r.Scenario, r.Metric, r.Value)
		}
	}
}

// BenchmarkLoopStep runs the loop scenario's graph (a set node evaluating an
// expression and a route, 100 super-steps per run) in memory and on Badger:
// ns/step and cpu-ns/step are the figures of graphctl bench's loop rows.
func BenchmarkLoopStep(b *testing.B) {
	const steps = 100
	for _, name := range []string{"memory", "badger"} {
		b.Run(name, func(b *testing.B) {
			cp, closeFn, err := bench.Backend(name, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer closeFn()
			g, err := bench.CompileSource("loop.cue", bench.LoopGraph(steps))
			if err != nil {
				b.Fatal(err)
			}
			eng := engine.New(g, cp, engine.Options{})
			defer eng.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, _ := bench.ProcessCPU()
			for i := 0; i < b.N; i++ {
				res, err := eng.Run(ctx, engine.Request{ThreadID: fmt.Sprint("loop-", i), Input: map[string]any{}}, nil)
				if err != nil || res.Steps != steps {
					b.Fatalf("run: %v (%d steps)", err, res.Steps)
				}
			}
			cpu1, _ := bench.ProcessCPU()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
		})
	}
}
