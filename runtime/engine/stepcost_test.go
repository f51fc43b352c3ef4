package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
)

// TestSuperStepAllocations counts the allocations of one super-step of a
// loop (a node that evaluates an expression and a route, with in-memory
// checkpoints) as the difference between a long and a short run, so that
// what a run costs once drops out. The engine reuses per run what each
// step would otherwise allocate again (the step's scratch lists, its
// trace's names, the run id, the scope that routing and the next step
// share, the field versions when no field changed); this checks that a
// step stays within that budget.
func TestSuperStepAllocations(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector changes what allocates")
	}
	const short, long = 20, 120
	// The memory checkpointer's own work is part of the count: the budget
	// is the engine's (about 20 allocations a step) plus its.
	const budget = 32
	allocs := func(steps int) float64 {
		g := compileGraph(t, fmt.Sprintf(`
state: count: {type: "int"}
start: "inc"
nodes: inc: {type: "enginetest", config: exprs: count: "count + 1", routes: [{when: "count < %d", to: "inc"}], default: "END"}`, steps))
		eng := engine.New(g, memory.New(), engine.Options{RecursionLimit: steps + 1})
		ctx := context.Background()
		i := 0
		return testing.AllocsPerRun(5, func() {
			i++
			res, err := eng.Run(ctx, engine.Request{ThreadID: fmt.Sprint("t", i), RunID: "run", Input: map[string]any{}}, nil)
			if err != nil || res.Steps != steps {
				t.Fatalf("run: %v (%d steps)", err, res.Steps)
			}
		})
	}
	perStep := (allocs(long) - allocs(short)) / (long - short)
	t.Logf("%.1f allocations per super-step", perStep)
	if perStep > budget {
		t.Errorf("a super-step allocates %.1f times, want at most %d", perStep, budget)
	}
}
