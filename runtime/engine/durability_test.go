package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

// checkpointerMode is a checkpointer and the durability runs use on it.
type checkpointerMode struct {
	name string
	mode checkpoint.Durability
	open func(t *testing.T) checkpoint.Checkpointer
}

// checkpointerModes are the in-memory checkpointer (whose writes are made
// as they come in every mode) and Badger in each durability mode.
func checkpointerModes(t *testing.T) []checkpointerMode {
	t.Helper()
	modes := []checkpointerMode{{name: "memory", open: func(*testing.T) checkpoint.Checkpointer { return memory.New() }}}
	for _, m := range []checkpoint.Durability{checkpoint.DurabilitySync, checkpoint.DurabilityAsync, checkpoint.DurabilityExit} {
		modes = append(modes, checkpointerMode{name: "badger " + string(m), mode: m, open: func(t *testing.T) checkpoint.Checkpointer {
			return openBadger(t).Checkpointer()
		}})
	}
	return modes
}

func openBadger(t *testing.T) *badger.DB {
	t.Helper()
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDurabilityModes runs a thread whose third node runs until the run is
// cancelled, in each durability mode: while it runs, the checkpoints of the
// steps before it are written at once (sync), soon (async), or not yet
// (exit); once the run ends, every mode has written them all, and the
// thread waits at the node that was cut.
func TestDurabilityModes(t *testing.T) {
	g := compileGraph(t, `
state: {x: {type: "int"}, y: {type: "int"}}
start: "a"
nodes: {
	a: {type: "enginetest", config: {write: x: 1}, next: "b"}
	b: {type: "enginetest", config: {write: y: 2}, next: "slow"}
	slow: {type: "enginetest", config: {sleep: "60s"}, next: "END"}
}`)
	for _, mode := range []checkpoint.Durability{checkpoint.DurabilitySync, checkpoint.DurabilityAsync, checkpoint.DurabilityExit, ""} {
		t.Run(fmt.Sprintf("%q", mode), func(t *testing.T) {
			cp := openBadger(t).Checkpointer()
			res := cutAt(t, engine.New(g, cp, engine.Options{}), mode, event.NodeStart, "slow", func() {
				waitsAtSlow := func() bool {
					snap, err := cp.Latest(context.Background(), "x")
					return err == nil && len(snap.Next) == 1 && snap.Next[0].Node == "slow"
				}
				switch mode {
				case checkpoint.DurabilitySync:
					if !waitsAtSlow() {
						t.Error("sync: the checkpoint before slow was not written when slow started")
					}
				case checkpoint.DurabilityExit:
					time.Sleep(50 * time.Millisecond)
					if _, err := cp.Latest(context.Background(), "x"); !errors.Is(err, checkpoint.ErrNotFound) {
						t.Errorf("exit: a checkpoint was written while the run went on (Latest: %v)", err)
					}
				default:
					deadline := time.Now().Add(10 * time.Second)
					for !waitsAtSlow() && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
					if !waitsAtSlow() {
						t.Error("async: the checkpoints before slow were not written while it ran")
					}
				}
			})
			if res.Status != engine.StatusError || !errors.Is(res.Err, context.Canceled) {
				t.Fatalf("status %s err %v", res.Status, res.Err)
			}
			snap, err := cp.Latest(context.Background(), "x")
			if err != nil || len(snap.Next) != 1 || snap.Next[0].Node != "slow" {
				t.Fatalf("the thread should wait at slow: %+v %v", snap, err)
			}
			if string(snap.Values["x"]) != "1" || string(snap.Values["y"]) != "2" {
				t.Errorf("values at slow: %s", snap.Values)
			}
			list, err := cp.History(context.Background(), "x", checkpoint.ListOptions{})
			if err != nil || len(list) != 4 {
				t.Fatalf("history: %d checkpoints (%v), want the input's, the start's, a's and b's", len(list), err)
			}
		})
	}
}

// cutAt runs a new turn of thread "x" in mode, calls at when an event of
// type typ from node is delivered, then cancels the run and returns its
// result.
func cutAt(t *testing.T, eng *engine.Engine, mode checkpoint.Durability, typ, node string, at func()) *engine.Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, results := eng.Stream(ctx, engine.Request{ThreadID: "x", Input: map[string]any{}, Durability: mode})
	for ev := range events {
		if ev.Type == typ && ev.Node == node {
			at()
			cancel()
		}
	}
	return <-results
}

