package pgqueue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/runs/pgqueue"
)

// leaseUntil reads when the lease of run runID expires (zero without a
// lease, or once the run is deleted).
func leaseUntil(t *testing.T, db *postgres.DB, runID string) time.Time {
	t.Helper()
	var until *time.Time
	err := db.Pool().QueryRow(context.Background(), `SELECT lease_until FROM runs WHERE run_id = $1`, runID).Scan(&until)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("read the lease of run %s: %v", runID, err)
	}
	if until == nil {
		return time.Time{}
	}
	return *until
}

// fenceOf returns the fence ctx carries.
func fenceOf(t *testing.T, ctx context.Context) checkpoint.Fence {
	t.Helper()
	f, ok := checkpoint.FenceOf(ctx)
	if !ok {
		t.Fatal("the claimed run's context carries no fence")
	}
	return f
}

// A heartbeat renews a claim only while it holds its run, and says what
// became of it otherwise: superseded by a newer claim (of its own replica,
// after its lease expired, or of another replica), even once
// this replica holds the run again under a newer one (A -> B -> A), whose
// lease the superseded claim's heartbeat leaves as it is; ended under the
// claim; released; deleted.
func TestRenewClaimsRenewsOnlyTheHoldingClaim(t *testing.T) {
	type outcome struct {
		state  runs.ClaimState
		action string
	}
	cases := []struct {
		name string
		// since moves the run on after the first replica's claim, under
		// which the heartbeat is sent.
		since func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context)
		want  outcome
		// renewed is whether the run's lease is extended.
		renewed bool
	}{
		{"held", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {}, outcome{runs.ClaimHeld, ""}, true},
		{"expired, claimed again by its own replica", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {
			claimWhenExpired(t, first, rec.RunID) // a newer generation
			first.Fence(context.Background(), rec.RunID)
		}, outcome{runs.ClaimSuperseded, ""}, false},
		{"held, cancelled", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {
			if _, _, err := second.Cancel(context.Background(), rec.ThreadID, rec.RunID, runs.Interrupt); err != nil {
				t.Fatal(err)
			}
		}, outcome{runs.ClaimHeld, runs.Interrupt}, true},
		{"taken over", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {
			claimWhenExpired(t, second, rec.RunID)
			second.Fence(context.Background(), rec.RunID)
		}, outcome{runs.ClaimSuperseded, ""}, false},
		{"taken over and claimed back", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {
			claimWhenExpired(t, second, rec.RunID)
			second.Fence(context.Background(), rec.RunID)
			claimWhenExpired(t, first, rec.RunID)
			first.Fence(context.Background(), rec.RunID)
		}, outcome{runs.ClaimSuperseded, ""}, false},
		{"failed as an orphan", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {
			waitFor(t, "the lease expires", func() bool {
				n, err := second.FailOrphans(context.Background(), "orphaned")
				if err != nil {
					t.Fatal(err)
				}
				return n == 1
			})
		}, outcome{runs.ClaimSuperseded, ""}, false},
		{"ended under the claim", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {
			rec.Status = runs.StatusSuccess
			if err := first.Finish(claim, rec, false); err != nil {
				t.Fatal(err)
			}
		}, outcome{runs.ClaimEnded, ""}, false},
		{"released", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {
			if err := first.Release(claim, []string{rec.RunID}); err != nil {
				t.Fatal(err)
			}
		}, outcome{runs.ClaimLost, ""}, false},
		{"deleted", func(t *testing.T, first, second *pgqueue.Queue, rec runs.Record, claim context.Context) {
			if err := second.DeleteThread(context.Background(), rec.ThreadID); err != nil {
				t.Fatal(err)
			}
		}, outcome{runs.ClaimLost, ""}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := pgtest.Open(t, postgres.Options{})
			ctx := context.Background()
			first, second, rec, claim := claimedByFirst(t, db)
			c.since(t, first, second, rec, claim)
			before := leaseUntil(t, db, rec.RunID)
			got, err := first.RenewClaims(ctx, []checkpoint.Fence{fenceOf(t, claim)})
			if err != nil {
				t.Fatal(err)
			}
			r, ok := got[rec.RunID]
			if !ok || (outcome{r.State, r.CancelAction}) != c.want || len(got) != 1 {
				t.Fatalf("heartbeat = %+v, want %+v for run %s only", got, c.want, rec.RunID)
			}
			after := leaseUntil(t, db, rec.RunID)
			if renewed := after.After(before); renewed != c.renewed {
				t.Errorf("lease %v -> %v: renewed = %v, want %v", before, after, renewed, c.renewed)
			}
		})
	}
}

