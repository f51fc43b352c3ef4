package pgqueue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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

// gate holds whoever waits at it while it is shut, as a paused process
// holds its goroutines; reached is told each time someone waits there shut.
type gate struct {
	mu      sync.Mutex
	open    chan struct{} // closed while the gate is open
	reached chan struct{}
}

func newGate() *gate {
	g := &gate{open: make(chan struct{}), reached: make(chan struct{}, 1)}
	close(g.open)
	return g
}

func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
		return nil
	default:
	}
	select {
	case g.reached <- struct{}{}:
	default:
	}
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// gatedQueue is a replica's queue whose heartbeats, claim loop, record
// saves and prunes can be held, as when its process is paused (a GC pause,
// SIGSTOP) or cut off from the database, or a statement is slow, and which
// keeps what its run records' saves and ends answered.
type gatedQueue struct {
	*pgqueue.Queue
	heartbeats, claims, saves, prunes *gate

	mu       sync.Mutex
	saved    []error
	finished []error
}

func newGatedQueue(q *pgqueue.Queue) *gatedQueue {
	return &gatedQueue{Queue: q, heartbeats: newGate(), claims: newGate(), saves: newGate(), prunes: newGate()}
}

func (g *gatedQueue) PruneFrames(ctx context.Context, age time.Duration) error {
	if err := g.prunes.wait(ctx); err != nil {
		return err
	}
	return g.Queue.PruneFrames(ctx, age)
}

func (g *gatedQueue) Heartbeat(ctx context.Context, runIDs []string) (map[string]string, error) {
	if err := g.heartbeats.wait(ctx); err != nil {
		return nil, err
	}
	return g.Queue.Heartbeat(ctx, runIDs)
}

func (g *gatedQueue) RenewClaims(ctx context.Context, claims []checkpoint.Fence) (map[string]runs.ClaimRenewal, error) {
	if err := g.heartbeats.wait(ctx); err != nil {
		return nil, err
	}
	return g.Queue.RenewClaims(ctx, claims)
}

func (g *gatedQueue) Claim(ctx context.Context, runID string) (*runs.Record, bool, error) {
	if runID == "" { // the claim loop
		if err := g.claims.wait(ctx); err != nil {
			return nil, false, err
		}
	}
	return g.Queue.Claim(ctx, runID)
}

func (g *gatedQueue) Save(ctx context.Context, rec runs.Record) error {
	g.saves.wait(context.Background())
	err := g.Queue.Save(ctx, rec)
	g.mu.Lock()
	g.saved = append(g.saved, err)
	g.mu.Unlock()
	return err
}

func (g *gatedQueue) Finish(ctx context.Context, rec runs.Record, forget bool) error {
	err := g.Queue.Finish(ctx, rec, forget)
	g.mu.Lock()
	g.finished = append(g.finished, err)
	g.mu.Unlock()
	return err
}

func (g *gatedQueue) answers() (saved, finished []error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]error(nil), g.saved...), append([]error(nil), g.finished...)
}

// logBuffer collects a manager's log.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newManager starts a run manager on q, shut down when the test ends.
func newManager(t *testing.T, db *postgres.DB, q runs.Queue, lease time.Duration, exec runs.Executor, opts runs.Options) *runs.Manager {
	t.Helper()
	opts.Checkpointer, opts.Exec, opts.Queue = db.Checkpointer(), exec, q
	opts.Poll, opts.Heartbeat = 100*time.Millisecond, lease/4
	m := runs.New(opts)
	if _, err := m.Recover(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Shutdown(ctx)
	})
	return m
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

func waitClosed(t *testing.T, what string, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting until %s", what)
	}
}

