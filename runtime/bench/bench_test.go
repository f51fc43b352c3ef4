package bench_test

import (
	"context"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime/bench"
)

// The scenarios run to completion at a small size and report every figure
// with a positive value.
func TestScenariosRun(t *testing.T) {
	var got []bench.Result
	opts := bench.Options{LoopSteps: 20, LoopRuns: 1, ChatTurns: 30, FanOut: 5, FanOutRuns: 2, ValidateNodes: 20, Dir: t.TempDir()}
	if err := bench.Run(context.Background(), opts, func(r bench.Result) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"per super-step, memory", "per super-step, badger", "per super-step, badger-fsync", "late turn / early turn",
		"on disk / final state", "per run of 5 tasks + join, badger", "load and check a 20-node graph"}
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
