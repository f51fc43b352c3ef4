package runs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/runs"
)

// storedRecord returns the status the Store holds for a run ("" for none),
// read from the Store itself, not from the manager's memory.
func storedRecord(t *testing.T, st store.Store, thread, run string) string {
	t.Helper()
	it, err := st.Get(context.Background(), append(append([]string(nil), runs.Namespace...), thread), run)
	if errors.Is(err, store.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatalf("get record of run %s: %v", run, err)
	}
	s, _ := it.Value["status"].(string)
	return s
}

// A run whose caller waits for its end (/runs/wait) has its "running" record
// written in the commit of its first checkpoint: one commit fewer than a run
// announced at once, whose record is stored before it starts.
func TestWaitedRunRecordGoesWithItsFirstCheckpoint(t *testing.T) {
	for _, tt := range []struct {
		name        string
		waited      bool
		wantBefore  string // the stored status when the executor starts
		wantCommits uint64 // for the whole run
	}{
		{"waited: record with the first checkpoint", true, "", 2},
		{"announced: record before the run starts", false, runs.StatusRunning, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			st := db.Store()
			var h *harness
			h = newHarness(t, db, runs.Options{
				Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
					if got := storedRecord(t, st, rec.ThreadID, rec.RunID); got != tt.wantBefore {
						t.Errorf("stored status %q before the first checkpoint, want %q", got, tt.wantBefore)
					}
					before := db.Stats().Commits
					if err := writeCheckpoint(ctx, h.cp, rec.ThreadID, rec.RunID); err != nil {
						return nil, err
					}
					if n := db.Stats().Commits - before; n != 1 {
						t.Errorf("the first checkpoint took %d commits, want 1", n)
					}
					if got := storedRecord(t, st, rec.ThreadID, rec.RunID); got != runs.StatusRunning {
						t.Errorf("stored status %q after the first checkpoint, want running", got)
					}
					// A second checkpoint carries nothing more.
					before = db.Stats().Commits
					if err := writeCheckpoint(ctx, h.cp, rec.ThreadID, rec.RunID); err != nil {
						return nil, err
					}
					if n := db.Stats().Commits - before; n != 1 {
						t.Errorf("the second checkpoint took %d commits, want 1", n)
					}
					return completed(), nil
				}})
			before := db.Stats().Commits
			a, err := h.m.SubmitAttached(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g"}, runs.Attach{Waited: tt.waited})
			if err != nil {
				t.Fatal(err)
			}
			rec := waitDone(t, a)
			if rec.Status != runs.StatusSuccess {
				t.Fatalf("status %q", rec.Status)
			}
			if n := db.Stats().Commits - before; n != tt.wantCommits+1 { // +1: the executor's second checkpoint
				t.Errorf("%d commits for the run, want %d", n, tt.wantCommits+1)
			}
			if got := storedRecord(t, st, "t1", rec.RunID); got != runs.StatusSuccess {
				t.Errorf("stored status %q at the end, want success", got)
			}
		})
	}
}

// A waited run that writes no checkpoint still ends on record, and one that
// a shutdown cuts before its first checkpoint is stored running, so that the
// next start runs it.
func TestWaitedRunWithoutCheckpoint(t *testing.T) {
	for _, tt := range []struct {
		name string
		cut  bool
		want string
	}{
		{"ends in error before any checkpoint", false, runs.StatusError},
		{"cut by shutdown before any checkpoint", true, runs.StatusRunning},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			started := make(chan struct{})
			h := newHarness(t, db, runs.Options{
				Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
					if !tt.cut {
						return nil, errors.New("refused")
					}
					close(started)
					<-ctx.Done()
					return nil, context.Cause(ctx)
				}})
			a, err := h.m.SubmitAttached(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g"}, runs.Attach{Waited: true})
			if err != nil {
				t.Fatal(err)
			}
			if tt.cut {
				<-started
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				h.m.Shutdown(ctx)
			}
			rec := waitDone(t, a)
			if got := storedRecord(t, db.Store(), "t1", rec.RunID); got != tt.want {
				t.Errorf("stored status %q, want %q", got, tt.want)
			}
		})
	}
}

// A cancel accepted before a waited run's first checkpoint is stored at once,
// and the checkpoint carries nothing after it.
func TestWaitedRunCancelledBeforeItsFirstCheckpoint(t *testing.T) {
	db := openDB(t)
	st := db.Store()
	cancelled := make(chan struct{})
	var h *harness
	h = newHarness(t, db, runs.Options{
		Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
			h.calls <- &call{rec: *rec}
			<-cancelled
			before := db.Stats().Commits
			if err := writeCheckpoint(context.WithoutCancel(ctx), h.cp, rec.ThreadID, rec.RunID); err != nil {
				return nil, err
			}
			if n := db.Stats().Commits - before; n != 1 {
				t.Errorf("the checkpoint took %d commits, want 1", n)
			}
			return completed(), nil
		}})
	a, err := h.m.SubmitAttached(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g"}, runs.Attach{Waited: true})
	if err != nil {
		t.Fatal(err)
	}
	c := h.next()
	if _, err := h.m.Cancel(context.Background(), "t1", c.rec.RunID, runs.Interrupt); err != nil {
		t.Fatal(err)
	}
	if got := storedRecord(t, st, "t1", c.rec.RunID); got != runs.StatusRunning {
		t.Errorf("stored status %q once the cancel is accepted, want running (with its cancel)", got)
	}
	close(cancelled)
	if rec := waitDone(t, a); rec.Status != runs.StatusInterrupted {
		t.Errorf("status %q, want interrupted", rec.Status)
	}
	if got := storedRecord(t, st, "t1", c.rec.RunID); got != runs.StatusInterrupted {
		t.Errorf("stored status %q at the end, want interrupted", got)
	}
}