// An execution whose run was taken over by another replica, and which this
// replica then claimed again (A -> B -> A) before its execution heard of it,
// renews nothing with its heartbeats: the newer claim's lease is left to
// expire, and the execution stops, logged as a run taken over, once a
// heartbeat tells it its claim is superseded.
func TestHeartbeatOfASupersededExecutionStopsIt(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	const lease = time.Second
	held, hold := make(chan struct{}), make(chan struct{})
	paused := newGatedQueue(openQueue(t, db, lease))
	t.Cleanup(func() {
		paused.heartbeats.release()
		paused.claims.release()
	})
	var log logBuffer
	m := newManager(t, db, paused, lease, func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		close(held)
		<-hold // a node that does not look at its context
		return nil, errors.New("stale execution")
	}, runs.Options{Log: slog.New(slog.NewTextHandler(&log, nil))})
	rec := record("t1", runs.Reject, false)
	run, err := m.Submit(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the run executes", held)
	t.Cleanup(func() { close(hold) })
	paused.heartbeats.shut()
	paused.claims.shut()

	// Another replica takes the run over, and dies: the run comes back to
	// this replica's queue under a newer claim, its execution not told.
	second := openQueue(t, db, lease)
	claimWhenExpired(t, second, rec.RunID)
	second.Fence(ctx, rec.RunID)
	claimWhenExpired(t, paused.Queue, rec.RunID)
	claimed := readRow(t, db, rec.RunID)
	if claimed.Owner != paused.Owner() || claimed.Gen != 3 {
		t.Fatalf("run after it came back = %+v, want held by the first replica under generation 3", claimed)
	}
	until := leaseUntil(t, db, rec.RunID)

	paused.heartbeats.release()
	waitFor(t, "the superseded execution is stopped", run.LeaseLost)
	if !strings.Contains(log.String(), "run taken over by another replica") || !strings.Contains(log.String(), "refused=\"lease renewal\"") {
		t.Errorf("the stop is not logged as a takeover refused at the lease renewal; log:\n%s", log.String())
	}
	if strings.Contains(log.String(), "run lease lost") {
		t.Errorf("the superseded execution is logged as a lost lease, not a takeover; log:\n%s", log.String())
	}
	if got := leaseUntil(t, db, rec.RunID); !got.Equal(until) {
		t.Errorf("the newer claim's lease moved from %v to %v: the superseded execution's heartbeats renewed it", until, got)
	}
	if got := readRow(t, db, rec.RunID); got != claimed {
		t.Errorf("run = %+v, want it as the newer claim left it: %+v", got, claimed)
	}
}

// endRacer is a replica's queue that holds each run's end, once stored,
// until a heartbeat sent after it has been answered: that heartbeat finds
// the run ended while the run has not yet closed here, as one does that
// comes between the end's commit and the run's close.
type endRacer struct {
	*pgqueue.Queue
	ended atomic.Bool
	beat  chan struct{} // closed once a heartbeat sent after an end is answered
	once  sync.Once
}

func (e *endRacer) Finish(ctx context.Context, rec runs.Record, forget bool) error {
	err := e.Queue.Finish(ctx, rec, forget)
	e.ended.Store(true)
	select {
	case <-e.beat:
	case <-time.After(30 * time.Second): // the test fails on what follows
	}
	return err
}

func (e *endRacer) answered(afterEnd bool) {
	if afterEnd {
		e.once.Do(func() { close(e.beat) })
	}
}

func (e *endRacer) RenewClaims(ctx context.Context, claims []checkpoint.Fence) (map[string]runs.ClaimRenewal, error) {
	afterEnd := e.ended.Load()
	defer e.answered(afterEnd)
	return e.Queue.RenewClaims(ctx, claims)
}

func (e *endRacer) Heartbeat(ctx context.Context, runIDs []string) (map[string]string, error) {
	afterEnd := e.ended.Load()
	defer e.answered(afterEnd)
	return e.Queue.Heartbeat(ctx, runIDs)
}

// A heartbeat that comes between the store of a run's end and the run's
// close here finds the run ended under its claim, not lost: the run ends as
// it should — its end told (OnFinish), its end frame stored — for a run
// whose record stays and for one whose end deletes it (stateless).
func TestHeartbeatDuringARunsEnd(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless %v", stateless), func(t *testing.T) {
			db := pgtest.Open(t, postgres.Options{})
			const lease = time.Second
			q := &endRacer{Queue: openQueue(t, db, lease), beat: make(chan struct{})}
			var log logBuffer
			var told atomic.Int32
			m := newManager(t, db, q, lease, func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
				emit("values", "values", "done")
				return &engine.Result{Status: engine.StatusCompleted, State: map[string]any{}}, nil
			}, runs.Options{Log: slog.New(slog.NewTextHandler(&log, nil)), OnFinish: func(runs.Record, *engine.Result) { told.Add(1) }})
			rec := record("t1", runs.Reject, false)
			rec.Stateless = stateless
			run, err := m.Submit(context.Background(), rec)
			if err != nil {
				t.Fatal(err)
			}
			waitDone(t, run)
			select {
			case <-q.beat:
			default:
				t.Fatal("no heartbeat came between the run's end and its close")
			}
			if run.LeaseLost() || strings.Contains(log.String(), "run lease lost") {
				t.Errorf("the run was stopped as one whose lease was lost after its end was stored; log:\n%s", log.String())
			}
			if n := told.Load(); n != 1 {
				t.Errorf("the run's end was told %d times, want once", n)
			}
			if stateless {
				return // its record, and so its frames' run, are gone
			}
			waitFor(t, "the run's end frame is stored", func() bool {
				got := storedFrames(t, q.Queue, rec.RunID)
				return len(got) > 0 && strings.HasSuffix(got[len(got)-1], ":")
			})
		})
	}
}

