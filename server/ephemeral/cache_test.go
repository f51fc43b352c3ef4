package ephemeral_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/server/ephemeral"
)

// latestCounter counts the full state reads (Latest) of the durable threads.
type latestCounter struct {
	checkpoint.Checkpointer
	latest atomic.Int64
}

func (c *latestCounter) Latest(ctx context.Context, thread string) (*checkpoint.Snapshot, error) {
	c.latest.Add(1)
	return c.Checkpointer.Latest(ctx, thread)
}

func (c *latestCounter) Head(ctx context.Context, thread string) (*checkpoint.Snapshot, error) {
	return c.Checkpointer.(checkpoint.HeadReader).Head(ctx, thread)
}

// Temporary threads do not enter the engine's state cache: however many
// stateless runs pass between two turns of a thread, the thread's next turn
// is served from the cache and does not read the thread's values again.
func TestTemporaryThreadsAreNotCached(t *testing.T) {
	g, diags := runtime.LoadSource("cache.cue", []byte(`
dsl_version: "graphctl/v1"
name: "cache"
state: {
	messages: {type: "messages"}
	n: {type: "int", reducer: "add"}
}
start: "count"
nodes: count: {type: "set", config: set: n: "1", next: "END"}
`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	durable := &latestCounter{Checkpointer: memory.New()}
	cp := ephemeral.New(durable)
	ctx := context.Background()
	eng := engine.New(g, cp, engine.Options{StateCache: 2})
	turn := func(thread string) *engine.Result {
		t.Helper()
		res, err := eng.Run(ctx, engine.Request{ThreadID: thread, Input: map[string]any{}}, nil)
		if err != nil || res.Err != nil {
			t.Fatalf("run on %q: %v %v", thread, err, res.Err)
		}
		return res
	}
	for i := range 3 {
		turn("kept")
		for j := range 4 {
			tmp := fmt.Sprintf("tmp-%d-%d", i, j)
			cp.Temporary(tmp)
			turn(tmp)
			if err := cp.DeleteThread(ctx, tmp); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := durable.latest.Load(); got != 1 {
		t.Errorf("3 turns of a thread between stateless runs read its values %d times, want once (its first turn)", got)
	}
	if res := turn("kept"); res.State["n"] != 4 {
		t.Errorf("n after 4 turns = %v, want 4", res.State["n"])
	}
}