// TestFailedWriteBehindFailsTheRun: when the checkpoints written behind a
// run cannot be written, the run fails with that error and the thread stays
// at the checkpoint written last, from which the next run goes on (the
// state the failed run reached is not kept anywhere).
func TestFailedWriteBehindFailsTheRun(t *testing.T) {
	g := compileGraph(t, `
state: n: {type: "int"}
start: "inc"
nodes: inc: {type: "enginetest", config: {exprs: n: "n + 1"}, next: "END"}`)
	cp := &checkpointtest.FailingBatches{Checkpointer: openBadger(t).Checkpointer()}
	eng := engine.New(g, cp, engine.Options{})
	ctx := context.Background()
	turn := func() *engine.Result {
		res, _ := eng.Run(ctx, engine.Request{ThreadID: "x", Input: map[string]any{}, Durability: checkpoint.DurabilityAsync}, nil)
		return res
	}
	if res := turn(); res.Status != engine.StatusCompleted || res.State["n"] != 1 {
		t.Fatalf("first run: %s %v %v", res.Status, res.State, res.Err)
	}
	cp.Fail.Store(true)
	res := turn()
	if res.Status != engine.StatusError || res.Err == nil || !errors.Is(res.Err, checkpointtest.ErrBatchRefused) {
		t.Fatalf("run whose writes fail: %s %v", res.Status, res.Err)
	}
	snap, err := cp.Latest(ctx, "x")
	if err != nil || string(snap.Values["n"]) != "1" {
		t.Fatalf("after the failed run the thread should be at n=1: %v %v", snap, err)
	}
	cp.Fail.Store(false)
	if res := turn(); res.Status != engine.StatusCompleted || res.State["n"] != 2 {
		t.Fatalf("the run after: %s n=%v %v, want n=2", res.Status, res.State["n"], res.Err)
	}
}

