package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/runs"
)

// deadlock bounds waits that only end if the code under test is correct; it
// guards against a hung test, it measures nothing.
const deadlock = 10 * time.Second

// call is one executor invocation.
type call struct {
	rec        runs.Record
	recovering bool
	release    chan *engine.Result
}

// harness drives a Manager whose executor blocks each run until the test
// releases it (or the run's context is cancelled). Each run writes one
// checkpoint on its thread when it starts, so rollbacks are observable.
type harness struct {
	t     *testing.T
	db    *badger.DB
	cp    checkpoint.Checkpointer
	st    store.Store
	m     *runs.Manager
	calls chan *call
}

func openDB(t *testing.T) *badger.DB {
	t.Helper()
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatalf("open in-memory badger: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newHarness(t *testing.T, db *badger.DB, opts runs.Options) *harness {
	t.Helper()
	h := &harness{t: t, db: db, cp: db.Checkpointer(), st: db.Store(), calls: make(chan *call, 64)}
	if opts.Checkpointer == nil {
		opts.Checkpointer = h.cp
	}
	if opts.Store == nil {
		opts.Store = h.st
	}
	if opts.Exec == nil {
		opts.Exec = h.exec
	}
	h.m = runs.New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // cut whatever is left at once
		h.m.Shutdown(ctx)
	})
	return h
}

func (h *harness) exec(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
	c := &call{rec: *rec, recovering: recovering, release: make(chan *engine.Result, 1)}
	if err := writeCheckpoint(ctx, h.cp, rec.ThreadID, rec.RunID); err != nil {
		return nil, err
	}
	emit("values", "values", map[string]any{"run": rec.RunID})
	h.calls <- c
	select {
	case res := <-c.release:
		return res, nil
	case <-ctx.Done():
		return &engine.Result{Status: engine.StatusError, Err: context.Cause(ctx)}, context.Cause(ctx)
	}
}

// next returns the next run the executor started.
func (h *harness) next() *call {
	h.t.Helper()
	select {
	case c := <-h.calls:
		return c
	case <-time.After(deadlock):
		h.t.Fatal("no run started")
		return nil
	}
}

func (h *harness) submit(thread, strategy string) *runs.Active {
	h.t.Helper()
	a, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: thread, AssistantID: "g", MultitaskStrategy: strategy})
	if err != nil {
		h.t.Fatalf("submit on %q (%s): %v", thread, strategy, err)
	}
	return a
}

func completed() *engine.Result { return &engine.Result{Status: engine.StatusCompleted} }

func waitDone(t *testing.T, a *runs.Active) runs.Record {
	t.Helper()
	select {
	case <-a.Done():
	case <-time.After(deadlock):
		t.Fatalf("run %s did not end", a.Record().RunID)
	}
	return a.Record()
}

var (
	idMu sync.Mutex
	idN  int
)

func newRunID() string {
	idMu.Lock()
	defer idMu.Unlock()
	idN++
	return fmt.Sprintf("run-%04d", idN)
}

// writeCheckpoint appends a checkpoint whose field "by" names the run that wrote it.
func writeCheckpoint(ctx context.Context, cp checkpoint.Checkpointer, thread, by string) error {
	step, parent := 0, ""
	version := int64(1)
	if snap, err := cp.Latest(ctx, thread); err == nil {
		step, parent, version = snap.Step+1, snap.ID, snap.Versions["by"]+1
	} else if !errors.Is(err, checkpoint.ErrNotFound) {
		return err
	}
	data, _ := json.Marshal(by)
	c := checkpoint.Checkpoint{ThreadID: thread, ID: checkpoint.NewID(), ParentID: parent, Step: step,
		GraphName: "g", Versions: map[string]int64{"by": version}, Source: "loop", CreatedAt: time.Now().UTC()}
	return cp.Put(ctx, c, []checkpoint.Blob{{Field: "by", Version: version, Data: data}})
}

// lastWriter returns the "by" value of a thread's latest checkpoint ("" when the thread does not exist).
func lastWriter(t *testing.T, cp checkpoint.Checkpointer, thread string) string {
	t.Helper()
	snap, err := cp.Latest(context.Background(), thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatalf("latest of %q: %v", thread, err)
	}
	var by string
	if err := json.Unmarshal(snap.Values["by"], &by); err != nil {
		t.Fatalf("checkpoint value %s: %v", snap.Values["by"], err)
	}
	return by
}

