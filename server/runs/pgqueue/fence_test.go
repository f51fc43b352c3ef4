package pgqueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
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

// claimedByFirst opens two replicas' queues on db, with short leases, and
// returns them with a run of thread "t1" the first has claimed and the
// context of its execution there, under the claim's fence.
func claimedByFirst(t *testing.T, db *postgres.DB) (first, second *pgqueue.Queue, rec runs.Record, fenced context.Context) {
	t.Helper()
	first, second = openQueue(t, db, 200*time.Millisecond), openQueue(t, db, 200*time.Millisecond)
	rec = submitted(t, first, "t1")
	if got, _, err := first.Claim(context.Background(), rec.RunID); err != nil || got == nil {
		t.Fatalf("claim = %v, %v", got, err)
	}
	fenced = first.Fence(context.Background(), rec.RunID)
	if _, ok := checkpoint.FenceOf(fenced); !ok {
		t.Fatal("the claimed run's context carries no fence")
	}
	return first, second, rec, fenced
}

// The writes of a run made under a claim that another replica has since
// superseded fail, in their own transaction, with checkpoint.ErrFenced:
// checkpoints, pending writes, store puts and deletes. The writes under the
// current claim go on.
func TestFenceRefusesWritesOfASupersededClaim(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	_, second, rec, firstCtx := claimedByFirst(t, db)
	cp, st := db.Checkpointer(), db.Store()
	root, err := putStep(firstCtx, cp, "t1", "", 0, "first")
	if err != nil {
		t.Fatalf("write under the current claim: %v", err)
	}
	if err := cp.PutWrites(firstCtx, "t1", root, checkpoint.PendingWrite{TaskID: "n", Node: "n", Update: json.RawMessage(`{}`), Kind: "update"}); err != nil {
		t.Fatalf("pending write under the current claim: %v", err)
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

// pausable is a replica's queue whose heartbeats and claims can be held, as
// when its process is paused (GC pause, SIGSTOP) or cut off from the
// database: its leases expire while its runs keep executing.
type pausable struct {
	*pgqueue.Queue
	mu      sync.Mutex
	resumed chan struct{} // closed while not paused
}

func newPausable(q *pgqueue.Queue) *pausable {
	p := &pausable{Queue: q, resumed: make(chan struct{})}
	close(p.resumed)
	return p
}

func (p *pausable) wait(ctx context.Context) error {
	p.mu.Lock()
	r := p.resumed
	p.mu.Unlock()
	select {
	case <-r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pausable) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resumed = make(chan struct{})
}

func (p *pausable) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.resumed:
	default:
		close(p.resumed)
	}
}

func (p *pausable) Heartbeat(ctx context.Context, runIDs []string) (map[string]string, error) {
	if err := p.wait(ctx); err != nil {
		return nil, err
	}
	return p.Queue.Heartbeat(ctx, runIDs)
}

func (p *pausable) RenewClaims(ctx context.Context, claims []checkpoint.Fence) (map[string]runs.ClaimRenewal, error) {
	if err := p.wait(ctx); err != nil {
		return nil, err
	}
	return p.Queue.RenewClaims(ctx, claims)
}

func (p *pausable) Claim(ctx context.Context, runID string) (*runs.Record, bool, error) {
	if runID == "" { // the claim loop
		if err := p.wait(ctx); err != nil {
			return nil, false, err
		}
	}
	return p.Queue.Claim(ctx, runID)
}

// stepper is an executor that writes three checkpoints on the run's
// thread, going on from its newest one, each naming the replica (by); with
// hold set, it waits for hold before its second step.
func stepper(cp checkpoint.Checkpointer, by string, held, hold chan struct{}, errs chan<- error) runs.Executor {
	return func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		parent, step := "", 0
		if snap, err := cp.Latest(ctx, rec.ThreadID); err == nil {
			parent, step = snap.ID, snap.Step+1
		}
		for ; step < 3; step++ {
			if hold != nil && step == 1 {
				close(held)
				<-hold
			}
			id, err := putStep(ctx, cp, rec.ThreadID, parent, step, by)
			if err != nil {
				err = fmt.Errorf("step %d: %w", step, err)
				errs <- err
				return nil, err
			}
			parent = id
		}
		errs <- nil
		return &engine.Result{Status: engine.StatusCompleted, State: map[string]any{}}, nil
	}
}