// TestInvalidDurability: a request names a mode that does not exist.
func TestInvalidDurability(t *testing.T) {
	eng := engine.New(compileGraph(t, `
start: "a"
nodes: a: {type: "enginetest", next: "END"}`), memory.New(), engine.Options{})
	_, err := eng.Run(context.Background(), engine.Request{ThreadID: "x", Durability: "eventually"}, nil)
	if err == nil || !strings.Contains(err.Error(), `durability "eventually"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestBadgerCommitsPerSuperStep counts the Badger commits and fsyncs a
// super-step of one node costs in each durability mode: the difference
// between a run of 60 steps and one of 10, over 50. In sync mode a step of
// one task commits its checkpoint with the task's update applied (no
// pending write); in async and exit modes steps are written in batches. Only
// the checkpoint that ends a run is fsynced.
func TestBadgerCommitsPerSuperStep(t *testing.T) {
	tests := []struct {
		mode checkpoint.Durability
		// most is the most commits per super-step.
		most float64
	}{
		{checkpoint.DurabilitySync, 1},
		// Behind the run: a batch every 64 checkpoints at most, or one
		// whenever the first queued checkpoint waited 2 ms.
		{checkpoint.DurabilityAsync, 0.5},
		{checkpoint.DurabilityExit, 0.05},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			db := openBadger(t)
			ctx := context.Background()
			run := func(steps int) badger.Stats {
				t.Helper()
				g, diags := runtime.LoadSource("commits.cue", load.GenerateGraph(steps, "enginetest", ""))
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				eng := engine.New(g, db.Checkpointer(), engine.Options{RecursionLimit: steps + 1})
				before := db.Stats()
				res, err := eng.Run(ctx, engine.Request{ThreadID: fmt.Sprint("steps-", steps), Input: map[string]any{}, Durability: tt.mode}, nil)
				if err != nil || res.Steps != steps {
					t.Fatalf("run of %d steps: %v (%d steps)", steps, err, res.Steps)
				}
				after := db.Stats()
				return badger.Stats{Commits: after.Commits - before.Commits, Syncs: after.Syncs - before.Syncs}
			}
			short, long := run(10), run(60)
			commits := float64(long.Commits-short.Commits) / 50
			syncs := float64(long.Syncs-short.Syncs) / 50
			t.Logf("run of 10 steps: %+v; of 60 steps: %+v; per super-step: %.2f commits, %.2f fsyncs", short, long, commits, syncs)
			if commits > tt.most {
				t.Errorf("a super-step costs %.2f commits, want at most %.2f", commits, tt.most)
			}
			if tt.mode == checkpoint.DurabilitySync && commits < 1 {
				t.Errorf("a super-step costs %.2f commits in sync mode, want 1 (its checkpoint)", commits)
			}
			if tt.mode == checkpoint.DurabilityExit && (short.Commits != 1 || long.Commits != 1) {
				t.Errorf("exit: %d and %d commits, want one per run", short.Commits, long.Commits)
			}
			if syncs != 0 || short.Syncs > 1 {
				t.Errorf("fsyncs: %.2f per super-step and %d in a run of 10 steps, want none per step and at most one per run", syncs, short.Syncs)
			}
		})
	}
}

// TestFinishedParallelTaskSavedBeforeItsEnd: in sync and async modes, a
// task of a parallel step has its update saved before its end is
// reported, so that a process that dies later does not run it again.
func TestFinishedParallelTaskSavedBeforeItsEnd(t *testing.T) {
	g := compileGraph(t, `
state: log: {type: "list<string>", reducer: "append"}
start: "split"
nodes: {
	split: {type: "enginetest", next: ["fast", "slow"]}
	fast: {type: "enginetest", config: {write: log: ["fast"]}, next: "END"}
	slow: {type: "enginetest", config: {write: log: ["slow"], sleep: "60s"}, next: "END"}
}`)
	for _, mode := range []checkpoint.Durability{checkpoint.DurabilitySync, checkpoint.DurabilityAsync} {
		t.Run(string(mode), func(t *testing.T) {
			cp := openBadger(t).Checkpointer()
			cutAt(t, engine.New(g, cp, engine.Options{}), mode, event.NodeEnd, "fast", func() {
				snap, err := cp.Latest(context.Background(), "x")
				if err != nil || len(snap.Pending) != 1 || snap.Pending[0].Node != "fast" {
					t.Errorf("when fast ended, the thread's pending writes were %+v (%v), want fast's update", snap, err)
				}
			})
		})
	}
}

// TestHeldEndWrites: a run whose context holds its end writes
// (engine.HoldEndWrites) leaves its last checkpoints to Result.EndWrites,
// which writes them with the caller's store items in one transaction; a
// subgraph's run writes its own before it returns; a failed write fails.
func TestHeldEndWrites(t *testing.T) {
	g := compileGraph(t, `
state: n: {type: "int"}
start: "inc"
nodes: inc: {type: "enginetest", config: {exprs: n: "n + 1"}, next: "END"}`)
	ctx := engine.HoldEndWrites(context.Background())
	t.Run("written with the caller's items", func(t *testing.T) {
		db := openBadger(t)
		cp := db.Checkpointer()
		eng := engine.New(g, cp, engine.Options{})
		res, err := eng.Run(ctx, engine.Request{ThreadID: "x", Input: map[string]any{}, Durability: checkpoint.DurabilityExit}, nil)
		if err != nil || res.EndWrites == nil {
			t.Fatalf("run: %v, EndWrites set: %v", err, res.EndWrites != nil)
		}
		if _, err := cp.Latest(context.Background(), "x"); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("the run's checkpoints were written before EndWrites: %v", err)
		}
		ns := []string{"records"}
		carried, err := res.EndWrites([]store.BatchPut{{Namespace: ns, Key: "r1", Value: map[string]any{"status": "success"}}})
		if err != nil || !carried {
			t.Fatalf("EndWrites: carried %v, %v", carried, err)
		}
		snap, err := cp.Latest(context.Background(), "x")
		if err != nil || string(snap.Values["n"]) != "1" {
			t.Fatalf("after EndWrites: %v %v", snap, err)
		}
		if it, err := db.Store().Get(context.Background(), ns, "r1"); err != nil || it == nil || it.Value["status"] != "success" {
			t.Fatalf("the caller's item: %+v %v", it, err)
		}
	})
	t.Run("a subgraph writes its own", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "child.cue"), []byte(header+`
state: n: {type: "int"}
start: "inc"
nodes: inc: {type: "enginetest", config: {exprs: n: "n + 1"}, next: "END"}`), 0o644)
		parent := filepath.Join(dir, "parent.cue")
		os.WriteFile(parent, []byte(header+`
state: n: {type: "int"}
start: "sub"
nodes: sub: {type: "subgraph", config: {graph: "child.cue", persist: true}, next: "END"}`), 0o644)
		pg, diags, err := runtime.Load(parent)
		if err != nil || diags.HasErrors() {
			t.Fatal(err, diags)
		}
		cp := openBadger(t).Checkpointer()
		eng := engine.New(pg, cp, engine.Options{})
		res, err := eng.Run(ctx, engine.Request{ThreadID: "p", Input: map[string]any{}, Durability: checkpoint.DurabilityExit}, nil)
		if err != nil || res.EndWrites == nil {
			t.Fatalf("run: %v", err)
		}
		threads, err := cp.Threads(context.Background())
		if err != nil || len(threads) != 1 || threads[0].ThreadID == "p" {
			t.Fatalf("before EndWrites, the child's thread alone should be written: %+v %v", threads, err)
		}
		if _, err := res.EndWrites(nil); err != nil {
			t.Fatal(err)
		}
		if snap, err := cp.Latest(context.Background(), "p"); err != nil || string(snap.Values["n"]) != "1" {
			t.Fatalf("the parent after EndWrites: %v %v", snap, err)
		}
	})
	t.Run("a failed write", func(t *testing.T) {
		cp := &checkpointtest.FailingBatches{Checkpointer: openBadger(t).Checkpointer()}
		eng := engine.New(g, cp, engine.Options{})
		res, err := eng.Run(ctx, engine.Request{ThreadID: "x", Input: map[string]any{}, Durability: checkpoint.DurabilityExit}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cp.Fail.Store(true)
		if _, err := res.EndWrites(nil); err == nil || !errors.Is(err, checkpointtest.ErrBatchRefused) {
			t.Fatalf("EndWrites: %v", err)
		}
		cp.Fail.Store(false)
		res, _ = eng.Run(context.Background(), engine.Request{ThreadID: "x", Input: map[string]any{}}, nil)
		if res.Status != engine.StatusCompleted || res.State["n"] != 1 {
			t.Fatalf("the run after a failed end write starts from what was written: %s n=%v", res.Status, res.State["n"])
		}
	})
}

// TestCancelledRunQueuesNothingMore: a run cancelled while a node runs does
// not write the checkpoint of the step that node ends (as a Put with a
// cancelled context is refused), in every mode; what it queued before is
// written.
func TestCancelledRunQueuesNothingMore(t *testing.T) {
	g := compileGraph(t, `
state: log: {type: "list<string>", reducer: "append"}
start: "a"
nodes: {
	a: {type: "enginetest", config: {write: log: ["a"]}, next: "b"}
	b: {type: "runstest_ignores_cancel", next: "END"}
}`)
	for _, mode := range []checkpoint.Durability{checkpoint.DurabilitySync, checkpoint.DurabilityAsync, checkpoint.DurabilityExit} {
		t.Run(string(mode), func(t *testing.T) {
			cp := openBadger(t).Checkpointer()
			res := cutAt(t, engine.New(g, cp, engine.Options{}), mode, event.NodeStart, "b", func() {})
			if res.Status != engine.StatusError {
				t.Fatalf("status %s", res.Status)
			}
			snap, err := cp.Latest(context.Background(), "x")
			if err != nil || string(snap.Values["log"]) != `["a"]` || len(snap.Next) != 1 || snap.Next[0].Node != "b" {
				t.Fatalf("the thread should wait at b with a's write only: %+v %v", snap, err)
			}
		})
	}
}

func init() {
	node.MustRegister(node.Type{
		Name:   "runstest_ignores_cancel",
		Config: "{}",
		New: func(node.Builder) (node.Node, error) {
			return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
				<-ctx.Done()
				time.Sleep(10 * time.Millisecond) // finishes its work after the cancel
				return node.Update{"log": []any{"b"}}, nil
			}), nil
		},
	})
}