func storedStatus(t *testing.T, m *runs.Manager, thread, run string) string {
	t.Helper()
	recs, err := m.List(context.Background(), thread, 0, 0, "")
	if err != nil {
		t.Fatalf("list runs of %q: %v", thread, err)
	}
	for _, r := range recs {
		if r.RunID == run {
			return r.Status
		}
	}
	return ""
}

func TestMultitaskStrategies(t *testing.T) {
	tests := []struct {
		strategy    string
		wantBusy    bool
		firstStatus string // the first run's stored status at the end; "" when its record is gone
		firstWriter string // "first" or "second": whose run the thread's final checkpoint names; "" for none
		firstMemory bool   // the first run is still known in memory
	}{
		{strategy: "", wantBusy: true, firstStatus: runs.StatusSuccess, firstWriter: "first", firstMemory: true},
		{strategy: runs.Reject, wantBusy: true, firstStatus: runs.StatusSuccess, firstWriter: "first", firstMemory: true},
		{strategy: runs.Enqueue, firstStatus: runs.StatusSuccess, firstWriter: "second", firstMemory: true},
		{strategy: runs.Interrupt, firstStatus: runs.StatusInterrupted, firstWriter: "second", firstMemory: true},
		{strategy: runs.Rollback, firstStatus: "", firstWriter: "second", firstMemory: false},
	}
	for _, tt := range tests {
		t.Run("strategy="+tt.strategy, func(t *testing.T) {
			h := newHarness(t, openDB(t), runs.Options{})
			const th = "t1"
			first := h.submit(th, "")
			c1 := h.next()
			second, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: th, MultitaskStrategy: tt.strategy})
			if tt.wantBusy {
				if !errors.Is(err, runs.ErrBusy) || second != nil {
					t.Fatalf("second submit: %v, want ErrBusy", err)
				}
				if !strings.Contains(err.Error(), c1.rec.RunID) || !strings.Contains(err.Error(), th) {
					t.Errorf("busy error %q names neither the active run nor the thread", err)
				}
			} else if err != nil {
				t.Fatalf("second submit: %v", err)
			} else if got := second.Record().Status; tt.strategy == runs.Enqueue && got != runs.StatusPending {
				t.Fatalf("second run status %q while the first is active, want pending", got)
			}
			if tt.wantBusy || tt.strategy == runs.Enqueue {
				c1.release <- completed()
			}
			waitDone(t, first)
			if second != nil {
				c2 := h.next()
				if c2.rec.RunID != second.Record().RunID {
					t.Fatalf("executor started %s, want the second run %s", c2.rec.RunID, second.Record().RunID)
				}
				if c2.recovering {
					t.Error("a new run was started as recovering")
				}
				c2.release <- completed()
				if got := waitDone(t, second).Status; got != runs.StatusSuccess {
					t.Errorf("second run status %q, want success", got)
				}
			}
			if got := storedStatus(t, h.m, th, c1.rec.RunID); got != tt.firstStatus {
				t.Errorf("first run stored status %q, want %q", got, tt.firstStatus)
			}
			want := map[string]string{"first": c1.rec.RunID}
			if second != nil {
				want["second"] = second.Record().RunID
			}
			if got := lastWriter(t, h.cp, th); got != want[tt.firstWriter] {
				t.Errorf("thread's latest checkpoint written by %q, want %q (%s)", got, want[tt.firstWriter], tt.firstWriter)
			}
			if _, ok := h.m.Get(c1.rec.RunID); ok != tt.firstMemory {
				t.Errorf("first run known in memory: %v, want %v", ok, tt.firstMemory)
			}
			if _, busy := h.m.Busy(th); busy {
				t.Error("thread still busy after every run ended")
			}
		})
	}
}

