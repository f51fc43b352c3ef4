package pgqueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/runs/pgqueue"
)

// putStep writes checkpoint step of thread, child of parent, whose field
// "by" (version step+1) says who wrote it, as an engine's super-step does.
func putStep(ctx context.Context, cp checkpoint.Checkpointer, thread, parent string, step int, by string) (string, error) {
	id := checkpoint.NewID()
	v := int64(step + 1)
	data, _ := json.Marshal(by)
	err := cp.Put(ctx, checkpoint.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, Step: step, GraphName: "g",
		Versions: map[string]int64{"by": v}, Source: checkpoint.SourceLoop},
		[]checkpoint.Blob{{Field: "by", Version: v, Data: data}})
	return id, err
}

// openQueue opens a replica's queue on db, closed when the test ends.
func openQueue(t *testing.T, db *postgres.DB, lease time.Duration) *pgqueue.Queue {
	t.Helper()
	q, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema(), Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// submitted queues a new run of thread on q.
func submitted(t *testing.T, q *pgqueue.Queue, thread string) runs.Record {
	t.Helper()
	rec := record(thread, runs.Reject, false)
	rec.Status = runs.StatusPending
	rec.CreatedAt, rec.UpdatedAt = time.Now(), time.Now()
	if err := q.Submit(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// claimWhenExpired claims run on q once its lease has expired.
func claimWhenExpired(t *testing.T, q *pgqueue.Queue, runID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got, resumed, err := q.Claim(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if got != nil {
			if !resumed {
				t.Fatalf("claim of a running run: resumed = false")
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s was never claimed again", runID)
}

// The writes of a run made under a claim that another replica has since
// superseded fail, in their own transaction, with checkpoint.ErrFenced:
// checkpoints, pending writes, store puts and deletes. The writes under the
// current claim go on, and a replica that claims again a run it still owns
// keeps writing under its claim.
func TestFenceRefusesWritesOfASupersededClaim(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	first, second := openQueue(t, db, 200*time.Millisecond), openQueue(t, db, 200*time.Millisecond)
	rec := submitted(t, first, "t1")
	if got, _, err := first.Claim(ctx, rec.RunID); err != nil || got == nil {
		t.Fatalf("claim = %v, %v", got, err)
	}
	firstCtx := first.Fence(ctx, rec.RunID)
	if _, ok := checkpoint.FenceOf(firstCtx); !ok {
		t.Fatal("the claimed run's context carries no fence")
	}
	cp, st := db.Checkpointer(), db.Store()
	root, err := putStep(firstCtx, cp, "t1", "", 0, "first")
	if err != nil {
		t.Fatalf("write under the current claim: %v", err)
	}
	// Lease expired, nobody took the run: the owner's own claim keeps its
	// fence.
	claimWhenExpired(t, first, rec.RunID)
	if err := cp.PutWrites(firstCtx, "t1", root, checkpoint.PendingWrite{TaskID: "n", Node: "n", Update: json.RawMessage(`{}`), Kind: "update"}); err != nil {
		t.Fatalf("write after claiming its own expired run again: %v", err)
	}
	// Taken over by the second replica.
	claimWhenExpired(t, second, rec.RunID)
	secondCtx := second.Fence(ctx, rec.RunID)

	stale := []struct {
		name  string
		write func() error
	}{
		{"checkpoint", func() error { _, err := putStep(firstCtx, cp, "t1", root, 1, "first"); return err }},
		{"pending write", func() error {
			return cp.PutWrites(firstCtx, "t1", root, checkpoint.PendingWrite{TaskID: "m", Node: "m", Update: json.RawMessage(`{}`), Kind: "update"})
		}},
		{"store put", func() error {
			return st.Put(firstCtx, []string{"notes"}, "k", map[string]any{"by": "first"}, store.PutOptions{})
		}},
		{"store delete", func() error { return st.Delete(firstCtx, []string{"notes"}, "k") }},
	}
	if err := st.Put(secondCtx, []string{"notes"}, "k", map[string]any{"by": "second"}, store.PutOptions{}); err != nil {
		t.Fatalf("store put under the current claim: %v", err)
	}
	for _, s := range stale {
		if err := s.write(); !errors.Is(err, checkpoint.ErrFenced) {
			t.Errorf("%s under a superseded claim: err = %v, want ErrFenced", s.name, err)
		}
	}
	if snap, err := cp.Get(ctx, "t1", root); err != nil || len(snap.Pending) != 1 {
		t.Fatalf("pending writes of the root = %v (%v), want only the one written under a held claim", snap, err)
	}
	next, err := putStep(secondCtx, cp, "t1", root, 1, "second")
	if err != nil {
		t.Fatalf("write under the current claim: %v", err)
	}
	hist, err := cp.History(ctx, "t1", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var line []string
	for _, h := range hist {
		line = append(line, h.ID+"<-"+h.ParentID)
	}
	if want := []string{next + "<-" + root, root + "<-"}; fmt.Sprint(line) != fmt.Sprint(want) {
		t.Fatalf("history = %v, want %v", line, want)
	}
	snap, err := cp.Latest(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(snap.Values["by"]); got != `"second"` {
		t.Fatalf("latest state by = %s, want \"second\"", got)
	}
	it, err := st.Get(ctx, []string{"notes"}, "k")
	if err != nil || it.Value["by"] != "second" {
		t.Fatalf("store item = %v, %v; want the current holder's", it, err)
	}
	// Writes made outside runs carry no fence and are not checked.
	if err := st.Put(ctx, []string{"notes"}, "free", map[string]any{}, store.PutOptions{}); err != nil {
		t.Fatalf("unfenced store put: %v", err)
	}
}
