package runs_test

import (
	"context"
	"testing"

	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/runs"
)

// What a run's writers hand over (store.Deferred, as the audit log does) is
// written in the commit of the run's final record, or of the delete of a
// stateless run's record. Either way it is stored before the run is done.
func TestDeferredPutsGoWithTheFinalRecord(t *testing.T) {
	for _, tt := range []struct {
		name        string
		stateless   bool
		wantCommits uint64 // after the executor returned
	}{
		{"thread run: final record and handed puts in one commit", false, 1},
		// The record's delete with the handed puts, the thread's delete.
		{"stateless run: record deleted in the commit of the handed puts", true, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			var atEnd uint64
			h := newHarness(t, db, runs.Options{StatelessInMemory: true,
				Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
					d := store.DeferredOf(ctx)
					if d == nil || d.Thread != rec.ThreadID {
						t.Errorf("run context carries %+v, want a Deferred of thread %q", d, rec.ThreadID)
						return completed(), nil
					}
					if !d.Add(store.BatchPut{Namespace: []string{"handed", rec.ThreadID}, Key: rec.RunID, Value: map[string]any{"n": 1}}) {
						t.Error("the run's Deferred refused a put")
					}
					atEnd = db.Stats().Commits
					return completed(), nil
				}})
			a, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g", Stateless: tt.stateless})
			if err != nil {
				t.Fatal(err)
			}
			rec := waitDone(t, a)
			if rec.Status != runs.StatusSuccess {
				t.Fatalf("status %q", rec.Status)
			}
			if n := db.Stats().Commits - atEnd; n != tt.wantCommits {
				t.Errorf("%d commits after the executor returned, want %d", n, tt.wantCommits)
			}
			if _, err := db.Store().Get(context.Background(), []string{"handed", "t1"}, rec.RunID); err != nil {
				t.Errorf("handed put: %v", err)
			}
			want := runs.StatusSuccess
			if tt.stateless {
				want = ""
			}
			if got := storedStatus(t, h.m, "t1", rec.RunID); got != want {
				t.Errorf("stored status %q, want %q", got, want)
			}
		})
	}
}

// A Store that cannot batch gets no Deferred: the writers write themselves.
func TestNoDeferredWithoutBatches(t *testing.T) {
	db := openDB(t)
	h := newHarness(t, db, runs.Options{Store: plainStore{db.Store()},
		Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
			if d := store.DeferredOf(ctx); d != nil {
				t.Errorf("run context carries a Deferred over a store that cannot batch")
			}
			return completed(), nil
		}})
	a, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if rec := waitDone(t, a); rec.Status != runs.StatusSuccess {
		t.Fatalf("status %q", rec.Status)
	}
}

// plainStore hides a store's PutBatch.
type plainStore struct{ store.Store }
