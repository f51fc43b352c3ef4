package audit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

// unbatched hides a store's PutBatch.
type unbatched struct{ store.Store }

// A run's record and its conversation's are written in one commit on a
// store that batches, in two on one that does not, and read back the same.
func TestRecorderWritesRunAndConversation(t *testing.T) {
	for _, tt := range []struct {
		name        string
		wrap        func(store.Store) store.Store
		wantCommits uint64
	}{
		{"batching store", func(s store.Store) store.Store { return s }, 1},
		{"store without batches", func(s store.Store) store.Store { return unbatched{s} }, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := badger.Open("", badger.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			st := tt.wrap(db.Store())
			var failures []error
			r := &audit.Recorder{Store: st, OnError: func(err error) { failures = append(failures, err) }}
			start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			for i, text := range []string{"hello", "again"} {
				before := db.Stats().Commits
				in := map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}
				_, obs := r.ObserveRun(context.Background(), engine.RunInfo{ThreadID: "t1", RunID: "r" + text, Graph: "g",
					Start: start.Add(time.Duration(i) * time.Minute), Input: in})
				obs.End(&engine.Result{ThreadID: "t1", RunID: "r" + text, Status: engine.StatusCompleted, State: in})
				if n := db.Stats().Commits - before; n != tt.wantCommits {
					t.Errorf("run %d: %d commits, want %d", i, n, tt.wantCommits)
				}
			}
			if len(failures) > 0 {
				t.Fatalf("audit failures: %v", failures)
			}
			conv, runs, err := audit.Log(context.Background(), st, "t1")
			if err != nil {
				t.Fatal(err)
			}
			if conv.Runs != 2 || conv.Messages != 2 || conv.Graph != "g" || len(runs) != 2 || runs[1].RunID != "ragain" {
				t.Errorf("conversation %+v, runs %+v; want 2 runs of 1 message each", conv, runs)
			}
		})
	}
}

// With a store.Deferred of the run's thread in its context, the recorder
// writes nothing and hands the run's and conversation's records over; with
// one of another thread, or one already taken, it writes them itself.
func TestRecorderHandsRecordsToDeferred(t *testing.T) {
	for _, tt := range []struct {
		name        string
		deferred    *store.Deferred
		taken       bool
		wantCommits uint64
		wantHanded  int
	}{
		{"deferred for the run's thread", &store.Deferred{Thread: "t1"}, false, 0, 2},
		{"deferred for another thread", &store.Deferred{Thread: "t2"}, false, 1, 0},
		{"deferred already taken", &store.Deferred{Thread: "t1"}, true, 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := badger.Open("", badger.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			st := db.Store()
			r := &audit.Recorder{Store: st, OnError: func(err error) { t.Error(err) }}
			if tt.taken {
				tt.deferred.Take()
			}
			ctx := store.WithDeferred(context.Background(), tt.deferred)
			in := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello"}}}
			before := db.Stats().Commits
			_, obs := r.ObserveRun(ctx, engine.RunInfo{ThreadID: "t1", RunID: "r1", Graph: "g", Start: time.Now(), Input: in})
			obs.End(&engine.Result{ThreadID: "t1", RunID: "r1", Status: engine.StatusCompleted, State: in})
			if n := db.Stats().Commits - before; n != tt.wantCommits {
				t.Errorf("%d commits, want %d", n, tt.wantCommits)
			}
			handed := tt.deferred.Take()
			if len(handed) != tt.wantHanded {
				t.Fatalf("%d puts handed over, want %d", len(handed), tt.wantHanded)
			}
			if len(handed) > 0 {
				if err := st.(store.Batcher).PutBatch(context.Background(), handed); err != nil {
					t.Fatal(err)
				}
			}
			conv, runs, err := audit.Log(context.Background(), st, "t1")
			if err != nil {
				t.Fatal(err)
			}
			if conv.Runs != 1 || conv.Messages != 1 || len(runs) != 1 || runs[0].RunID != "r1" {
				t.Errorf("conversation %+v, runs %+v; want 1 run of 1 message", conv, runs)
			}
		})
	}
}