// A replica paused in the middle of a run past its lease, while another
// replica took the run over and ended it, goes on once resumed (its
// heartbeats still held, so that it has not heard its lease is gone): its
// end is refused and logged, its late frames are not stored, and it tells
// nobody the run ended (OnFinish). The run keeps the record, status and
// stream the replica that took it over ended it with.
func TestStaleReplicaWritesNothingOnceTakenOver(t *testing.T) {
	db := pgtest.Open(t, postgres.Options{})
	ctx := context.Background()
	const lease = time.Second
	held, hold := make(chan struct{}), make(chan struct{})
	paused := newGatedQueue(openQueue(t, db, lease))
	t.Cleanup(func() { paused.heartbeats.release(); paused.claims.release() })
	var log logBuffer
	var told atomic.Int32
	first := newManager(t, db, paused, lease, func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		emit("values", "values", "first")
		close(held)
		<-hold // a node that does not look at its context
		for i := 0; i < 20; i++ {
			emit("values", "values", "late")
		}
		return &engine.Result{Status: engine.StatusCompleted, State: map[string]any{}}, nil
	}, runs.Options{Log: slog.New(slog.NewTextHandler(&log, nil)), OnFinish: func(runs.Record, *engine.Result) { told.Add(1) }})
	rec := record("t1", runs.Reject, false)
	run, err := first.Submit(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the run executes on the first replica", held)
	waitFor(t, "the first replica stored its first frames", func() bool { return len(storedFrames(t, paused.Queue, rec.RunID)) >= 2 })
	paused.heartbeats.shut()
	paused.claims.shut()

	newManager(t, db, openQueue(t, db, lease), lease, func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		for i := 0; i < 3; i++ {
			emit("values", "values", "second")
		}
		return &engine.Result{Status: engine.StatusCompleted, State: map[string]any{}}, nil
	}, runs.Options{})
	var ended runs.Record
	waitFor(t, "the second replica ended the run", func() bool {
		got, err := paused.Load(ctx, rec.ThreadID, rec.RunID)
		if err != nil {
			t.Fatal(err)
		}
		ended = got
		return runs.Final(got.Status)
	})
	endedRow := readRow(t, db, rec.RunID)
	var endedFrames []string
	waitFor(t, "the second replica stored its end frame", func() bool {
		endedFrames = storedFrames(t, paused.Queue, rec.RunID)
		return len(endedFrames) > 0 && strings.HasSuffix(endedFrames[len(endedFrames)-1], ":")
	})

	close(hold) // the first replica resumes
	waitClosed(t, "the run stops on the first replica", run.Done())
	if !run.LeaseLost() {
		t.Error("the run on the resumed replica is not marked as taken over")
	}
	switch _, finished := paused.answers(); {
	case len(finished) == 1 && errors.Is(finished[0], checkpoint.ErrFenced):
		if !strings.Contains(log.String(), "run taken over by another replica") {
			t.Errorf("the resumed replica did not log that the run was taken over; log:\n%s", log.String())
		}
	case len(finished) == 0 && strings.Contains(log.String(), "run lease lost"):
		// A heartbeat sent just before the pause answered after the
		// takeover: the replica knew before it ended the run.
	default:
		t.Errorf("the resumed replica's end of the run: %v, want one refused with ErrFenced; log:\n%s", finished, log.String())
	}
	if n := told.Load(); n != 0 {
		t.Errorf("the resumed replica told of the run's end %d times, want none", n)
	}
	got, err := first.Load(ctx, rec.ThreadID, rec.RunID)
	if err != nil || got.Status != ended.Status || !got.UpdatedAt.Equal(ended.UpdatedAt) || got.Error != "" {
		t.Errorf("run record = %+v (%v), want the one the second replica ended it with: %+v", got, err, ended)
	}
	if row := readRow(t, db, rec.RunID); row != endedRow {
		t.Errorf("run = %+v, want it as the second replica ended it: %+v", row, endedRow)
	}
	// The resumed replica's frames would go on after the stored end.
	if got := storedFrames(t, paused.Queue, rec.RunID); strings.Join(got, " ") != strings.Join(endedFrames, " ") {
		t.Errorf("stored frames = %v, want the second replica's end of the stream %v", got, endedFrames)
	}
}

