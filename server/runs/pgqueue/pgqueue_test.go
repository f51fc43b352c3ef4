package pgqueue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
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

// executions records what the replicas' executors did.
type executions struct {
	mu      sync.Mutex
	started map[string][]string // run id → replicas that started it
	running map[string]int      // thread → runs executing now
	overlap bool                // two runs of a thread executed at once
	order   map[string][]string // thread → run ids in start order
	release chan struct{}       // closed to let blocked runs finish
}

func newExecutions() *executions {
	return &executions{started: map[string][]string{}, running: map[string]int{}, order: map[string][]string{}, release: make(chan struct{})}
}

// replica is one manager on the shared database.
type replica struct {
	name string
	q    *pgqueue.Queue
	m    *runs.Manager
}

// newReplica starts a manager whose runs emit three frames and then wait
// for ex.release (or a cancel) when their metadata says block.
func newReplica(t *testing.T, db *postgres.DB, name string, ex *executions, lease time.Duration) *replica {
	t.Helper()
	q, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema(), Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		ex.mu.Lock()
		ex.started[rec.RunID] = append(ex.started[rec.RunID], name)
		ex.running[rec.ThreadID]++
		if ex.running[rec.ThreadID] > 1 {
			ex.overlap = true
		}
		ex.order[rec.ThreadID] = append(ex.order[rec.ThreadID], rec.RunID)
		ex.mu.Unlock()
		defer func() {
			ex.mu.Lock()
			ex.running[rec.ThreadID]--
			ex.mu.Unlock()
		}()
		for i := 0; i < 3; i++ {
			emit("values", "values", map[string]any{"i": i, "replica": name})
		}
		if rec.Metadata["block"] == true {
			select {
			case <-ex.release:
			case <-ctx.Done():
				return &engine.Result{Status: engine.StatusError, Err: context.Cause(ctx)}, context.Cause(ctx)
			}
		}
		return &engine.Result{Status: engine.StatusCompleted, State: map[string]any{}}, nil
	}
	m := runs.New(runs.Options{Checkpointer: db.Checkpointer(), Exec: exec, Queue: q, Poll: 100 * time.Millisecond, Heartbeat: lease / 4})
	if _, err := m.Recover(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, q: q, m: m}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Shutdown(ctx)
		q.Close()
	})
	return r
}

var runSeq atomic.Int64

func record(thread, strategy string, block bool) runs.Record {
	return runs.Record{RunID: fmt.Sprintf("run-%d", runSeq.Add(1)), ThreadID: thread, AssistantID: "g",
		MultitaskStrategy: strategy, Metadata: map[string]any{"block": block}, Kwargs: map[string]any{}}
}

// waitDone waits for a run to end, failing the test after a generous
// deadline.
func waitDone(t *testing.T, a *runs.Active) runs.Record {
	t.Helper()
	select {
	case <-a.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("run %s did not end", a.Record().RunID)
	}
	return a.Record()
}