// A run whose messages cannot be encoded is reported, and neither its
// record nor its conversation's is handed over: the commit of the run's
// end, which would take them, does not fail for them.
func TestRecorderReportsRunsItCannotEncode(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var failures []error
	r := &audit.Recorder{Store: db.Store(), OnError: func(err error) { failures = append(failures, err) }}
	d := &store.Deferred{Thread: "t1"}
	in := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi", "attachment": make(chan int)}}}
	_, obs := r.ObserveRun(store.WithDeferred(context.Background(), d), engine.RunInfo{ThreadID: "t1", RunID: "r1", Graph: "g", Start: time.Now(), Input: in})
	obs.End(&engine.Result{ThreadID: "t1", RunID: "r1", Status: engine.StatusCompleted, State: in})
	if len(failures) != 1 || !strings.Contains(failures[0].Error(), `meta "attachment"`) {
		t.Errorf("failures %v, want one naming the meta member", failures)
	}
	if handed := d.Take(); len(handed) != 0 {
		t.Errorf("%d puts handed over", len(handed))
	}
	if _, _, err := audit.Log(context.Background(), db.Store(), "t1"); !errors.Is(err, audit.ErrNoLog) {
		t.Errorf("log of a run that was not recorded: %v", err)
	}
}

// The tasks of a step end concurrently: each is recorded once, in the order
// of their start (of their started_at texts, which for these starts, all
// with six digits of fraction, is the order of the times).
func TestRecorderRecordsConcurrentTasksInOrder(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := &audit.Recorder{Store: db.Store(), OnError: func(err error) { t.Error(err) }}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ctx, obs := r.ObserveRun(context.Background(), engine.RunInfo{ThreadID: "t1", RunID: "r1", Graph: "g", Start: start})
	const tasks = 12
	var wg sync.WaitGroup
	for i := tasks - 1; i >= 0; i-- {
		_, n := r.ObserveNode(ctx, engine.TaskInfo{Node: fmt.Sprintf("n%02d", i), Type: "fan", Step: 1, Start: start.Add(time.Duration(i)*time.Millisecond + 123*time.Microsecond),
			State: map[string]any{"i": i}, Item: i})
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.Event(event.Event{Type: "retrieval", Payload: map[string]any{"count": i}})
			n.End(engine.TaskEnd{Status: "ok", Duration: time.Millisecond, Update: node.Update{"out": i}})
		}()
	}
	wg.Wait()
	obs.End(&engine.Result{ThreadID: "t1", RunID: "r1", Status: engine.StatusCompleted})
	_, runs, err := audit.Log(context.Background(), db.Store(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(runs[0].Nodes) != tasks {
		t.Fatalf("runs %+v, want one of %d nodes", runs, tasks)
	}
	for i, n := range runs[0].Nodes {
		if want := fmt.Sprintf("n%02d", i); n.Node != want || n.Input["item"] != fmt.Sprint(i) || n.Output["out"] != fmt.Sprint(i) || n.Retrieved == nil || *n.Retrieved != i {
			t.Errorf("node %d: %+v, want %s with its item, output and retrieval count", i, n, want)
		}
	}
}

// batchRecorder records the puts of a store's batches.
type batchRecorder struct {
	store.Store
	mu   sync.Mutex
	puts []store.BatchPut
}

func (b *batchRecorder) PutBatch(ctx context.Context, items []store.BatchPut) error {
	b.mu.Lock()
	b.puts = append(b.puts, items...)
	b.mu.Unlock()
	return b.Store.(store.Batcher).PutBatch(ctx, items)
}

// A run's record, under a key of its own, tells the store it is new (the
// store reads no item it would replace); its conversation's, written again
// by every run of the thread, does not.
func TestRecorderRunRecordIsNew(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := &batchRecorder{Store: db.Store()}
	r := &audit.Recorder{Store: st, OnError: func(err error) { t.Error(err) }}
	for i, text := range []string{"hello", "again"} {
		in := map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}
		_, obs := r.ObserveRun(context.Background(), engine.RunInfo{ThreadID: "t1", RunID: fmt.Sprint("r", i), Graph: "g", Start: time.Now(), Input: in})
		obs.End(&engine.Result{ThreadID: "t1", RunID: fmt.Sprint("r", i), Status: engine.StatusCompleted, State: in})
	}
	if len(st.puts) != 4 {
		t.Fatalf("%d puts, want a run's and its conversation's for each of 2 runs", len(st.puts))
	}
	for _, p := range st.puts {
		if want := p.Namespace[1] == audit.RunsNS("t1")[1]; p.New != want {
			t.Errorf("put %q/%s marked new: %v, want %v", p.Namespace, p.Key, p.New, want)
		}
	}
	if _, runs, err := audit.Log(context.Background(), st, "t1"); err != nil || len(runs) != 2 {
		t.Errorf("the log: %d runs, %v", len(runs), err)
	}
}