func TestRollbackReturnsThreadToStart(t *testing.T) {
	tests := []struct {
		name     string
		existing int // checkpoints on the thread before the run
	}{
		{"new thread", 0},
		{"thread with history", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, openDB(t), runs.Options{})
			const th = "rb"
			wantWriter := ""
			for i := 0; i < tt.existing; i++ {
				wantWriter = fmt.Sprintf("before-%d", i)
				if err := writeCheckpoint(context.Background(), h.cp, th, wantWriter); err != nil {
					t.Fatal(err)
				}
			}
			a := h.submit(th, "")
			c := h.next()
			if _, err := h.m.Cancel(context.Background(), th, c.rec.RunID, runs.Rollback); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			waitDone(t, a)
			if got := lastWriter(t, h.cp, th); got != wantWriter {
				t.Errorf("after rollback the thread's latest checkpoint is by %q, want %q", got, wantWriter)
			}
			if got := storedStatus(t, h.m, th, c.rec.RunID); got != "" {
				t.Errorf("rolled-back run still stored with status %q", got)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name    string
		thread  string // the thread named in the request; "" means the run's own
		run     string // the run named; "" means the active one
		action  string
		wantErr error
	}{
		{name: "default action interrupts", action: ""},
		{name: "interrupt", action: runs.Interrupt},
		{name: "unknown action", action: "explode", wantErr: runs.ErrBadStrategy},
		{name: "unknown run", run: "nope", action: runs.Interrupt, wantErr: runs.ErrNotFound},
		{name: "run of another thread", thread: "other", action: runs.Interrupt, wantErr: runs.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, openDB(t), runs.Options{})
			a := h.submit("c", "")
			c := h.next()
			thread, run := tt.thread, tt.run
			if thread == "" {
				thread = "c"
			}
			if run == "" {
				run = c.rec.RunID
			}
			_, err := h.m.Cancel(context.Background(), thread, run, tt.action)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("cancel: %v, want %v", err, tt.wantErr)
				}
				c.release <- completed()
				if got := waitDone(t, a).Status; got != runs.StatusSuccess {
					t.Errorf("a refused cancel changed the run: status %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if got := waitDone(t, a).Status; got != runs.StatusInterrupted {
				t.Errorf("status %q, want interrupted", got)
			}
			if got := storedStatus(t, h.m, "c", c.rec.RunID); got != runs.StatusInterrupted {
				t.Errorf("stored status %q, want interrupted", got)
			}
		})
	}
}

func TestCancelQueued(t *testing.T) {
	for _, action := range []string{runs.Interrupt, runs.Rollback} {
		t.Run(action, func(t *testing.T) {
			h := newHarness(t, openDB(t), runs.Options{})
			first := h.submit("q", "")
			c1 := h.next()
			queued := h.submit("q", runs.Enqueue)
			id := queued.Record().RunID
			if _, err := h.m.Cancel(context.Background(), "q", id, action); err != nil {
				t.Fatalf("cancel queued: %v", err)
			}
			rec := waitDone(t, queued)
			if rec.Status != runs.StatusInterrupted {
				t.Errorf("cancelled queued run status %q, want interrupted", rec.Status)
			}
			entries, closed, _ := queued.Buf.Since(0)
			if !closed || len(entries) == 0 || entries[len(entries)-1].Frame.Event != "end" {
				t.Errorf("cancelled queued run's stream: closed %v, frames %v; want closed, ending with end", closed, entries)
			}
			want := runs.StatusInterrupted
			if action == runs.Rollback {
				want = ""
			}
			if got := storedStatus(t, h.m, "q", id); got != want {
				t.Errorf("stored status %q, want %q", got, want)
			}
			c1.release <- completed()
			waitDone(t, first)
			select {
			case c := <-h.calls:
				t.Fatalf("the cancelled queued run %s was started", c.rec.RunID)
			default:
			}
		})
	}
}

func TestSubmitValidation(t *testing.T) {
	h := newHarness(t, openDB(t), runs.Options{})
	_, err := h.m.Submit(context.Background(), runs.Record{RunID: "r", ThreadID: "t", MultitaskStrategy: "later"})
	if !errors.Is(err, runs.ErrBadStrategy) || !strings.Contains(err.Error(), `"later"`) {
		t.Fatalf("unknown strategy: %v, want ErrBadStrategy naming it", err)
	}
	if err := h.m.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown of an idle manager: %v", err)
	}
	if _, err := h.m.Submit(context.Background(), runs.Record{RunID: "r2", ThreadID: "t"}); !errors.Is(err, runs.ErrClosed) {
		t.Fatalf("submit after shutdown: %v, want ErrClosed", err)
	}
}

func TestExecutorPanicEndsRunInError(t *testing.T) {
	db := openDB(t)
	h := newHarness(t, db, runs.Options{Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		panic("boom")
	}})
	a := h.submit("p", "")
	rec := waitDone(t, a)
	if rec.Status != runs.StatusError || !strings.Contains(rec.Error, "boom") {
		t.Fatalf("status %q error %q; want error mentioning the panic", rec.Status, rec.Error)
	}
	entries, _, _ := a.Buf.Since(0)
	var events []string
	for _, e := range entries {
		events = append(events, e.Frame.Event)
	}
	if got := strings.Join(events, ","); got != "metadata,error,end" {
		t.Errorf("frames %s, want metadata,error,end", got)
	}
}

