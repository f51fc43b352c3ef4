package checkpointtest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

func testRollback(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	th := newThread("rb")
	th.put(t, c, change{field: "msgs", append: []any{"m0"}}, change{field: "x", full: 0})
	th.put(t, c, change{field: "msgs", append: []any{"m1"}})
	start := th.put(t, c, change{field: "msgs", append: []any{"m2"}}, change{field: "x", full: 2})
	// The run rolled back: three more checkpoints, a new field, pending writes.
	th.put(t, c, change{field: "msgs", append: []any{"r0"}}, change{field: "y", full: "new"})
	th.put(t, c, change{field: "msgs", append: []any{"r1"}}, change{field: "x", full: 9})
	last := th.put(t, c, change{field: "msgs", full: []any{"replaced"}})
	if err := c.PutWrites(ctx, "rb", last.ID, checkpoint.PendingWrite{TaskID: "n", Node: "n", Kind: "update", Update: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	other := newThread("rb-other")
	other.put(t, c, change{field: "msgs", append: []any{"o"}})

	if err := c.Rollback(ctx, "rb", "nope"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Rollback to an unknown checkpoint: %v, want ErrNotFound", err)
	}
	if l, err := c.Latest(ctx, "rb"); err != nil || l.ID != last.ID {
		t.Fatalf("a refused Rollback changed the thread: latest %v, %v", l, err)
	}
	if err := c.Rollback(ctx, "rb", start.ID); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	l, err := c.Latest(ctx, "rb")
	if err != nil {
		t.Fatalf("Latest after Rollback: %v", err)
	}
	if l.ID != start.ID {
		t.Fatalf("Latest after Rollback = %s, want %s", l.ID, start.ID)
	}
	assertValues(t, "rolled back", l.Values, th.at[start.ID])
	if len(l.Pending) != 0 {
		t.Errorf("pending writes after Rollback = %+v, want none", l.Pending)
	}
	if got, want := historyIDs(t, c, "rb", checkpoint.ListOptions{}), reversed(th.ids[:3]); !slices.Equal(got, want) {
		t.Errorf("History after Rollback = %v, want %v", got, want)
	}
	for _, id := range th.ids[3:] {
		if _, err := c.Get(ctx, "rb", id); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("Get of rolled-back checkpoint %s: %v, want ErrNotFound", id, err)
		}
	}
	threads, err := c.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range threads {
		if info.ThreadID == "rb" && (info.Latest != start.ID || info.Step != start.Step) {
			t.Errorf("thread summary after Rollback = %+v, want latest %s at step %d", info, start.ID, start.Step)
		}
	}
	if ol, err := c.Latest(ctx, "rb-other"); err != nil {
		t.Fatalf("other thread after Rollback: %v", err)
	} else {
		assertValues(t, "other thread", ol.Values, other.values)
	}

	// The thread goes on from start; versions the rolled-back run used are
	// written afresh and read back right.
	th.versions = maps(start.Versions)
	th.values = maps(th.at[start.ID])
	th.ids = th.ids[:3]
	th.last = start.ID
	th.step = start.Step + 1
	th.put(t, c, change{field: "msgs", append: []any{"after"}})
	l, err = c.Latest(ctx, "rb")
	if err != nil {
		t.Fatal(err)
	}
	assertValues(t, "after rollback and a new step", l.Values, th.values)

	// A run that never got past start: the result of a task it finished is
	// kept (the task is not run again), its saved input is discarded.
	kept := checkpoint.PendingWrite{TaskID: "n", Node: "n", Kind: "update", Update: json.RawMessage(`{"x":3}`)}
	input := checkpoint.PendingWrite{TaskID: "__input__", Node: "input", Kind: "input", Update: json.RawMessage(`{"msgs":["hi"]}`)}
	for _, w := range []checkpoint.PendingWrite{kept, input} {
		if err := c.PutWrites(ctx, "rb", th.last, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rollback(ctx, "rb", th.last); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, c, "rb", th.last).Pending; len(got) != 1 || got[0].TaskID != kept.TaskID {
		t.Errorf("pending writes after Rollback = %+v, want only the finished task's (the input belonged to the run rolled back)", got)
	}

	// A rollback to an idle checkpoint (no next tasks) discards every write
	// saved against it.
	idle := checkpoint.Checkpoint{ThreadID: "idle", ID: cpID(0, 0), Step: 0, GraphName: "g", GraphHash: "h1",
		Versions: map[string]int64{"a": 1}, Source: "loop", CreatedAt: epoch}
	if err := c.Put(ctx, idle, []checkpoint.Blob{{Field: "a", Version: 1, Data: json.RawMessage(`1`)}}); err != nil {
		t.Fatal(err)
	}
	if err := c.PutWrites(ctx, "idle", idle.ID, kept); err != nil {
		t.Fatal(err)
	}
	if err := c.Rollback(ctx, "idle", idle.ID); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, c, "idle", idle.ID).Pending; len(got) != 0 {
		t.Errorf("pending writes of an idle checkpoint after Rollback = %+v, want none", got)
	}
}
