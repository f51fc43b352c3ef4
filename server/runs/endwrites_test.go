package runs_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/runs"
)

func init() {
	node.MustRegister(node.Type{
		Name:   "runstest_count",
		Config: "{}",
		New: func(node.Builder) (node.Node, error) {
			return node.Func(func(context.Context, *node.Input) (node.Update, error) {
				return node.Update{"count": 1}, nil
			}), nil
		},
	})
}

// A run of the engine whose checkpoints are written behind it has its last
// ones written with the record of its end and what its writers handed
// over, in one commit (its start's record, carried by a first checkpoint,
// is then not written at all); when they cannot be written, the run ends
// in error on record and its thread keeps no checkpoint of it.
func TestRunEndRecordGoesWithItsLastCheckpoints(t *testing.T) {
	g, diags := runtime.LoadSource("count.cue", load.GenerateGraph(3, "runstest_count", ""))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "written together", true: "a failed write"}[fail], func(t *testing.T) {
			db := openDB(t)
			failing := &checkpointtest.FailingBatches{Checkpointer: db.Checkpointer()}
			failing.Fail.Store(fail)
			cp := &batchLog{Checkpointer: failing}
			eng := engine.New(g, cp, engine.Options{})
			var started atomic.Uint64
			h := newHarness(t, db, runs.Options{
				Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
					started.Store(db.Stats().Commits)
					return eng.Run(ctx, engine.Request{ThreadID: rec.ThreadID, RunID: rec.RunID, Input: map[string]any{}}, nil)
				}})
			a, err := h.m.SubmitAttached(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g"}, runs.Attach{Waited: true})
			if err != nil {
				t.Fatal(err)
			}
			rec := waitDone(t, a)
			commits := db.Stats().Commits - started.Load()
			snap, serr := db.Checkpointer().Latest(context.Background(), "t1")
			if !fail {
				if serr != nil || string(snap.Values["count"]) != "3" {
					t.Fatalf("the thread after the run: %v %v", snap, serr)
				}
				// Checkpoints the writer's timer wrote before the run's end
				// (on a busy machine) took commits of their own; the end's
				// record took none: it went with the last checkpoint.
				batches := cp.written()
				if rec.Status != runs.StatusSuccess || commits != uint64(len(batches)) {
					t.Errorf("status %q after %d commits for %d checkpoint batches, want success and a commit per batch", rec.Status, commits, len(batches))
				}
				if n := len(batches); n == 0 || batches[n-1].ids[len(batches[n-1].ids)-1] != snap.ID || !carriesEnd(batches[n-1].carried, rec.RunID) {
					t.Errorf("the last checkpoint %s and the run's end were not written together: %+v", snap.ID, batches)
				}
				if got := storedRecord(t, h.st, "t1", rec.RunID); got != runs.StatusSuccess {
					t.Errorf("stored status %q, want success", got)
				}
				return
			}
			if rec.Status != runs.StatusError || !strings.Contains(rec.Error, "disk on fire") {
				t.Errorf("status %q (%s), want an error naming the failed write", rec.Status, rec.Error)
			}
			if got := storedRecord(t, h.st, "t1", rec.RunID); got != runs.StatusError {
				t.Errorf("stored status %q, want error", got)
			}
			if !errors.Is(serr, checkpoint.ErrNotFound) {
				t.Errorf("the thread has checkpoints of a run whose writes failed: %v %v", snap, serr)
			}
		})
	}
}

// batchLog is the engine's checkpointer in a test: it records the
// checkpoints of each batch written and the store puts it carries.
type batchLog struct {
	checkpoint.Checkpointer
	mu      sync.Mutex
	batches []loggedBatch
}

// loggedBatch is one batch a batchLog wrote.
type loggedBatch struct {
	ids     []string
	carried []store.BatchPut
}