func TestRecover(t *testing.T) {
	tests := []struct {
		name       string
		fail       bool
		wantStatus string // stored status of every recovered run once handled
	}{
		{"resume", false, runs.StatusSuccess},
		{"fail", true, runs.StatusError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			// A first process: one run active, one queued behind it, on the
			// same thread, and one active on another; then it dies.
			old := newHarness(t, db, runs.Options{})
			running := old.submit("a", "").Record().RunID
			old.next()
			queued := old.submit("a", runs.Enqueue).Record().RunID
			other := old.submit("b", "").Record().RunID
			old.next()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := old.m.Shutdown(ctx); err == nil {
				t.Fatal("shutdown past its deadline reported no error")
			}
			for id, th := range map[string]string{running: "a", other: "b"} {
				if got := storedStatus(t, old.m, th, id); got != runs.StatusRunning {
					t.Fatalf("cut run %s stored as %q, want running", id, got)
				}
			}
			if got := storedStatus(t, old.m, "a", queued); got != runs.StatusPending {
				t.Fatalf("queued run stored as %q, want pending", got)
			}

			h := newHarness(t, db, runs.Options{})
			n, err := h.m.Recover(context.Background(), tt.fail)
			if err != nil {
				t.Fatalf("recover: %v", err)
			}
			if n != 3 {
				t.Fatalf("recovered %d runs, want 3", n)
			}
			if tt.fail {
				for id, th := range map[string]string{running: "a", queued: "a", other: "b"} {
					if got := storedStatus(t, h.m, th, id); got != runs.StatusError {
						t.Errorf("run %s stored as %q, want error", id, got)
					}
				}
				select {
				case c := <-h.calls:
					t.Fatalf("run %s started although --on-restart fail", c.rec.RunID)
				default:
				}
				return
			}
			started := map[string]bool{} // run id → recovering
			for i := 0; i < 3; i++ {
				c := h.next()
				if c.rec.RunID == queued && !started[running] {
					t.Errorf("the queued run started before the resumed run of its thread")
				}
				if _, dup := started[c.rec.RunID]; dup {
					t.Fatalf("run %s started twice", c.rec.RunID)
				}
				started[c.rec.RunID] = c.recovering
				c.release <- completed()
			}
			want := map[string]bool{running: true, other: true, queued: false}
			for id, rec := range want {
				if got, ok := started[id]; !ok || got != rec {
					t.Errorf("run %s started=%v recovering=%v, want recovering=%v", id, ok, got, rec)
				}
			}
			for id, th := range map[string]string{running: "a", queued: "a", other: "b"} {
				a, ok := h.m.Get(id)
				if !ok {
					t.Fatalf("recovered run %s unknown", id)
				}
				waitDone(t, a)
				if got := storedStatus(t, h.m, th, id); got != tt.wantStatus {
					t.Errorf("run %s stored as %q, want %q", id, got, tt.wantStatus)
				}
			}
		})
	}
}

