package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// TestBadgerCommitsPerSuperStep counts the Badger commits and fsyncs a
// super-step of one node costs: the difference between a run of 60 steps
// and one of 10, over 50. A step of one task commits its checkpoint with
// the task's update applied (no pending write); only the checkpoint that
// ends a run is fsynced.
func TestBadgerCommitsPerSuperStep(t *testing.T) {
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	run := func(steps int) badger.Stats {
		t.Helper()
		g, diags := runtime.LoadSource("commits.cue", load.GenerateGraph(steps, "enginetest", ""))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		eng := engine.New(g, db.Checkpointer(), engine.Options{RecursionLimit: steps + 1})
		before := db.Stats()
		res, err := eng.Run(ctx, engine.Request{ThreadID: fmt.Sprint("steps-", steps), Input: map[string]any{}}, nil)
		if err != nil || res.Steps != steps {
			t.Fatalf("run of %d steps: %v (%d steps)", steps, err, res.Steps)
		}
		after := db.Stats()
		return badger.Stats{Commits: after.Commits - before.Commits, Syncs: after.Syncs - before.Syncs}
	}
	short, long := run(10), run(60)
	commits := float64(long.Commits-short.Commits) / 50
	syncs := float64(long.Syncs-short.Syncs) / 50
	t.Logf("run of 10 steps: %+v; of 60 steps: %+v; per super-step: %.2f commits, %.2f fsyncs", short, long, commits, syncs)
	if commits > 1 {
		t.Errorf("a super-step costs %.2f commits, want 1 (its checkpoint)", commits)
	}
	if syncs != 0 || short.Syncs > 1 {
		t.Errorf("fsyncs: %.2f per super-step and %d in a run of 10 steps, want none per step and at most one per run", syncs, short.Syncs)
	}
}
