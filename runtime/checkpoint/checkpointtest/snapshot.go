package checkpointtest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// testLongChains grows a list field far past checkpoint.SnapshotAfter with
// reads of the newest state in between (which let a backend save snapshots),
// and checks every read against the model, through the operations that
// change which blobs exist: rollback behind a snapshot and regrowth over the
// same versions with other items, a put that overwrites the newest version,
// prune and fork.
func testLongChains(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	th := newThread("long")
	th.put(t, c, change{field: "msgs", append: []any{"m0"}}, change{field: "n", full: 0})
	grow := func(prefix string, count int) {
		t.Helper()
		for range count {
			i := len(th.ids)
			th.put(t, c, change{field: "msgs", append: []any{fmt.Sprintf("%s%d", prefix, i)}}, change{field: "n", full: i})
		}
	}
	latestIs := func(when string) {
		t.Helper()
		l, err := c.Latest(ctx, th.id)
		if err != nil {
			t.Fatalf("%s: Latest: %v", when, err)
		}
		if l.ID != th.last {
			t.Fatalf("%s: Latest = %s, want %s", when, l.ID, th.last)
		}
		assertValues(t, when, l.Values, th.values)
	}
	grow("m", 100)
	latestIs("after 100 appends")
	latestIs("read again")
	grow("m", 50)
	latestIs("after 50 more")
	grow("m", 3)
	latestIs("after 3 more")
	for _, k := range []int{1, 40, 99, 100, 120, 149, 150, len(th.ids) - 1} {
		id := th.ids[k]
		assertValues(t, fmt.Sprintf("Get checkpoint %d", k), mustGet(t, c, th.id, id).Values, th.at[id])
	}

	// Roll back behind the snapshots; the same versions are written again
	// with other items.
	mark := th.ids[60]
	if err := c.Rollback(ctx, th.id, mark); err != nil {
		t.Fatal(err)
	}
	var markCP checkpoint.Checkpoint
	if s := mustGet(t, c, th.id, mark); s != nil {
		markCP = s.Checkpoint
	}
	th.versions = maps(markCP.Versions)
	th.values = maps(th.at[mark])
	th.ids = th.ids[:61]
	th.last = mark
	th.step = markCP.Step + 1
	// (Get, not Latest: reading the newest state could replace a snapshot.)
	assertValues(t, "rolled back", mustGet(t, c, th.id, mark).Values, th.values)
	grow("r", 100)
	latestIs("regrown over the rolled-back versions")

	// Overwrite the newest version of msgs (just read, so possibly a
	// snapshot) with other items.
	grow("s", checkpoint.SnapshotAfter+5)
	latestIs("before the overwrite")
	v := th.versions["msgs"]
	var items []any
	if err := json.Unmarshal(th.values["msgs"], &items); err != nil {
		t.Fatal(err)
	}
	items = append(items[:len(items)-1], "overwritten")
	over := checkpoint.Checkpoint{ThreadID: th.id, ID: cpID(th.step, len(th.ids)), ParentID: th.last, Step: th.step,
		GraphName: "g", GraphHash: "h1", Versions: maps(th.versions), Source: "update", CreatedAt: epoch}
	if err := c.Put(ctx, over, []checkpoint.Blob{{Field: "msgs", Version: v, Base: v - 1, Data: json.RawMessage(`["overwritten"]`)}}); err != nil {
		t.Fatalf("Put overwriting msgs@%d: %v", v, err)
	}
	th.values["msgs"] = mustJSON(t, items)
	th.at[over.ID] = maps(th.values)
	th.ids = append(th.ids, over.ID)
	th.last = over.ID
	th.step++
	latestIs("after the overwrite")
	grow("t", 2)
	latestIs("grown after the overwrite")

	// Prune, then grow and read again.
	if err := c.Prune(ctx, th.id, 5); err != nil {
		t.Fatal(err)
	}
	latestIs("pruned")
	grow("u", checkpoint.SnapshotAfter+10)
	latestIs("grown after prune")
	assertValues(t, "Get after prune", mustGet(t, c, th.id, th.ids[len(th.ids)-20]).Values, th.at[th.ids[len(th.ids)-20]])

	// A fork copies the values.
	if _, err := c.Fork(ctx, th.id, th.last, "long-fork"); err != nil {
		t.Fatal(err)
	}
	f, err := c.Latest(ctx, "long-fork")
	if err != nil {
		t.Fatal(err)
	}
	assertValues(t, "fork", f.Values, th.values)
}