func TestListPaging(t *testing.T) {
	db := openDB(t)
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	h := newHarness(t, db, runs.Options{Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}})
	var ids []string
	for i := 0; i < 4; i++ {
		a := h.submit("l", "")
		h.next().release <- completed()
		waitDone(t, a)
		ids = append(ids, a.Record().RunID)
	}
	tests := []struct {
		limit, offset int
		want          []string // newest first
	}{
		{0, 0, []string{ids[3], ids[2], ids[1], ids[0]}},
		{2, 0, []string{ids[3], ids[2]}},
		{2, 3, []string{ids[0]}},
		{1, 9, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("limit=%d,offset=%d", tt.limit, tt.offset), func(t *testing.T) {
			recs, err := h.m.List(context.Background(), "l", tt.limit, tt.offset, "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.RunID)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExecutorWithoutResultEndsRunInError(t *testing.T) {
	h := newHarness(t, openDB(t), runs.Options{Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		return nil, nil
	}})
	a := h.submit("nil", "")
	rec := waitDone(t, a)
	if rec.Status != runs.StatusError || !strings.Contains(rec.Error, "no result") {
		t.Fatalf("status %q error %q; want error saying the run returned no result", rec.Status, rec.Error)
	}
}

// closing waits until Shutdown has stopped accepting runs: a probe on a busy
// thread is refused as busy before and as closed after, and starts nothing.
func (h *harness) closing(thread string) {
	h.t.Helper()
	stop := time.Now().Add(deadlock)
	for time.Now().Before(stop) {
		_, err := h.m.Submit(context.Background(), runs.Record{RunID: "probe", ThreadID: thread, MultitaskStrategy: runs.Reject})
		if errors.Is(err, runs.ErrClosed) {
			return
		}
		if !errors.Is(err, runs.ErrBusy) {
			h.t.Fatalf("probe on busy thread %q: %v", thread, err)
		}
		time.Sleep(time.Millisecond)
	}
	h.t.Fatal("shutdown never stopped accepting runs")
}

func TestShutdownWithQueuedRunsDoesNotWaitForDeadline(t *testing.T) {
	db := openDB(t)
	h := newHarness(t, db, runs.Options{})
	active := h.submit("s", "")
	c := h.next()
	queued := h.submit("s", runs.Enqueue)
	queuedID := queued.Record().RunID

	ctx, cancel := context.WithTimeout(context.Background(), deadlock)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- h.m.Shutdown(ctx) }()
	h.closing("s")
	c.release <- completed()
	if err := <-errc; err != nil {
		t.Fatalf("shutdown once the active run ended: %v, want a graceful stop", err)
	}
	if got := waitDone(t, active).Status; got != runs.StatusSuccess {
		t.Errorf("active run status %q, want success", got)
	}
	waitDone(t, queued)
	select {
	case c := <-h.calls:
		t.Fatalf("run %s started during shutdown", c.rec.RunID)
	default:
	}
	if got := storedStatus(t, h.m, "s", queuedID); got != runs.StatusPending {
		t.Fatalf("queued run stored as %q after shutdown, want pending (resumed at the next start)", got)
	}

	next := newHarness(t, db, runs.Options{})
	if n, err := next.m.Recover(context.Background(), false); err != nil || n != 1 {
		t.Fatalf("recover: %d runs, %v; want the queued run", n, err)
	}
	rc := next.next()
	if rc.rec.RunID != queuedID || rc.recovering {
		t.Fatalf("recovered run %s (recovering %v), want %s as a fresh start", rc.rec.RunID, rc.recovering, queuedID)
	}
	rc.release <- completed()
}

func TestCancelledQueuedRunIsForgottenLikeFinishedOnes(t *testing.T) {
	h := newHarness(t, openDB(t), runs.Options{Retain: 1})
	first := h.submit("f", "")
	c := h.next()
	queued := h.submit("f", runs.Enqueue)
	id := queued.Record().RunID
	if _, err := h.m.Cancel(context.Background(), "f", id, runs.Interrupt); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.m.Get(id); !ok {
		t.Fatal("a cancelled queued run is not kept for late joins")
	}
	c.release <- completed()
	waitDone(t, first)
	// Two more finished runs push it out of a retention of one.
	for i := 0; i < 2; i++ {
		a := h.submit("f", "")
		h.next().release <- completed()
		waitDone(t, a)
	}
	if _, ok := h.m.Get(id); ok {
		t.Error("a cancelled queued run stays in memory forever (retention 1)")
	}
	if got := storedStatus(t, h.m, "f", id); got != runs.StatusInterrupted {
		t.Errorf("stored status %q, want interrupted", got)
	}
}

// flakyLatest fails every Latest with a storage error.
type flakyLatest struct{ checkpoint.Checkpointer }

func (flakyLatest) Latest(context.Context, string) (*checkpoint.Snapshot, error) {
	return nil, errors.New("disk read failed")
}

// flakyHead fails every Head with a storage error.
type flakyHead struct{ checkpoint.Checkpointer }

func (flakyHead) Head(context.Context, string) (*checkpoint.Snapshot, error) {
	return nil, errors.New("disk read failed")
}

func TestRollbackWithUnknownStartKeepsThread(t *testing.T) {
	for _, tt := range []struct {
		name string
		cp   func(checkpoint.Checkpointer) checkpoint.Checkpointer
	}{
		{"head unreadable", func(c checkpoint.Checkpointer) checkpoint.Checkpointer { return flakyHead{c} }},
		{"no head reader, latest unreadable", func(c checkpoint.Checkpointer) checkpoint.Checkpointer { return flakyLatest{c} }},
	} {
		t.Run(tt.name, func(t *testing.T) { testRollbackWithUnknownStart(t, tt.cp) })
	}
}

func testRollbackWithUnknownStart(t *testing.T, wrap func(checkpoint.Checkpointer) checkpoint.Checkpointer) {
	db := openDB(t)
	h := newHarness(t, db, runs.Options{Checkpointer: wrap(db.Checkpointer())})
	const th = "keep"
	if err := writeCheckpoint(context.Background(), h.cp, th, "history"); err != nil {
		t.Fatal(err)
	}
	a := h.submit(th, "")
	c := h.next()
	if _, err := h.m.Cancel(context.Background(), th, c.rec.RunID, runs.Rollback); err != nil {
		t.Fatal(err)
	}
	rec := waitDone(t, a)
	if got := lastWriter(t, h.cp, th); got == "" {
		t.Fatal("a rollback whose start checkpoint could not be read deleted the thread")
	}
	if rec.Status != runs.StatusInterrupted || !strings.Contains(rec.Error, "rollback") || !strings.Contains(rec.Error, "disk read failed") {
		t.Errorf("record status %q error %q; want interrupted, saying why the rollback was not done", rec.Status, rec.Error)
	}
	if got := storedStatus(t, h.m, th, c.rec.RunID); got != runs.StatusInterrupted {
		t.Errorf("stored status %q, want the run kept as interrupted", got)
	}
}

func TestRollbackArrivingAfterRunEndedLeavesItOnRecord(t *testing.T) {
	db := openDB(t)
	var h *harness
	var once sync.Once
	second := make(chan *runs.Active, 1)
	h = newHarness(t, db, runs.Options{OnFinish: func(rec runs.Record, res *engine.Result) {
		// A rollback request lands after the run's outcome was decided but
		// before its thread was handed over.
		once.Do(func() {
			a, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: rec.ThreadID, MultitaskStrategy: runs.Rollback})
			if err != nil {
				t.Errorf("rollback submit: %v", err)
			}
			second <- a
		})
	}})
	first := h.submit("late", "")
	id := first.Record().RunID
	h.next().release <- completed()
	if got := waitDone(t, first).Status; got != runs.StatusSuccess {
		t.Fatalf("first run status %q, want success", got)
	}
	a := <-second
	h.next().release <- completed()
	waitDone(t, a)
	if _, ok := h.m.Get(id); !ok {
		t.Error("a successful run was forgotten as if rolled back")
	}
	if got := storedStatus(t, h.m, "late", id); got != runs.StatusSuccess {
		t.Errorf("stored status %q, want success", got)
	}
}