// waitStarted waits until a run has started on some replica.
func waitStarted(t *testing.T, ex *executions, runID string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ex.mu.Lock()
		s := ex.started[runID]
		ex.mu.Unlock()
		if len(s) > 0 {
			return s[len(s)-1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s never started", runID)
	return ""
}

// frames returns the events of a run's buffered stream.
func frames(a *runs.Active) []string {
	entries, _, _ := a.Buf.Since(0)
	var out []string
	for _, e := range entries {
		out = append(out, e.Frame.Event)
	}
	return out
}

// blockedRun starts two replicas and submits, on the first, a run that
// blocks until ex.release is closed.
func blockedRun(t *testing.T) (*executions, *replica, *replica, runs.Record, *runs.Active) {
	db := pgtest.Open(t, postgres.Options{})
	ex := newExecutions()
	a, b := newReplica(t, db, "a", ex, 5*time.Second), newReplica(t, db, "b", ex, 5*time.Second)
	rec := record("t1", runs.Reject, true)
	run, err := a.m.Submit(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	return ex, a, b, rec, run
}

// A run submitted on one replica is followed on another: the follower gets
// every frame and the final record.
func TestStreamFollowedOnAnotherReplica(t *testing.T) {
	ex, _, b, rec, run := blockedRun(t)
	waitStarted(t, ex, rec.RunID)
	followed, ok := b.m.Get(rec.RunID)
	if !ok {
		t.Fatal("replica b does not know the run")
	}
	close(ex.release)
	waitDone(t, run)
	got := waitDone(t, followed)
	if got.Status != runs.StatusSuccess {
		t.Fatalf("followed record status = %q, want success", got.Status)
	}
	want := frames(run)
	if fmt := frames(followed); len(fmt) != len(want) || fmt[len(fmt)-1] != "end" {
		t.Fatalf("follower frames = %v, want %v", fmt, want)
	}
	if n := len(ex.started[rec.RunID]); n != 1 {
		t.Fatalf("run started %d times, want once", n)
	}
}

// The multitask strategies hold across replicas: reject refuses a second
// run sent to another replica, interrupt stops the run executing on the
// other one and then runs, enqueue runs after it.
func TestStrategiesAcrossReplicas(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ex := newExecutions()
	a, b := newReplica(t, db, "a", ex, 5*time.Second), newReplica(t, db, "b", ex, 5*time.Second)
	ctx := context.Background()
	first := record("t1", runs.Reject, true)
	r1, err := a.m.Submit(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	waitStarted(t, ex, first.RunID)
	if _, err := b.m.Submit(ctx, record("t1", runs.Reject, false)); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("reject on another replica: err = %v, want ErrBusy", err)
	}
	queued := record("t1", runs.Enqueue, false)
	r2, err := b.m.Submit(ctx, queued)
	if err != nil {
		t.Fatal(err)
	}
	inter := record("t1", runs.Interrupt, false)
	r3, err := b.m.Submit(ctx, inter)
	if err != nil {
		t.Fatal(err)
	}
	if got := waitDone(t, r1); got.Status != runs.StatusInterrupted {
		t.Fatalf("interrupted run status = %q, want interrupted", got.Status)
	}
	if got := waitDone(t, r2); got.Status != runs.StatusInterrupted {
		t.Fatalf("queued run before an interrupt: status = %q, want interrupted", got.Status)
	}
	if got := waitDone(t, r3); got.Status != runs.StatusSuccess {
		t.Fatalf("interrupting run status = %q, want success", got.Status)
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if len(ex.started[queued.RunID]) != 0 {
		t.Fatal("a queued run dropped by an interrupt started")
	}
	if ex.overlap {
		t.Fatal("two runs of one thread executed at once")
	}
}

// A cancel sent to one replica stops the run executing on the other.
func TestCancelOnAnotherReplica(t *testing.T) {
	ex, a, b, rec, run := blockedRun(t)
	where := waitStarted(t, ex, rec.RunID)
	other := b
	if where == "b" {
		other = a
	}
	if _, err := other.m.Cancel(context.Background(), "t1", rec.RunID, runs.Interrupt); err != nil {
		t.Fatal(err)
	}
	if got := waitDone(t, run); got.Status != runs.StatusInterrupted {
		t.Fatalf("status after a cancel on the other replica = %q, want interrupted", got.Status)
	}
}

// Enqueued runs of one thread sent to both replicas run one at a time, in
// the order they were queued, each exactly once.
func TestEnqueueOrderAcrossReplicas(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ex := newExecutions()
	close(ex.release)
	reps := []*replica{newReplica(t, db, "a", ex, 5*time.Second), newReplica(t, db, "b", ex, 5*time.Second), newReplica(t, db, "c", ex, 5*time.Second)}
	var ids []string
	var actives []*runs.Active
	for i := 0; i < 30; i++ {
		rec := record(fmt.Sprintf("t%d", i%3), runs.Enqueue, true)
		a, err := reps[i%len(reps)].m.Submit(context.Background(), rec)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.RunID)
		actives = append(actives, a)
	}
	for _, a := range actives {
		if got := waitDone(t, a); got.Status != runs.StatusSuccess {
			t.Fatalf("run %s status = %q", got.RunID, got.Status)
		}
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.overlap {
		t.Fatal("two runs of one thread executed at once")
	}
	for i, id := range ids {
		if n := len(ex.started[id]); n != 1 {
			t.Errorf("run %s started %d times", id, n)
		}
		th := fmt.Sprintf("t%d", i%3)
		pos := -1
		for j, x := range ex.order[th] {
			if x == id {
				pos = j
			}
		}
		if pos != i/3 {
			t.Errorf("run %s started at position %d of thread %s, want %d", id, pos, th, i/3)
		}
	}
}

// A run claimed by a replica that stops renewing its lease (it died) is
// resumed by another once the lease expires.
func TestExpiredLeaseIsResumed(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ex := newExecutions()
	close(ex.release)
	ctx := context.Background()
	dead, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema(), Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	rec := record("t1", runs.Reject, false)
	rec.Status = runs.StatusPending
	rec.CreatedAt, rec.UpdatedAt = time.Now(), time.Now()
	if err := dead.Submit(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, resumed, err := dead.Claim(ctx, rec.RunID)
	if err != nil || got == nil || resumed {
		t.Fatalf("claim = %v, %v, %v; want the run, not resumed", got, resumed, err)
	}
	live := newReplica(t, db, "live", ex, time.Second)
	waitStarted(t, ex, rec.RunID)
	a, ok := live.m.Get(rec.RunID)
	if !ok {
		t.Fatal("the live replica does not know the run")
	}
	if st := waitDone(t, a); st.Status != runs.StatusSuccess {
		t.Fatalf("resumed run status = %q, want success", st.Status)
	}
	if again, _, err := dead.Claim(ctx, ""); err != nil || again != nil {
		t.Fatalf("a finished run was claimed again: %v %v", again, err)
	}
}

// A cron due at one time is fired by one replica: the first to record it.
func TestCronFiresOnOneReplica(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	var qs []*pgqueue.Queue
	for i := 0; i < 3; i++ {
		q, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema()})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		qs = append(qs, q)
	}
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{due, due.Add(time.Minute)} {
		fired := 0
		for _, q := range qs {
			mine, err := q.FireCron(ctx, "c1", at)
			if err != nil {
				t.Fatal(err)
			}
			if mine {
				fired++
			}
		}
		if fired != 1 {
			t.Fatalf("cron due at %v fired by %d replicas, want 1", at, fired)
		}
	}
}

// A thread held for a state update on one replica is busy on every replica:
// a second hold and a reject run are refused, an enqueued run waits for the
// release, and an interrupt run waits too, interrupting the queued run but
// not the hold (which is no run); a thread with a running run cannot be
// held.
func TestHoldAcrossReplicas(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ex := newExecutions()
	a, b := newReplica(t, db, "a", ex, 5*time.Second), newReplica(t, db, "b", ex, 5*time.Second)
	ctx := context.Background()
	blocked := record("t2", runs.Reject, true)
	if _, err := a.m.Submit(ctx, blocked); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, ex, blocked.RunID)
	if _, _, err := b.m.Hold(ctx, "t2"); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("hold of a thread with a running run: err = %v, want ErrBusy", err)
	}
	close(ex.release)

	_, release, err := a.m.Hold(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.m.Hold(ctx, "t1"); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("second hold on another replica: err = %v, want ErrBusy", err)
	}
	if _, err := b.m.Submit(ctx, record("t1", runs.Reject, false)); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("reject run on a held thread: err = %v, want ErrBusy", err)
	}
	queued := record("t1", runs.Enqueue, false)
	run, err := b.m.Submit(ctx, queued)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // three poll intervals: the run must still wait
	ex.mu.Lock()
	started := len(ex.started[queued.RunID])
	ex.mu.Unlock()
	if started != 0 {
		t.Fatal("a run started on a held thread")
	}
	if recs, err := b.m.List(ctx, "t1", 0, 0, ""); err != nil || len(recs) != 1 {
		t.Fatalf("runs listed on a held thread = %v, %v; want the queued run only", recs, err)
	}
	interrupting := record("t1", runs.Interrupt, false)
	interrupt, err := b.m.Submit(ctx, interrupting)
	if err != nil {
		t.Fatal(err)
	}
	var holdAction string
	if err := db.Pool().QueryRow(ctx, `SELECT cancel_action FROM runs WHERE thread_id = 't1' AND run_id LIKE 'hold:%'`).Scan(&holdAction); err != nil {
		t.Fatalf("the hold's row: %v", err)
	}
	if holdAction != "" {
		t.Fatalf("an interrupt run on a held thread set the hold's cancel action to %q: a hold is not a run", holdAction)
	}
	release()
	if got := waitDone(t, interrupt); got.Status != runs.StatusSuccess {
		t.Fatalf("interrupt run after the release: status %q", got.Status)
	}
	if got := waitDone(t, run); got.Status != runs.StatusInterrupted {
		t.Fatalf("run queued before the interrupt run: status %q, want interrupted", got.Status)
	}
}