// PutBatch implements checkpoint.BatchPutter.
func (l *batchLog) PutBatch(ctx context.Context, puts []checkpoint.PutRequest) error {
	if err := l.Checkpointer.(checkpoint.BatchPutter).PutBatch(ctx, puts); err != nil {
		return err
	}
	b := loggedBatch{}
	for _, p := range puts {
		b.ids = append(b.ids, p.Checkpoint.ID)
	}
	if carry := checkpoint.CarryOf(ctx); carry != nil {
		b.carried = carry.Build()
	}
	l.mu.Lock()
	l.batches = append(l.batches, b)
	l.mu.Unlock()
	return nil
}

// written returns the batches written so far.
func (l *batchLog) written() []loggedBatch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.batches)
}

// carriesEnd reports whether puts hold the record of a run's successful end.
func carriesEnd(puts []store.BatchPut, runID string) bool {
	for _, p := range puts {
		if p.Key == runID && p.Value["status"] == runs.StatusSuccess {
			return true
		}
	}
	return false
}

// carriedPuts is the engine's checkpointer in a test: it records the store
// puts its batch writes carry.
type carriedPuts struct {
	checkpoint.Checkpointer
	mu   sync.Mutex
	puts []store.BatchPut
}

// PutBatch implements checkpoint.BatchPutter.
func (c *carriedPuts) PutBatch(ctx context.Context, puts []checkpoint.PutRequest) error {
	c.record(ctx)
	return c.Checkpointer.(checkpoint.BatchPutter).PutBatch(ctx, puts)
}

// Put implements checkpoint.Checkpointer.
func (c *carriedPuts) Put(ctx context.Context, cp checkpoint.Checkpoint, blobs []checkpoint.Blob) error {
	c.record(ctx)
	return c.Checkpointer.Put(ctx, cp, blobs)
}

// record records the puts a write in ctx carries.
func (c *carriedPuts) record(ctx context.Context) {
	if carry := checkpoint.CarryOf(ctx); carry != nil {
		c.mu.Lock()
		c.puts = append(c.puts, carry.Build()...)
		c.mu.Unlock()
	}
}

// The record of a run's end, written with its last checkpoints, tells the
// Store it is new (no read of an item to replace) only when no record of
// the run was written before: a run whose caller waits, whose record its
// first checkpoint was to carry (unless a checkpoint written before the
// run's end carried it), and not one whose record was stored when it
// started.
func TestRunEndRecordIsNewWhenNeverWritten(t *testing.T) {
	g, diags := runtime.LoadSource("count.cue", load.GenerateGraph(3, "runstest_count", ""))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, waited := range []bool{true, false} {
		t.Run(map[bool]string{true: "waited", false: "announced"}[waited], func(t *testing.T) {
			db := openDB(t)
			cp := &carriedPuts{Checkpointer: db.Checkpointer()}
			eng := engine.New(g, cp, engine.Options{})
			h := newHarness(t, db, runs.Options{
				Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
					return eng.Run(ctx, engine.Request{ThreadID: rec.ThreadID, RunID: rec.RunID, Input: map[string]any{}}, nil)
				}})
			a, err := h.m.SubmitAttached(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g"}, runs.Attach{Waited: waited})
			if err != nil {
				t.Fatal(err)
			}
			rec := waitDone(t, a)
			if got := storedRecord(t, h.st, "t1", rec.RunID); got != runs.StatusSuccess {
				t.Fatalf("stored status %q, want success", got)
			}
			var records []store.BatchPut
			for _, p := range cp.puts {
				if p.Key == rec.RunID {
					records = append(records, p)
				}
			}
			// The end's record is the last; a first checkpoint written
			// before the run's end (its writer's timer) carried the start's.
			if len(records) == 0 || records[len(records)-1].Value["status"] != runs.StatusSuccess {
				t.Fatalf("the run's records carried by its checkpoints: %+v, want the end's last", records)
			}
			if want := waited && len(records) == 1; records[len(records)-1].New != want {
				t.Errorf("the end's record marked new: %v, want %v (records carried: %+v)", !want, want, records)
			}
			for _, r := range records[:len(records)-1] {
				if r.New {
					t.Errorf("the start's record carried marked new: %+v", r)
				}
			}
		})
	}
}