// cancelledCtx is the context of a request whose client has gone away.
func cancelledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestCancelledRunStaysCancelledAfterRestart(t *testing.T) {
	tests := []struct {
		name   string
		queued bool // cancel the queued run, else the active one
		action string
	}{
		{"queued, interrupt", true, runs.Interrupt},
		{"queued, rollback", true, runs.Rollback},
		{"active, interrupt", false, runs.Interrupt},
		{"active, rollback", false, runs.Rollback},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			const th = "cx"
			if err := writeCheckpoint(context.Background(), db.Checkpointer(), th, "history"); err != nil {
				t.Fatal(err)
			}
			// The executor ignores cancellation, as a node stuck in a call
			// would, so the process "dies" before the run could stop.
			stuck := make(chan struct{})
			old := newHarness(t, db, runs.Options{Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
				if err := writeCheckpoint(context.Background(), db.Checkpointer(), rec.ThreadID, rec.RunID); err != nil {
					return nil, err
				}
				<-stuck
				return completed(), nil
			}})
			t.Cleanup(func() { close(stuck) }) // before the harness's shutdown (cleanups run last first)
			active := old.submit(th, "")
			queued := old.submit(th, runs.Enqueue)
			target := active.Record().RunID
			if tt.queued {
				target = queued.Record().RunID
			}
			waitFor(t, func() bool { return lastWriter(t, db.Checkpointer(), th) == active.Record().RunID })
			// The cancel request's context is already cancelled: its client left.
			if _, err := old.m.Cancel(cancelledCtx(), th, target, tt.action); err != nil {
				t.Fatalf("cancel: %v", err)
			}

			h := newHarness(t, db, runs.Options{})
			if _, err := h.m.Recover(context.Background(), false); err != nil {
				t.Fatalf("recover: %v", err)
			}
			want := runs.StatusInterrupted
			if tt.action == runs.Rollback {
				want = ""
			}
			if got := storedStatus(t, h.m, th, target); got != want {
				t.Errorf("cancelled run stored as %q after the restart, want %q", got, want)
			}
			if a, ok := h.m.Get(target); ok {
				t.Errorf("the cancelled run was started again after the restart (status %s)", a.Record().Status)
			}
			if !tt.queued && tt.action == runs.Rollback {
				for _, by := range writers(t, db.Checkpointer(), th) {
					if by == target {
						t.Errorf("after the restart the rolled-back run's checkpoint is still on the thread")
					}
				}
			}
			// The other run of the thread is what the restart resumes.
			for {
				select {
				case c := <-h.calls:
					if c.rec.RunID == target {
						t.Fatalf("cancelled run %s executed after the restart", target)
					}
					c.release <- completed()
					continue
				case <-time.After(50 * time.Millisecond):
				}
				break
			}
		})
	}
}