// A thread hold lasts as long as the change made under it, past its lease:
// once the lease it was taken with has expired, a replica that deletes the
// expired holds leaves it in place, and the thread stays busy on every
// replica until the release.
func TestHoldOutlivesItsLease(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ex := newExecutions()
	const lease = 2 * time.Second
	a, b := newReplica(t, db, "a", ex, lease), newReplica(t, db, "b", ex, lease)
	ctx := context.Background()
	_, release, err := a.m.Hold(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var taken time.Time
	if err := db.Pool().QueryRow(ctx, `SELECT lease_until FROM runs WHERE thread_id = 't1' AND run_id LIKE 'hold:%'`).Scan(&taken); err != nil {
		t.Fatalf("the hold's row: %v", err)
	}
	waitFor(t, "the lease the hold was taken with has expired", func() bool {
		var expired bool
		if err := db.Pool().QueryRow(ctx, `SELECT now() > $1`, taken).Scan(&expired); err != nil {
			t.Fatal(err)
		}
		return expired
	})
	if err := b.q.PruneFrames(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.m.Hold(ctx, "t1"); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("hold on another replica once the first hold's lease was due: err = %v, want ErrBusy", err)
	}
	if _, err := b.m.Submit(ctx, record("t1", runs.Reject, false)); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("reject run on a thread held past its lease: err = %v, want ErrBusy", err)
	}
	release()
	run, err := b.m.Submit(ctx, record("t1", runs.Reject, false))
	if err != nil {
		t.Fatalf("run after the release: %v", err)
	}
	if got := waitDone(t, run); got.Status != runs.StatusSuccess {
		t.Fatalf("run after the release: status %q", got.Status)
	}
}

