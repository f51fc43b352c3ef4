package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// testPutBatch writes checkpoints in batches (checkpoint.PutAll, one
// transaction on a BatchPutter): what it stores reads back as the same
// Puts in a row would, and a batch that cannot be stored stores nothing.
func testPutBatch(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	t.Run("reads back as single puts", func(t *testing.T) {
		th := newThread("batch")
		th.put(t, c, change{field: "msgs", full: []any{"hello"}}, change{field: "n", full: 0}, change{field: "name", full: "ann"})
		pw := checkpoint.PendingWrite{TaskID: "t1", Node: "n", Update: mustJSON(t, map[string]any{"n": 1})}
		if err := c.PutWrites(ctx, th.id, th.last, pw); err != nil {
			t.Fatalf("PutWrites: %v", err)
		}
		var puts []checkpoint.PutRequest
		for i := 1; i <= 4; i++ {
			// msgs appends onto blobs of the batch itself; name is
			// unchanged and needs the blob written before the batch.
			cp, blobs := th.next(t, change{field: "msgs", append: []any{fmt.Sprintf("m%d", i)}}, change{field: "n", full: i})
			puts = append(puts, checkpoint.PutRequest{Checkpoint: cp, Blobs: blobs})
		}
		puts[len(puts)-1].Checkpoint.Next = nil
		if err := checkpoint.PutAll(ctx, c, puts); err != nil {
			t.Fatalf("PutAll: %v", err)
		}
		latest, err := c.Latest(ctx, th.id)
		if err != nil {
			t.Fatalf("Latest: %v", err)
		}
		if latest.ID != th.last {
			t.Errorf("Latest id = %s, want the batch's last %s", latest.ID, th.last)
		}
		assertValues(t, "Latest", latest.Values, th.values)
		for _, id := range th.ids {
			assertValues(t, "Get "+id, mustGet(t, c, th.id, id).Values, th.at[id])
		}
		if got, want := historyIDs(t, c, th.id, checkpoint.ListOptions{}), reversed(th.ids); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("History = %v, want %v", got, want)
		}
		if first := mustGet(t, c, th.id, th.ids[0]); len(first.Pending) != 0 {
			t.Errorf("the pending writes of the batch's parent were kept: %+v", first.Pending)
		}
		infos, err := c.Threads(ctx)
		if err != nil {
			t.Fatalf("Threads: %v", err)
		}
		for _, info := range infos {
			if info.ThreadID == th.id && info.Latest != th.last {
				t.Errorf("thread summary names %s, want %s", info.Latest, th.last)
			}
		}
		// The thread goes on with single Puts.
		th.put(t, c, change{field: "msgs", append: []any{"after"}})
		latest, err = c.Latest(ctx, th.id)
		if err != nil {
			t.Fatalf("Latest after a Put: %v", err)
		}
		assertValues(t, "Latest after a Put", latest.Values, th.values)
	})
	t.Run("stores all or nothing", func(t *testing.T) {
		b, ok := c.(checkpoint.BatchPutter)
		if !ok {
			t.Fatalf("%T does not write batches (checkpoint.BatchPutter)", c)
		}
		th := newThread("batch-fails")
		th.put(t, c, change{field: "msgs", full: []any{"a"}})
		before := th.last
		cp1, blobs1 := th.next(t, change{field: "msgs", append: []any{"b"}})
		cp2, _ := th.next(t, change{field: "msgs", append: []any{"c"}})
		// The second checkpoint's delta is based on a version nobody wrote.
		bad := []checkpoint.Blob{{Field: "msgs", Version: 9, Base: 7, Data: mustJSON(t, []any{"c"})}}
		cp2.Versions = map[string]int64{"msgs": 9}
		err := b.PutBatch(ctx, []checkpoint.PutRequest{{Checkpoint: cp1, Blobs: blobs1}, {Checkpoint: cp2, Blobs: bad}})
		if err == nil {
			t.Fatal("PutBatch with a delta on a missing blob succeeded")
		}
		if _, err := c.Get(ctx, th.id, cp1.ID); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("Get of the failed batch's first checkpoint: err = %v, want ErrNotFound", err)
		}
		latest, err := c.Latest(ctx, th.id)
		if err != nil {
			t.Fatalf("Latest: %v", err)
		}
		if latest.ID != before {
			t.Errorf("Latest after a failed batch = %s, want %s", latest.ID, before)
		}
	})
	t.Run("one thread per batch", func(t *testing.T) {
		a, b := newThread("batch-a"), newThread("batch-b")
		cpA, blobsA := a.next(t, change{field: "x", full: 1})
		cpB, blobsB := b.next(t, change{field: "x", full: 2})
		err := checkpoint.PutAll(ctx, c, []checkpoint.PutRequest{{Checkpoint: cpA, Blobs: blobsA}, {Checkpoint: cpB, Blobs: blobsB}})
		if _, ok := c.(checkpoint.BatchPutter); ok && err == nil {
			t.Error("a batch of two threads' checkpoints was accepted")
		}
	})
}
