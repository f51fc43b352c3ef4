package runs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/graphctl/graphctl/server/runs"
)

// TestHoldOwnsThreadLikeARun: a state update holds its thread in the run
// manager, the one owner of thread locking: a reject run is refused while it
// holds, an enqueued run waits for the release and then runs, and a thread
// with an active run cannot be held.
func TestHoldOwnsThreadLikeARun(t *testing.T) {
	h := newHarness(t, openDB(t), runs.Options{})
	_, release, err := h.m.Hold(context.Background(), "t1")
	if err != nil {
		t.Fatalf("hold an idle thread: %v", err)
	}
	if _, _, err := h.m.Hold(context.Background(), "t1"); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("second hold: %v, want ErrBusy", err)
	}
	if _, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "t1", AssistantID: "g"}); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("reject run on a held thread: %v, want ErrBusy", err)
	}
	queued := h.submit("t1", runs.Enqueue)
	if st := queued.Record().Status; st != runs.StatusPending {
		t.Fatalf("enqueued run behind a hold is %s, want pending", st)
	}
	release()
	release() // a second release is harmless
	c := h.next()
	if c.rec.RunID != queued.Record().RunID {
		t.Fatalf("started %s, want the queued run %s", c.rec.RunID, queued.Record().RunID)
	}
	if _, _, err := h.m.Hold(context.Background(), "t1"); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("hold a thread with an active run: %v, want ErrBusy", err)
	}
	c.release <- completed()
	if rec := waitDone(t, queued); rec.Status != runs.StatusSuccess {
		t.Fatalf("queued run ended %s", rec.Status)
	}
	_, release, err = h.m.Hold(context.Background(), "t1")
	if err != nil {
		t.Fatalf("hold after the run ended: %v", err)
	}
	release()
}
