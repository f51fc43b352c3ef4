package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/engine"
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