// A change made under a thread hold is fenced by the hold: its writes go
// through while the hold is in place, and are refused (checkpoint.ErrFenced)
// once the hold has been lost — its lease expired, as while its replica is
// paused, and another replica deleted it — and a run has started on the
// thread since: the thread keeps the history written while it was held.
func TestLostHoldFencesItsWrites(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ex := newExecutions()
	close(ex.release)
	const lease = 30 * time.Second // no renewal comes between the expiry and the prune below
	a, b := newReplica(t, db, "a", ex, lease), newReplica(t, db, "b", ex, lease)
	ctx := context.Background()
	cp := db.Checkpointer()
	held, release, err := a.m.Hold(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	first, err := putStep(held, cp, "t1", "", 0, "update")
	if err != nil {
		t.Fatalf("write under the hold: %v", err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE runs SET lease_until = now() - interval '1 second' WHERE thread_id = 't1' AND run_id LIKE 'hold:%'`); err != nil {
		t.Fatal(err)
	}
	if err := b.q.PruneFrames(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	run, err := b.m.Submit(ctx, record("t1", runs.Reject, false))
	if err != nil {
		t.Fatalf("run on the thread once its hold was lost: %v", err)
	}
	waitDone(t, run)
	if _, err := putStep(held, cp, "t1", first, 1, "stale update"); !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("checkpoint under a lost hold: err = %v, want ErrFenced", err)
	}
	if err := db.Store().Put(held, []string{"notes"}, "k", map[string]any{"by": "stale update"}, store.PutOptions{}); !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("store put under a lost hold: err = %v, want ErrFenced", err)
	}
	snap, err := cp.Latest(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.ID != first {
		t.Fatalf("thread's latest checkpoint = %s, want %s, the one written while the hold was in place", snap.ID, first)
	}
}

// With --on-restart fail, a replica starting ends in error the runs whose
// replica died instead of resuming them.
func TestFailOrphans(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	dead, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema(), Lease: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	rec := record("t1", runs.Reject, false)
	rec.CreatedAt, rec.UpdatedAt = time.Now(), time.Now()
	if err := dead.Submit(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if got, _, err := dead.Claim(ctx, rec.RunID); err != nil || got == nil {
		t.Fatalf("claim: %v %v", got, err)
	}
	ex := newExecutions()
	q, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	m := runs.New(runs.Options{Checkpointer: db.Checkpointer(), Queue: q, Poll: 50 * time.Millisecond,
		Exec: func(context.Context, *runs.Record, bool, runs.Emit) (*engine.Result, error) {
			ex.mu.Lock()
			ex.started[rec.RunID] = append(ex.started[rec.RunID], "live")
			ex.mu.Unlock()
			return &engine.Result{Status: engine.StatusCompleted}, nil
		}})
	defer m.Shutdown(ctx)
	// The lease of the dead replica's run expires before this replica starts.
	for {
		var expired bool
		if err := db.Pool().QueryRow(ctx, "SELECT lease_until < now() FROM runs WHERE run_id = $1", rec.RunID).Scan(&expired); err != nil {
			t.Fatal(err)
		}
		if expired {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n, err := m.Recover(ctx, true); err != nil || n != 1 {
		t.Fatalf("Recover(fail) = %d, %v; want the one orphaned run failed", n, err)
	}
	got, err := m.Load(ctx, "t1", rec.RunID)
	if err != nil || got.Status != runs.StatusError || !strings.Contains(got.Error, "on-restart fail") {
		t.Fatalf("orphaned run after Recover(fail) = %+v, %v; want an error saying why", got, err)
	}
	time.Sleep(200 * time.Millisecond)
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if len(ex.started[rec.RunID]) != 0 {
		t.Fatal("a failed orphan was resumed")
	}
}

// Only the replica holding a run stores its frames: one that released it
// (a shutdown) cannot slip late frames between those of the replica that
// took it over, which go on from the last stored frame.
func TestFramesOnlyFromTheHolder(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	first, second := openQueue(t, db, time.Minute), openQueue(t, db, time.Minute)
	rec := submitted(t, first, "t1")
	frame := func(seq int, from string) runs.Entry {
		e := runs.Entry{Seq: seq, Mode: "values"}
		e.Frame.Event, e.Frame.Data = "values", []byte(`"`+from+`"`)
		return e
	}
	publish := func(q *pgqueue.Queue, seq int, from string) {
		t.Helper()
		if err := q.Publish(ctx, rec.RunID, []runs.Entry{frame(seq, from)}); err != nil {
			t.Fatal(err)
		}
	}
	stored := func() []string {
		t.Helper()
		entries, err := first.Frames(ctx, rec.RunID, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, fmt.Sprintf("%d:%s", e.Seq, e.Frame.Data))
		}
		return out
	}
	publish(first, 1, "first") // queued, not claimed: held by none
	if got, _, err := first.Claim(ctx, rec.RunID); err != nil || got == nil {
		t.Fatalf("claim = %v, %v", got, err)
	}
	publish(second, 1, "second") // not the holder
	publish(first, 1, "first")
	if err := first.Release(ctx, []string{rec.RunID}); err != nil {
		t.Fatal(err)
	}
	publish(first, 2, "first") // released: too late
	if got, resumed, err := second.Claim(ctx, rec.RunID); err != nil || got == nil || !resumed {
		t.Fatalf("takeover claim = %v, %v, %v", got, resumed, err)
	}
	publish(second, 2, "second")
	publish(first, 3, "first")
	want := []string{`1:"first"`, `2:"second"`}
	if got := stored(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("stored frames = %v, want %v", got, want)
	}
}
