package runs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/graphctl/graphctl/server/runs"
)

// submitAt submits a run on thread that may start no earlier than at.
func (h *harness) submitAt(thread, strategy string, at time.Time) (*runs.Active, error) {
	return h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: thread, AssistantID: "g",
		MultitaskStrategy: strategy, StartAt: at, CreatedAt: at})
}

// A run with a start time is pending until then, and the runs of a thread
// start in the order of their start times: one enqueued later without a
// delay goes first, and a reject run is refused beside the waiting one.
func TestScheduledRunsStartInStartOrder(t *testing.T) {
	h := newHarness(t, openDB(t), runs.Options{})
	startAt := time.Now().Add(300 * time.Millisecond)
	later, err := h.submitAt("s", "", startAt)
	if err != nil {
		t.Fatal(err)
	}
	if st := later.Record().Status; st != runs.StatusPending {
		t.Fatalf("scheduled run is %s, want pending", st)
	}
	if _, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "s", AssistantID: "g"}); !errors.Is(err, runs.ErrBusy) {
		t.Fatalf("reject run beside a scheduled one: %v, want ErrBusy", err)
	}
	if _, busy := h.m.Busy("s"); busy {
		t.Fatal("a thread whose run waits for its start time is busy")
	}
	now := h.submit("s", runs.Enqueue)
	c := h.next()
	if c.rec.RunID != now.Record().RunID {
		t.Fatalf("started %s first, want the run without a delay %s", c.rec.RunID, now.Record().RunID)
	}
	c.release <- completed()
	c = h.next()
	if c.rec.RunID != later.Record().RunID {
		t.Fatalf("started %s, want the scheduled run", c.rec.RunID)
	}
	if time.Now().Before(startAt) {
		t.Fatalf("the scheduled run started before its start time %s", startAt)
	}
	c.release <- completed()
	if rec := waitDone(t, later); rec.Status != runs.StatusSuccess {
		t.Fatalf("scheduled run ended %s", rec.Status)
	}
}

// A run waiting for its start time when its process stops keeps it: the
// next process starts it then, with its input, --on-restart fail or not.
func TestRecoverKeepsStartTimes(t *testing.T) {
	for _, fail := range []bool{false, true} {
		db := openDB(t)
		old := newHarness(t, db, runs.Options{})
		startAt := time.Now().Add(200 * time.Millisecond)
		a, err := old.submitAt("r", runs.Enqueue, startAt)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		old.m.Shutdown(ctx)
		if got := storedStatus(t, old.m, "r", a.Record().RunID); got != runs.StatusPending {
			t.Fatalf("scheduled run stored as %q at shutdown, want pending", got)
		}

		h := newHarness(t, db, runs.Options{})
		if _, err := h.m.Recover(context.Background(), fail); err != nil {
			t.Fatal(err)
		}
		c := h.next()
		if c.rec.RunID != a.Record().RunID || c.recovering {
			t.Fatalf("fail=%v: started %s (recovering %v), want the scheduled run afresh", fail, c.rec.RunID, c.recovering)
		}
		if time.Now().Before(startAt) {
			t.Fatalf("fail=%v: the recovered run started before its start time %s", fail, startAt)
		}
		if !c.rec.StartAt.Equal(startAt) {
			t.Fatalf("fail=%v: recovered start time %s, want %s", fail, c.rec.StartAt, startAt)
		}
		c.release <- completed()
		b, _ := h.m.Get(a.Record().RunID)
		if rec := waitDone(t, b); rec.Status != runs.StatusSuccess {
			t.Fatalf("fail=%v: recovered scheduled run ended %s", fail, rec.Status)
		}
	}
}

// Holding a thread whose run waits for its start time is allowed; the run
// starts at the release when its time has come meanwhile.
func TestHoldBesideScheduledRun(t *testing.T) {
	h := newHarness(t, openDB(t), runs.Options{})
	startAt := time.Now().Add(100 * time.Millisecond)
	a, err := h.submitAt("h", runs.Enqueue, startAt)
	if err != nil {
		t.Fatal(err)
	}
	_, release, err := h.m.Hold(context.Background(), "h")
	if err != nil {
		t.Fatalf("hold a thread whose run waits: %v", err)
	}
	for time.Now().Before(startAt.Add(50 * time.Millisecond)) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := a.Record().Status; st != runs.StatusPending {
		t.Fatalf("run due during a hold is %s, want pending until the release", st)
	}
	release()
	c := h.next()
	if c.rec.RunID != a.Record().RunID {
		t.Fatalf("started %s, want the scheduled run", c.rec.RunID)
	}
	c.release <- completed()
	waitDone(t, a)
}