// writers returns who wrote each checkpoint of a thread, newest first.
func writers(t *testing.T, cp checkpoint.Checkpointer, thread string) []string {
	t.Helper()
	hist, err := cp.History(context.Background(), thread, checkpoint.ListOptions{})
	if err != nil {
		t.Fatalf("history of %q: %v", thread, err)
	}
	var out []string
	for _, h := range hist {
		snap, err := cp.Get(context.Background(), thread, h.ID)
		if err != nil {
			t.Fatalf("checkpoint %s of %q: %v", h.ID, thread, err)
		}
		var by string
		if err := json.Unmarshal(snap.Values["by"], &by); err != nil {
			t.Fatalf("checkpoint value %s: %v", snap.Values["by"], err)
		}
		out = append(out, by)
	}
	return out
}

// waitFor polls cond until it holds; it guards against a hung test only.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	stop := time.Now().Add(deadlock)
	for !cond() {
		if time.Now().After(stop) {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRunsOfAThreadRunInCreationOrder(t *testing.T) {
	strategies := []string{runs.Enqueue, runs.Interrupt, runs.Enqueue, runs.Enqueue, runs.Rollback, runs.Enqueue, runs.Interrupt, runs.Enqueue}
	h := newHarness(t, openDB(t), runs.Options{})
	const th = "order"
	all := []*runs.Active{h.submit(th, "")}
	first := h.next()
	for _, s := range strategies {
		all = append(all, h.submit(th, s))
	}
	order := map[string]int{}
	for i, a := range all {
		order[a.Record().RunID] = i
	}
	allDone := make(chan struct{})
	go func() {
		for _, a := range all {
			<-a.Done()
		}
		close(allDone)
	}()
	last := 0
	started := map[string]bool{first.rec.RunID: true}
	first.release <- completed()
	timeout := time.After(deadlock)
loop:
	for {
		select {
		case c := <-h.calls:
			if started[c.rec.RunID] {
				t.Fatalf("run %s started twice", c.rec.RunID)
			}
			started[c.rec.RunID] = true
			if order[c.rec.RunID] < last {
				t.Fatalf("run #%d started after run #%d, which was created after it", order[c.rec.RunID], last)
			}
			last = order[c.rec.RunID]
			c.release <- completed()
		case <-allDone:
			break loop
		case <-timeout:
			t.Fatal("runs did not end")
		}
	}
	// The last interrupt cancelled every run before it that had not ended;
	// the runs after it ran in turn.
	lastInterrupt := len(all) - 2
	for i, a := range all {
		rec := a.Record()
		if i >= lastInterrupt {
			if rec.Status != runs.StatusSuccess {
				t.Errorf("run #%d (%s) ended %q, want success", i, rec.MultitaskStrategy, rec.Status)
			}
		} else if rec.Status == runs.StatusSuccess && i > 0 {
			t.Errorf("run #%d (%s) succeeded although a later interrupt came before it could start", i, rec.MultitaskStrategy)
		}
	}
}

func TestRecoverStartsAnUnbegunRunWithItsInput(t *testing.T) {
	db := openDB(t)
	const th = "fresh"
	if err := writeCheckpoint(context.Background(), db.Checkpointer(), th, "history"); err != nil {
		t.Fatal(err)
	}
	// The process dies after the record says "running" but before the run
	// wrote anything to its thread.
	hold := make(chan struct{})
	old := newHarness(t, db, runs.Options{Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
		<-hold
		return completed(), nil
	}})
	t.Cleanup(func() { close(hold) })
	id := old.submit(th, "").Record().RunID
	waitFor(t, func() bool { return storedStatus(t, old.m, th, id) == runs.StatusRunning })

	h := newHarness(t, db, runs.Options{})
	if n, err := h.m.Recover(context.Background(), false); err != nil || n != 1 {
		t.Fatalf("recover: %d, %v; want 1 run", n, err)
	}
	c := h.next()
	if c.rec.RunID != id || c.recovering {
		t.Fatalf("restarted run %s recovering=%v; want %s started afresh with its input (it had not begun)", c.rec.RunID, c.recovering, id)
	}
	c.release <- completed()
}

// When a run's stream ends, its thread is already free: a client that sends
// the next request as soon as it has read the last frame is not told the
// thread is busy.
func TestThreadIsFreeWhenTheStreamEnds(t *testing.T) {
	// A slow OnFinish widens the window in which a run has ended but its
	// thread might not yet be free.
	h := newHarness(t, openDB(t), runs.Options{OnFinish: func(runs.Record, *engine.Result) { time.Sleep(5 * time.Millisecond) }})
	for i := range 20 {
		a := h.submit("free", runs.Reject)
		h.next().release <- completed()
		after := 0
		for {
			entries, closed, wake := a.Buf.Since(after)
			if len(entries) > 0 {
				after = entries[len(entries)-1].Seq
			}
			if closed {
				break
			}
			select {
			case <-wake:
			case <-time.After(deadlock):
				t.Fatal("the stream did not end")
			}
		}
		if _, busy := h.m.Busy("free"); busy {
			t.Fatalf("run %d: the thread is busy after its stream ended", i)
		}
		waitDone(t, a)
	}
}

func TestRecoverLeavesRunsOfThisProcessAlone(t *testing.T) {
	h := newHarness(t, openDB(t), runs.Options{})
	// A chat message's run starts before the server has recovered the
	// previous process's runs: its record is "running" in the store.
	a := h.submit("early", "")
	c := h.next()
	queued := h.submit("early", runs.Enqueue)
	n, err := h.m.Recover(context.Background(), false)
	if err != nil || n != 0 {
		t.Fatalf("recover: %d runs, %v; want none (both runs are this process's)", n, err)
	}
	c.release <- completed()
	waitDone(t, a)
	h.next().release <- completed()
	waitDone(t, queued)
	select {
	case c := <-h.calls:
		t.Fatalf("run %s started twice", c.rec.RunID)
	case <-time.After(50 * time.Millisecond):
	}
}

// syncCount counts the Syncs of a checkpointer.
type syncCount struct {
	checkpoint.Checkpointer
	mu sync.Mutex
	n  int
}

func (s *syncCount) Sync(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return nil
}

func (s *syncCount) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// A stateless run whose thread the checkpointer keeps in memory leaves no
// record when it ends and is not synced to disk; its thread is deleted. A
// durable one is synced. Cut by a restart, an in-memory stateless run
// starts again from its input (its checkpoints are gone); a durable one
// goes on from its thread.
func TestStatelessRunsInMemory(t *testing.T) {
	for _, tt := range []struct {
		name           string
		inMemory       bool
		wantSyncs      int
		wantRecovering bool
	}{
		{"in memory", true, 0, false},
		{"durable", false, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			cp := &syncCount{Checkpointer: db.Checkpointer()}
			h := newHarness(t, db, runs.Options{Checkpointer: cp, StatelessInMemory: tt.inMemory})
			a, err := h.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "tmp1", AssistantID: "g", Stateless: true})
			if err != nil {
				t.Fatal(err)
			}
			h.next().release <- completed()
			if rec := waitDone(t, a); rec.Status != runs.StatusSuccess {
				t.Fatalf("status %q, want success", rec.Status)
			}
			if got := cp.count(); got != tt.wantSyncs {
				t.Errorf("syncs at the end of the run: %d, want %d", got, tt.wantSyncs)
			}
			if got := storedStatus(t, h.m, "tmp1", a.Record().RunID); got != "" {
				t.Errorf("record of the ended stateless run: status %q, want none", got)
			}
			if got := lastWriter(t, cp, "tmp1"); got != "" {
				t.Errorf("thread of the ended stateless run still written by %q", got)
			}

			// A stateless run cut by the process's end.
			hold := make(chan struct{})
			old := newHarness(t, db, runs.Options{Checkpointer: cp, StatelessInMemory: tt.inMemory,
				Exec: func(ctx context.Context, rec *runs.Record, recovering bool, emit runs.Emit) (*engine.Result, error) {
					if err := writeCheckpoint(ctx, cp, rec.ThreadID, rec.RunID); err != nil {
						return nil, err
					}
					<-hold
					return completed(), nil
				}})
			t.Cleanup(func() { close(hold) })
			cut, err := old.m.Submit(context.Background(), runs.Record{RunID: newRunID(), ThreadID: "tmp2", AssistantID: "g", Stateless: true})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return lastWriter(t, cp, "tmp2") != "" })
			next := newHarness(t, db, runs.Options{Checkpointer: cp, StatelessInMemory: tt.inMemory})
			if n, err := next.m.Recover(context.Background(), false); err != nil || n != 1 {
				t.Fatalf("recover: %d, %v; want 1 run", n, err)
			}
			c := next.next()
			if c.rec.RunID != cut.Record().RunID || c.recovering != tt.wantRecovering {
				t.Fatalf("restarted run %s recovering=%v; want %s recovering=%v", c.rec.RunID, c.recovering, cut.Record().RunID, tt.wantRecovering)
			}
			c.release <- completed()
		})
	}
}