// A run taken over by another replica comes back to the first one under a
// newer claim (A -> B -> A) while the first one's old execution of it is
// still under way, paused before its running record is written, or in a
// node: that execution stops (logged) and writes nothing — its record save
// is refused, and it does not end the run — and the run then goes on, under
// the current claim, to its end.
func TestReclaimedRunStopsItsStaleExecution(t *testing.T) {
	for _, where := range []string{"record", "node"} {
		t.Run("paused in its "+where, func(t *testing.T) {
			db := pgtest.Open(t, postgres.Options{})
			ctx := context.Background()
			const lease = time.Second
			held, hold := make(chan struct{}), make(chan struct{})
			paused := newGatedQueue(openQueue(t, db, lease))
			t.Cleanup(func() {
				paused.heartbeats.release()
				paused.claims.release()
				paused.saves.release()
			})
			var calls atomic.Int32
			var log logBuffer
			m := newManager(t, db, paused, lease, func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
				if calls.Add(1) == 1 && where == "node" {
					close(held)
					<-hold // a node that does not look at its context
					return nil, errors.New("stale execution")
				}
				emit("values", "values", "current")
				return &engine.Result{Status: engine.StatusCompleted, State: map[string]any{}}, nil
			}, runs.Options{Log: slog.New(slog.NewTextHandler(&log, nil))})
			paused.heartbeats.shut()
			paused.claims.shut()
			if where == "record" {
				paused.saves.shut()
			}
			rec := record("t1", runs.Reject, false)
			submitted := make(chan *runs.Active, 1)
			go func() {
				a, err := m.Submit(ctx, rec)
				if err != nil {
					t.Error(err)
				}
				submitted <- a
			}()
			if where == "record" {
				waitClosed(t, "the run's running record is on its way", paused.saves.reached)
			} else {
				waitClosed(t, "the run executes", held)
			}

			// Another replica takes the run over, writes its record, and
			// is paused in turn.
			second := openQueue(t, db, lease)
			var taken *runs.Record
			waitFor(t, "the second replica takes the run over", func() bool {
				got, _, err := second.Claim(ctx, rec.RunID)
				if err != nil {
					t.Fatal(err)
				}
				taken = got
				return got != nil
			})
			secondCtx := second.Fence(ctx, rec.RunID)
			taken.Status = runs.StatusRunning
			taken.Metadata = map[string]any{"by": "second"}
			if err := second.Save(secondCtx, *taken); err != nil {
				t.Fatalf("save under the current claim: %v", err)
			}
			// The first replica claims it again, under a newer claim.
			paused.claims.release()
			waitFor(t, "the first replica claims the run again", func() bool {
				r := readRow(t, db, rec.RunID)
				return r.Owner == paused.Owner() && r.Gen == 3
			})
			if where == "record" {
				paused.saves.release()
			} else {
				close(hold)
			}
			run := <-submitted
			waitClosed(t, "the stale execution stops", run.Done())
			if !run.LeaseLost() {
				t.Error("the stale execution is not marked as taken over")
			}
			saved, finished := paused.answers()
			if where == "record" && (len(saved) != 1 || !errors.Is(saved[0], checkpoint.ErrFenced)) {
				t.Errorf("the stale execution's record save: %v, want one refused with ErrFenced", saved)
			}
			for _, err := range finished {
				if err == nil {
					t.Errorf("the stale execution ended the run")
				}
			}
			if !strings.Contains(log.String(), "run taken over by another replica") {
				t.Errorf("the stale execution's stop is not logged; log:\n%s", log.String())
			}
			// The current claim is handed back once the stale execution has
			// stopped: the run goes on (here, the only replica claiming) from
			// the record the second replica saved, and ends.
			var got runs.Record
			waitFor(t, "the run ends under its current claim", func() bool {
				var err error
				got, err = paused.Load(ctx, rec.ThreadID, rec.RunID)
				return err == nil && runs.Final(got.Status)
			})
			if got.Status != runs.StatusSuccess || got.Error != "" || got.Metadata["by"] != "second" {
				t.Fatalf("run ended %q (error %q, metadata %v), want success from the record the second replica saved", got.Status, got.Error, got.Metadata)
			}
			// Under the claim after the one handed back (4); or, when the
			// stale execution had stopped before this replica's claim loop
			// looked at the claim it made again, under that claim (3).
			if r := readRow(t, db, rec.RunID); r.Gen != 3 && r.Gen != 4 {
				t.Errorf("run ended under generation %d, want 4 (the claim after the one handed back) or 3 (the claim made again); log:\n%s", r.Gen, log.String())
			}
			if want := map[string]int32{"record": 1, "node": 2}[where]; calls.Load() != want {
				t.Errorf("executions = %d, want %d", calls.Load(), want)
			}
			if got := storedFrames(t, paused.Queue, rec.RunID); !strings.Contains(fmt.Sprint(got), `"current"`) {
				t.Errorf("stored frames %v lack those of the execution under the current claim", got)
			}
		})
	}
}
