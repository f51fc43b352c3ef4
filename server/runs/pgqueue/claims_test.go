package pgqueue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/runs/pgqueue"
)

// A run's execution whose lease expired, with nobody else taking the run,
// while this replica claimed the run again: the claim made again has a newer
// generation, so the first execution — a stale writer still under way — can
// neither write to the thread nor end or release the run, and the claim made
// again is kept for the execution that starts under it, whose writes go on.
func TestOwnClaimAgainFencesTheFirstExecution(t *testing.T) {
	cases := []struct {
		name string
		end  func(q *pgqueue.Queue, ctx context.Context, rec runs.Record) error
		// fenced is whether the end under the first claim fails with
		// ErrFenced (a release under a superseded claim releases nothing,
		// without an error).
		fenced bool
	}{
		{"finish", func(q *pgqueue.Queue, ctx context.Context, rec runs.Record) error {
			rec.Status = runs.StatusSuccess
			return q.Finish(ctx, rec, false)
		}, true},
		{"finish and forget", func(q *pgqueue.Queue, ctx context.Context, rec runs.Record) error {
			rec.Status = runs.StatusInterrupted
			return q.Finish(ctx, rec, true)
		}, true},
		{"release", func(q *pgqueue.Queue, ctx context.Context, rec runs.Record) error {
			return q.Release(ctx, []string{rec.RunID})
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := pgtest.Open(t, postgres.Options{})
			ctx := context.Background()
			first, _, rec, executing := claimedByFirst(t, db)
			gen := readRow(t, db, rec.RunID).Gen
			root, err := putStep(executing, db.Checkpointer(), rec.ThreadID, "", 0, "first")
			if err != nil {
				t.Fatalf("checkpoint under the first claim: %v", err)
			}
			claimWhenExpired(t, first, rec.RunID)
			if got := readRow(t, db, rec.RunID).Gen; got != gen+1 {
				t.Fatalf("generation after the replica's own claim again = %d, want %d", got, gen+1)
			}
			if _, err := putStep(executing, db.Checkpointer(), rec.ThreadID, root, 1, "stale"); !errors.Is(err, checkpoint.ErrFenced) {
				t.Fatalf("checkpoint of the first execution after the claim again: err = %v, want ErrFenced", err)
			}
			err = c.end(first, executing, rec)
			if c.fenced && !errors.Is(err, checkpoint.ErrFenced) {
				t.Fatalf("%s under the first claim: err = %v, want ErrFenced", c.name, err)
			}
			if !c.fenced && err != nil {
				t.Fatalf("%s under the first claim: %v", c.name, err)
			}
			if r := readRow(t, db, rec.RunID); r.Status != runs.StatusRunning || r.Owner != first.Owner() || r.Gen != gen+1 {
				t.Fatalf("run after the %s under the first claim = %+v, want running here under generation %d", c.name, r, gen+1)
			}
			next := first.Fence(ctx, rec.RunID)
			f, ok := checkpoint.FenceOf(next)
			if !ok {
				t.Fatalf("the claim made again was dropped by the %s: its execution would start without a fence", c.name)
			}
			if f.Token != gen+1 {
				t.Fatalf("the claim made again has generation %d, want %d", f.Token, gen+1)
			}
			if _, err := putStep(next, db.Checkpointer(), rec.ThreadID, root, 1, "next"); err != nil {
				t.Fatalf("checkpoint of the execution under the claim made again: %v", err)
			}
			snap, err := db.Checkpointer().Latest(ctx, rec.ThreadID)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(snap.Values["by"]); got != `"next"` {
				t.Fatalf("thread's value = %s, want the one written under the claim made again", got)
			}
		})
	}
}

// A run still executing on a replica that missed its lease (its heartbeats
// held, as when it cannot reach the database) and then claimed the run
// again itself: the execution that missed its lease is fenced by the newer
// claim — its next checkpoint is refused and it stops — and the run goes on
// from the thread's last checkpoint to its end, under a later claim.
func TestOwnClaimAgainStopsTheExecutionThatMissedItsLease(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	const lease = time.Second
	paused := newGatedQueue(openQueue(t, db, lease))
	held, hold := make(chan struct{}), make(chan struct{})
	var resume sync.Once
	staleWrite := make(chan error, 1)
	var calls atomic.Int32
	var first string
	cp := db.Checkpointer()
	m := newManager(t, db, paused, lease, func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		if calls.Add(1) == 1 {
			var err error
			if first, err = putStep(ctx, cp, rec.ThreadID, "", 0, "first"); err != nil {
				return nil, err
			}
			close(held)
			<-hold // a node that does not look at its context
			// A write its cancel does not stop: only the fence refuses it.
			_, err = putStep(context.WithoutCancel(ctx), cp, rec.ThreadID, first, 1, "stale")
			staleWrite <- err
			return nil, err
		}
		if _, err := putStep(ctx, cp, rec.ThreadID, first, 1, "second"); err != nil {
			return nil, err
		}
		return &engine.Result{Status: engine.StatusCompleted, State: map[string]any{}}, nil
	}, runs.Options{})
	t.Cleanup(func() { // before the manager's shutdown
		paused.heartbeats.release()
		paused.claims.release()
		resume.Do(func() { close(hold) })
	})
	paused.heartbeats.shut()
	paused.claims.shut()
	rec := record("t1", runs.Reject, false)
	run, err := m.Submit(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the run executes", held)
	gen := readRow(t, db, rec.RunID).Gen
	paused.claims.release()
	waitFor(t, "the replica claims its run again, under a newer generation, once its lease expired", func() bool {
		return readRow(t, db, rec.RunID).Gen > gen
	})
	resume.Do(func() { close(hold) })
	if err := <-staleWrite; !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("checkpoint of the execution that missed its lease, after the claim again: err = %v, want ErrFenced", err)
	}
	waitClosed(t, "the execution that missed its lease stops", run.Done())
	paused.heartbeats.release()
	var got runs.Record
	waitFor(t, "the run ends under a later claim", func() bool {
		got, err = paused.Load(ctx, rec.ThreadID, rec.RunID)
		return err == nil && runs.Final(got.Status)
	})
	if got.Status != runs.StatusSuccess || got.Error != "" {
		t.Fatalf("run ended %q (error %q), want success", got.Status, got.Error)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("executions = %d, want 2 (the one that missed its lease, then the one resumed)", n)
	}
	snap, err := cp.Latest(ctx, rec.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if v := string(snap.Values["by"]); v != `"second"` {
		t.Errorf("thread's value = %s, want the resumed execution's", v)
	}
	hist, err := cp.History(ctx, rec.ThreadID, checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 {
		t.Errorf("history has %d checkpoints, want 2 (first, then second)", len(hist))
	}
}