// benchmarkHeartbeat measures one heartbeat of a replica executing n runs.
func benchmarkHeartbeat(b *testing.B, n int, beat func(q *pgqueue.Queue, ids []string, claims []checkpoint.Fence) error) {
	db := pgtest.Open(b, postgres.Options{})
	ctx := context.Background()
	q, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema(), Lease: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	ids := make([]string, n)
	claims := make([]checkpoint.Fence, n)
	for i := range ids {
		rec := record(fmt.Sprintf("t%d", i), runs.Reject, false)
		rec.Status, rec.CreatedAt, rec.UpdatedAt = runs.StatusPending, time.Now(), time.Now()
		if err := q.Submit(ctx, rec); err != nil {
			b.Fatal(err)
		}
		if got, _, err := q.Claim(ctx, rec.RunID); err != nil || got == nil {
			b.Fatalf("claim = %v, %v", got, err)
		}
		f, _ := checkpoint.FenceOf(q.Fence(ctx, rec.RunID))
		ids[i], claims[i] = rec.RunID, f
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := beat(q, ids, claims); err != nil {
			b.Fatal(err)
		}
	}
}

// Heartbeats by claim (RenewClaims) against heartbeats by owner
// (Heartbeat), for 1 and 100 runs executing on the replica.
func BenchmarkHeartbeat(b *testing.B) {
	beats := map[string]func(q *pgqueue.Queue, ids []string, claims []checkpoint.Fence) error{
		"by claim": func(q *pgqueue.Queue, ids []string, claims []checkpoint.Fence) error {
			_, err := q.RenewClaims(context.Background(), claims)
			return err
		},
		"by owner": func(q *pgqueue.Queue, ids []string, claims []checkpoint.Fence) error {
			_, err := q.Heartbeat(context.Background(), ids)
			return err
		},
	}
	for _, n := range []int{1, 100} {
		for _, name := range []string{"by claim", "by owner"} {
			b.Run(fmt.Sprintf("%s/%d runs", name, n), func(b *testing.B) { benchmarkHeartbeat(b, n, beats[name]) })
		}
	}
}

// A prune of old stream frames and expired holds that takes long (here, one
// that does not return until the test ends) does not hold up the
// heartbeats: a run executing on its replica for several leases keeps its
// lease and its claim, another replica claiming runs all along never takes
// it over, and the run executes once.
func TestSlowPruneDoesNotDelayHeartbeats(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	const lease = time.Second
	slow := newGatedQueue(openQueue(t, db, lease))
	slow.prunes.shut()
	finish := make(chan struct{})
	var calls atomic.Int32
	exec := func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		calls.Add(1)
		select {
		case <-finish:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		return &engine.Result{Status: engine.StatusCompleted, State: map[string]any{}}, nil
	}
	m := newManager(t, db, slow, lease, exec, runs.Options{})
	rec := record("t1", runs.Reject, false)
	run, err := m.Submit(ctx, rec)
	if err != nil {
		close(finish)
		t.Fatal(err)
	}
	// Its replica, the only one yet, claims it.
	waitFor(t, "the run is claimed", func() bool { return readRow(t, db, rec.RunID).Status == runs.StatusRunning })
	claimed := readRow(t, db, rec.RunID)
	if claimed.Owner != slow.Owner() {
		close(finish)
		t.Fatalf("submitted run = %+v, want running on the replica it was submitted to", claimed)
	}
	// The second replica starts once the run is held, so that only a lapsed
	// lease would let it take the run.
	newManager(t, db, openQueue(t, db, lease), lease, exec, runs.Options{})
	t.Cleanup(func() { close(finish) }) // before the managers' shutdown
	// The first prune begins within a minute of the manager's start (at
	// once, since prunes run beside the heartbeats).
	select {
	case <-slow.prunes.reached:
	case <-time.After(90 * time.Second):
		t.Fatal("the replica never pruned")
	}
	var until time.Time
	if err := db.Pool().QueryRow(ctx, `SELECT now() + make_interval(secs => $1)`, 3*lease.Seconds()).Scan(&until); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three leases have passed since the prune began", func() bool {
		var passed bool
		if err := db.Pool().QueryRow(ctx, `SELECT now() > $1`, until).Scan(&passed); err != nil {
			t.Fatal(err)
		}
		return passed
	})
	if r := readRow(t, db, rec.RunID); r.Owner != slow.Owner() || r.Gen != claimed.Gen {
		t.Fatalf("run during the slow prune = %+v, want still held by its replica under generation %d", r, claimed.Gen)
	}
	if run.LeaseLost() {
		t.Fatal("the run lost its lease during the slow prune")
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("executions = %d, want 1", n)
	}
}