// A replica paused past its lease while another took its run over and
// finished it: once it resumes, its next checkpoint is refused, it stops
// the run (before hearing from its heartbeats that the lease is gone)
// without writing anything more, and the thread keeps the second replica's
// line of checkpoints, its record the second replica's end.
func TestFencePausedReplicaStopsItsRun(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	cp := db.Checkpointer()
	const lease = time.Second
	manager := func(q runs.Queue, exec runs.Executor) *runs.Manager {
		m := runs.New(runs.Options{Checkpointer: cp, Exec: exec, Queue: q, Poll: 100 * time.Millisecond, Heartbeat: lease / 4})
		if _, err := m.Recover(ctx, false); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			m.Shutdown(ctx)
		})
		return m
	}
	paused := newPausable(openQueue(t, db, lease))
	t.Cleanup(paused.resume)
	held, hold, firstEnd := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	first := manager(paused, stepper(cp, "first", held, hold, firstEnd))
	rec := record("t1", runs.Reject, false)
	run, err := first.Submit(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the run never reached its second step")
	}
	paused.pause()
	secondEnd := make(chan error, 1)
	manager(openQueue(t, db, lease), stepper(cp, "second", nil, nil, secondEnd))
	select {
	case err := <-secondEnd:
		if err != nil {
			t.Fatalf("the replica that took the run over: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run was not taken over")
	}
	waitFinal := func() runs.Record {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			got, err := paused.Load(ctx, "t1", rec.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if runs.Final(got.Status) {
				return got
			}
		}
		t.Fatal("the run did not end on the replica that took it over")
		return runs.Record{}
	}
	ended := waitFinal()

	close(hold) // the paused replica resumes; its heartbeats stay held
	if err := <-firstEnd; !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("the paused replica's next checkpoint: err = %v, want ErrFenced", err)
	}
	waitDone(t, run)
	paused.resume()

	hist, err := cp.History(ctx, "t1", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hist {
		want := ""
		if i+1 < len(hist) {
			want = hist[i+1].ID
		}
		if h.ParentID != want {
			t.Errorf("checkpoint %s (step %d) has parent %q, want %q: the history is not one line", h.ID, h.Step, h.ParentID, want)
		}
	}
	if len(hist) != 3 {
		t.Errorf("history has %d checkpoints, want 3", len(hist))
	}
	snap, err := cp.Latest(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(snap.Values["by"]); got != `"second"` || snap.Step != 2 {
		t.Errorf("latest = step %d by %s, want step 2 by the second replica", snap.Step, got)
	}
	got, err := first.Load(ctx, "t1", rec.RunID)
	if err != nil || got.Status != ended.Status || !got.UpdatedAt.Equal(ended.UpdatedAt) {
		t.Errorf("the run on the paused replica = %q (%v), want the record the second replica ended it with (%q)", got.Status, err, ended.Status)
	}
}

// A run record saved under a claim that another replica has superseded is
// refused with checkpoint.ErrFenced, even once this replica holds the run
// again under a newer claim (A -> B -> A), and the record stays the one
// written under the current claim.
func TestFenceRefusesRecordSaveOfASupersededClaim(t *testing.T) {
	ctx := context.Background()
	first, second, rec, staleCtx := claimedByFirst(t, pgtest.Open(t, postgres.Options{}))
	rec.Status = runs.StatusRunning
	if err := first.Save(staleCtx, rec); err != nil {
		t.Fatalf("save under the current claim: %v", err)
	}
	claimWhenExpired(t, second, rec.RunID)
	second.Fence(ctx, rec.RunID)
	claimWhenExpired(t, first, rec.RunID)
	currentCtx := first.Fence(ctx, rec.RunID)

	current := rec
	current.Error = "current"
	if err := first.Save(currentCtx, current); err != nil {
		t.Fatalf("save under the current claim: %v", err)
	}
	stale := rec
	stale.Error = "stale"
	if err := first.Save(staleCtx, stale); !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("save under a superseded claim: err = %v, want ErrFenced", err)
	}
	got, err := first.Load(ctx, rec.ThreadID, rec.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error != "current" {
		t.Fatalf("stored record error = %q, want the one saved under the current claim", got.Error)
	}
}
