package runs_test

import (
	"context"
	"testing"

	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/server/runs"
)

// A run on a thread costs one fsync: its last checkpoint is not synced on
// its own, since the sync after its final record covers it; and what was
// synced is on disk (the checkpoint and the record read back after a
// reopen).
func TestOneSyncPerRun(t *testing.T) {
	dir := t.TempDir()
	db, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, db, runs.Options{})
	const n = 3
	var ids []string
	for i := range n {
		before := db.Stats().Syncs
		a, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g"})
		if err != nil {
			t.Fatal(err)
		}
		h.next().release <- completed()
		if rec := waitDone(t, a); rec.Status != runs.StatusSuccess {
			t.Fatalf("run %d: status %q", i, rec.Status)
		}
		if got := db.Stats().Syncs - before; got != 1 {
			t.Errorf("run %d: %d fsyncs, want 1", i, got)
		}
		ids = append(ids, a.Record().RunID)
	}
	if err := h.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := lastWriter(t, db.Checkpointer(), "t1"); got != ids[n-1] {
		t.Errorf("last checkpoint written by %q, want %q", got, ids[n-1])
	}
	next := newHarness(t, db, runs.Options{})
	for _, id := range ids {
		if got := storedStatus(t, next.m, "t1", id); got != runs.StatusSuccess {
			t.Errorf("run %s: stored status %q, want success", id, got)
		}
	}
}
