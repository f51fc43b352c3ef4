// Package runs manages the runs of a server: at most one active run per
// thread, what a second request gets (the multitask strategy: reject,
// enqueue, interrupt or rollback), buffered stream frames for clients that
// join late or reconnect, cancellation, and durable run records in the Store
// so that runs cut by a crash or a restart are resumed (or failed) when the
// server starts again.
package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// Run statuses, as the LangGraph API names them.
const (
	StatusPending     = "pending"
	StatusRunning     = "running"
	StatusSuccess     = "success"
	StatusError       = "error"
	StatusInterrupted = "interrupted"
)

// Multitask strategies: what a new run on a busy thread does.
const (
	Reject    = "reject"
	Enqueue   = "enqueue"
	Interrupt = "interrupt"
	Rollback  = "rollback"
)

// Errors the manager returns; callers map them to HTTP statuses.
var (
	// ErrBusy: the thread has an active run and the strategy is reject.
	ErrBusy = errors.New("thread has an active run")
	// ErrNotFound: no such run on the thread.
	ErrNotFound = errors.New("run not found")
	// ErrClosed: the server is shutting down.
	ErrClosed = errors.New("server is shutting down")
	// ErrBadStrategy: an unknown multitask strategy.
	ErrBadStrategy = errors.New("unknown multitask strategy")
)

// errShutdown is the cancel cause of runs cut by a shutdown deadline; their
// records stay "running" so that the next start resumes them.
var errShutdown = errors.New("server shutdown deadline")

// Namespace is the Store namespace prefix of run records; a thread's runs
// live under Namespace + thread id.
var Namespace = []string{"graphctl", "runs"}

// Record is a run as stored and as the API returns it.
type Record struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	Status            string         `json:"status"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
	Metadata          map[string]any `json:"metadata"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	// Kwargs are the request's run parameters (input, command, stream_mode, …).
	Kwargs map[string]any `json:"kwargs"`
	// StartCheckpoint is the thread's latest checkpoint when the run started
	// ("" for a new thread); a rollback returns the thread to it.
	StartCheckpoint string `json:"start_checkpoint,omitempty"`
	// StartKnown is set once StartCheckpoint has been read and stored: a
	// run whose replica died before that has no known start to roll back to.
	StartKnown bool `json:"start_known,omitempty"`
	// Error describes why a run ended in error.
	Error string `json:"error,omitempty"`
	// Stateless runs use a temporary thread deleted when they end.
	Stateless bool `json:"stateless,omitempty"`
	// CancelAction is set ("interrupt" or "rollback") once a cancel of the
	// run has been accepted, and stored before the caller is answered, so a
	// run cancelled just before a crash stays cancelled after the restart.
	CancelAction string `json:"cancel_action,omitempty"`
	// StartAt, when set, is the earliest time the run may start (a run
	// created with after_seconds); it waits pending until then, through
	// restarts. Zero: the run starts as soon as its thread is free.
	StartAt time.Time `json:"start_at,omitzero"`
}

// Emit sends one stream frame of a run: mode is the stream mode it belongs
// to, event the SSE event name, data its JSON-encodable payload (Encoded
// when it is already encoded).
type Emit func(mode, event string, data any)

// Encoded is frame data already encoded as compact JSON, with no line
// break: Emit sends it as it is.
type Encoded []byte

// Executor runs a record's request. recovering is true when the run is
// continued after a restart (no input: the thread goes on from its last
// checkpoint).
type Executor func(ctx context.Context, rec *Record, recovering bool, emit Emit) (*engine.Result, error)

// Options configure a Manager.
type Options struct {
	Store        store.Store
	Checkpointer checkpoint.Checkpointer
	Exec         Executor
	Log          *slog.Logger
	// Retain is how many finished runs keep their stream buffer in memory for
	// late joins (default 1024).
	Retain int
	// OnFinish is called after a run ends, with its final record.
	OnFinish func(rec Record, res *engine.Result)
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Queue, when set, shares the runs with other server processes on one
	// database (see Queue); the Store then holds no run records.
	Queue Queue
	// Poll is how often a manager with a Queue looks for startable runs and
	// followed runs' frames without being told (default 1s); Heartbeat how
	// often it renews the leases of its runs (default 2s; keep it well
	// under the queue's lease).
	Poll, Heartbeat time.Duration
	// StatelessInMemory says that the Checkpointer keeps the threads of
	// stateless runs in memory only (the executor marks them): such a run
	// is not synced to disk when it ends, since nothing of it is kept, and a
	// stateless run cut by a restart starts again from its input.
	StatelessInMemory bool
	// SyncDelay is how long the end of a run waits, at most, for other
	// runs still executing to end, so that one fsync makes them all
	// durable (default DefaultSyncDelay; negative: no wait). A run that
	// ends while no other is executing is synced at once.
	SyncDelay time.Duration
	// HandHead, when set, returns a context in which the head the manager
	// read where a run starts answers the run's own first read of it (see
	// ephemeral.WithHead): the thread is the run's from that read on.
	HandHead func(ctx context.Context, threadID string, head *checkpoint.Snapshot) context.Context
}

// Active is a run the manager knows in memory: running, queued, or recently
// finished (for late joins).
type Active struct {
	// Buf holds the run's stream frames.
	Buf *Buffer

	mu         sync.Mutex
	rec        Record
	recovering bool
	cancel     context.CancelCauseFunc
	action     string
	startErr   error // why StartCheckpoint is unknown; a rollback is then refused
	done       chan struct{}
	result     *engine.Result
	err        error

	// saveMu orders the writes of the run's record: each write stores the
	// record as it is when the write happens, so a slow early write cannot
	// overwrite a later state; forgotten stops every write once the record
	// has been deleted (a rolled-back run leaves no trace).
	saveMu    sync.Mutex
	forgotten bool

	// deferred gathers the puts of the run's writers (its audit records)
	// that are written with the record of its end; nil when the Store
	// cannot batch them.
	deferred *store.Deferred

	// syncs is set when the run's end is made durable through the
	// manager's group sync.
	syncs bool

	// carry, when set, writes the run's record with its first checkpoint
	// (see Attach.Waited); set under saveMu, which every later write of
	// the record holds while it stops the carrying.
	carry *checkpoint.Carry

	attach Attach

	// With a Queue: how the run is handled here (modeLocal, …), the
	// follower's wake-up, and whether the run's lease was lost.
	mode      int
	wakeup    chan struct{}
	leaseLost bool
	// claim is the fence of the claim under which the run executes here
	// (claimed is false without one): every write of the run's record,
	// end and frames is made under it (see claimContext).
	claim   checkpoint.Fence
	claimed bool
	// published is the sequence number of the last frame stored in the
	// queue (-1 once the publisher has stopped); pubMoved is closed when it
	// changes.
	pubMu     sync.Mutex
	published int
	pubMoved  chan struct{}
}

// Record returns a copy of the run's current record.
func (a *Active) Record() Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rec
}

// Done is closed when the run has ended.
func (a *Active) Done() <-chan struct{} { return a.done }

// Result returns the engine's result and error once Done is closed.
func (a *Active) Result() (*engine.Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.result, a.err
}

// slot is a thread the manager owns: its active run, the runs queued
// behind it, or a hold (a state update) that runs wait for.
type slot struct {
	active *Active
	queue  []*Active // in start order (see enqueue)
	held   bool
	// timer starts the first queued run at its start time while the
	// thread is idle (see nextLocked).
	timer *time.Timer
}

// Manager runs runs. It is safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	threads  map[string]*slot
	runs     map[string]*Active
	finished []string
	closing  bool
	wg       sync.WaitGroup
	// workers execute the runs.
	workers *workers

	unsavedMu sync.Mutex
	unsaved   unsavedRecords

	// group makes the ends of runs durable together; nil when the
	// Checkpointer has no Sync or the runs are shared.
	group *groupSync

	// carries is set when the Checkpointer writes the Store's items in its
	// transactions (checkpoint.ItemCarrier).
	carries bool

	// With a Queue: the loops (notices, claims, heartbeats, followers),
	// the frame publishers, and the claim loop's wake-up.
	loops      sync.WaitGroup
	pubs       sync.WaitGroup
	loopStop   context.CancelFunc
	followStop chan struct{}
	kick       chan struct{}
	claiming   chan struct{} // closed once the claim loop may run
	claimOnce  sync.Once
}

// New returns a manager.
func New(opts Options) *Manager {
	if opts.Retain <= 0 {
		opts.Retain = 1024
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 2 * time.Second
		if l, ok := opts.Queue.(interface{ Lease() time.Duration }); ok {
			opts.Heartbeat = l.Lease() / 4
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	m := &Manager{opts: opts, log: log, ctx: ctx, cancel: cancel,
		threads: map[string]*slot{}, runs: map[string]*Active{}, followStop: make(chan struct{})}
	m.workers = newWorkers(ctx)
	if sy, ok := opts.Checkpointer.(checkpoint.Syncer); ok && opts.Queue == nil {
		delay := opts.SyncDelay
		switch {
		case delay == 0:
			delay = DefaultSyncDelay
		case delay < 0:
			delay = 0
		}
		m.group = &groupSync{sync: sy.Sync, delay: delay}
	}
	if ic, ok := opts.Checkpointer.(checkpoint.ItemCarrier); ok && opts.Queue == nil && opts.Store != nil {
		m.carries = ic.CarriesItemsOf(opts.Store)
	}
	if opts.Queue != nil {
		m.startShared()
	}
	return m
}

// ValidStrategy reports whether s is a multitask strategy ("" counts as reject).
func ValidStrategy(s string) bool {
	switch s {
	case "", Reject, Enqueue, Interrupt, Rollback:
		return true
	}
	return false
}

// Submit registers a run on its thread and starts it, or queues it behind
// the thread's active run, as rec.MultitaskStrategy says. With reject on a
// busy thread it returns ErrBusy.
func (m *Manager) Submit(ctx context.Context, rec Record) (*Active, error) {
	return m.submit(ctx, rec, false, Attach{})
}

// Attach is what a caller in this process hands a run beside its record;
// none of it is stored, so a run resumed after a restart runs without it.
type Attach struct {
	// Observer receives the engine's events of the run as they happen (the
	// executor delivers them; see Observer).
	Observer event.Sink
	// Values is a context whose values (not its cancellation) the run's
	// context carries, for nodes that read them (a chat's live stream).
	Values context.Context
	// Waited says that the caller tells nobody of the run before it has
	// ended (it answers with the run's outcome, as /runs/wait does). When
	// the Checkpointer writes the Store's items (checkpoint.ItemCarrier),
	// the run's "running" record is then written in the transaction of
	// its first checkpoint instead of a commit of its own: a crash before
	// that checkpoint leaves no trace of the run, as if it had not been
	// submitted, and a crash after it leaves both.
	Waited bool
}

// SubmitAttached is Submit with what the caller attaches to the run: how
// chat integrations (webhooks, bots) start runs and follow them.
func (m *Manager) SubmitAttached(ctx context.Context, rec Record, at Attach) (*Active, error) {
	return m.submit(ctx, rec, false, at)
}

type observerKey struct{}

// Observer returns the event sink attached to the run of ctx, or nil; an
// Executor sends it every engine event.
func Observer(ctx context.Context) event.Sink {
	s, _ := ctx.Value(observerKey{}).(event.Sink)
	return s
}

func (m *Manager) submit(ctx context.Context, rec Record, recovering bool, at Attach) (*Active, error) {
	if !ValidStrategy(rec.MultitaskStrategy) {
		return nil, fmt.Errorf("multitask_strategy %q: %w (use reject, enqueue, interrupt or rollback)", rec.MultitaskStrategy, ErrBadStrategy)
	}
	if rec.MultitaskStrategy == "" {
		rec.MultitaskStrategy = Reject
	}
	now := m.opts.Now().UTC()
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now
	}
	rec.UpdatedAt = now
	rec.Status = StatusPending
	if m.shared() {
		return m.submitShared(ctx, rec, at)
	}
	a := &Active{Buf: NewBuffer(), rec: rec, recovering: recovering, done: make(chan struct{}), attach: at}

	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	s := m.threads[rec.ThreadID]
	if s == nil {
		s = &slot{}
		m.threads[rec.ThreadID] = s
	}
	var cancelled *Active
	var dropped []*Active
	switch rec.MultitaskStrategy {
	case Reject:
		// As on LangGraph's Agent Server, a run waiting for its start time
		// counts as active too.
		if s.active != nil || s.held || len(s.queue) > 0 {
			m.mu.Unlock()
			return nil, fmt.Errorf("thread %q: %s: %w", rec.ThreadID, s.holder(), ErrBusy)
		}
	case Interrupt, Rollback:
		// As LangGraph does, every earlier run of the thread is cancelled:
		// the active one hands the thread over when it has stopped, queued
		// ones (and those waiting for their start time) never start. A
		// hold is not cancelled: the run waits for its end.
		if s.active != nil {
			cancelled = s.active
			cancelled.cancelWith(rec.MultitaskStrategy)
		}
		dropped, s.queue = s.queue, nil
		for _, q := range dropped {
			m.retireLocked(q.Record().RunID, rec.MultitaskStrategy == Rollback)
		}
	}
	s.enqueue(a)
	m.runs[rec.RunID] = a
	m.wg.Add(1)
	next := m.nextLocked(rec.ThreadID, s)
	m.mu.Unlock()
	for _, q := range dropped {
		m.endQueued(q, rec.MultitaskStrategy)
	}
	if cancelled != nil {
		m.save(cancelled)
	}
	if next != a {
		m.save(a) // queued: its pending record is what a restart finds
	}
	if next != nil {
		m.start(next)
	}
	return a, nil
}

// cancelWith cancels the run's context and marks the record with the
// action; the caller stores the record (m.save) once it holds no lock.
func (a *Active) cancelWith(action string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.action == "" {
		a.action = action
		a.rec.CancelAction = action
	}
	if a.cancel != nil {
		a.cancel(fmt.Errorf("run cancelled (%s)", action))
	}
}

// endQueued ends a queued run that will never start, cancelled with action:
// its record is deleted for a rollback, stored as interrupted otherwise. The
// run must already be out of its thread's queue.
func (m *Manager) endQueued(a *Active, action string) {
	a.mu.Lock()
	a.rec.Status = StatusInterrupted
	a.rec.CancelAction = action
	a.rec.UpdatedAt = m.opts.Now().UTC()
	a.mu.Unlock()
	if action == Rollback {
		m.forget(a)
	} else {
		m.save(a)
	}
	a.Buf.Append("", "end", nil)
	a.Buf.Close()
	close(a.done)
	m.wg.Done()
}

// start marks a run running and executes it on one of the workers.
func (m *Manager) start(a *Active) {
	// The run's context ends with the manager's (or by a cancel); it carries
	// the values the caller attached and the observer.
	base := context.Background()
	if a.attach.Values != nil {
		base = context.WithoutCancel(a.attach.Values)
	}
	if a.attach.Observer != nil {
		base = context.WithValue(base, observerKey{}, a.attach.Observer)
	}
	base = m.fence(base, a)
	if m.group != nil {
		// recordEnd syncs once the run's record is written: the run's
		// last checkpoint need not be synced on its own before that.
		base = checkpoint.WithSyncByCaller(base)
		if rec := a.Record(); !rec.Stateless || !m.opts.StatelessInMemory {
			a.syncs = true
			m.group.started()
		}
	}
	if _, batches := m.opts.Store.(store.Batcher); batches && !m.shared() {
		a.deferred = &store.Deferred{Thread: a.Record().ThreadID}
		base = store.WithDeferred(base, a.deferred)
	}
	if c := m.carryOf(a); c != nil {
		base = checkpoint.WithCarry(base, c)
	}
	if m.carries && !m.shared() && !a.Record().Stateless {
		// The run's last checkpoints are written with its end's record.
		base = engine.HoldEndWrites(base)
	}
	ctx, cancel := context.WithCancelCause(base)
	stop := context.AfterFunc(m.ctx, func() { cancel(context.Cause(m.ctx)) })
	cancelRun := func(cause error) {
		stop()
		cancel(cause)
	}
	// Where a rollback returns the thread to: its latest checkpoint, none
	// for a new thread; unknown when it cannot be read.
	var startCP string
	var startErr error
	if rec := a.Record(); m.opts.Checkpointer != nil && !a.recovering && !rec.Stateless {
		snap, err := m.head(ctx, rec.ThreadID)
		switch {
		case err == nil:
			startCP = snap.ID
			if m.opts.HandHead != nil {
				ctx = m.opts.HandHead(ctx, rec.ThreadID, snap)
			}
		case !errors.Is(err, checkpoint.ErrNotFound):
			startErr = fmt.Errorf("read the start checkpoint of thread %q: %w", rec.ThreadID, err)
			m.log.Warn("run start checkpoint unknown; a rollback will be refused", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
		}
	}
	a.mu.Lock()
	a.cancel = cancelRun
	a.rec.Status = StatusRunning
	a.rec.UpdatedAt = m.opts.Now().UTC()
	if m.opts.Checkpointer != nil && !a.recovering && !a.rec.Stateless {
		a.rec.StartCheckpoint = startCP
		a.rec.StartKnown = startErr == nil
		a.startErr = startErr
	}
	precancelled := a.action != ""
	a.mu.Unlock()
	if precancelled {
		cancelRun(errors.New("run cancelled before it started"))
	}
	if a.carry == nil || precancelled {
		m.save(a)
	}
	m.workers.run(func() { m.execute(ctx, cancelRun, a) })
}

func (m *Manager) execute(ctx context.Context, cancel context.CancelCauseFunc, a *Active) {
	defer m.wg.Done()
	defer cancel(nil)
	rec := a.Record()
	res, err := m.invoke(ctx, a, &rec)

	a.mu.Lock()
	action, startErr := a.action, a.startErr
	a.mu.Unlock()
	cause := context.Cause(ctx)
	shutdownCut := errors.Is(cause, errShutdown) || errors.Is(cause, ErrLeaseLost) || m.fencedOut(a, res, err)
	// The run's last checkpoints, when the engine left them to write (see
	// engine.HoldEndWrites), are written with the record of its end, in one
	// commit, when that record is written the usual way; else now, before
	// anything reads the thread (a rollback).
	var endWrites func([]store.BatchPut) (bool, error)
	if res != nil {
		endWrites = res.EndWrites
	}
	ride := endWrites != nil && action == "" && !shutdownCut && m.rides(a)
	if endWrites != nil && !ride {
		_, werr := endWrites(nil)
		err = endWritesFailed(res, err, werr)
	}
	settleStatus(&rec, res, err, action, shutdownCut)
	if rec.Status == StatusError && !shutdownCut {
		a.Buf.Append("", "error", mustJSON(map[string]any{"error": "RunError", "message": rec.Error}))
	}
	rec.UpdatedAt = m.opts.Now().UTC()
	bg := context.WithoutCancel(ctx)
	rolledBack := action == Rollback && !shutdownCut && m.rollBack(bg, &rec, startErr)
	a.mu.Lock()
	rec.CancelAction = a.rec.CancelAction
	a.rec = rec
	a.result, a.err = res, err
	a.mu.Unlock()
	var extra []store.BatchPut
	if a.deferred != nil {
		extra = a.deferred.Take()
	}
	written := false
	if ride {
		written, extra = m.rideEnd(a, res, err, endWrites, extra)
		rec = a.Record()
	}
	m.recordEnd(bg, a, rec, shutdownCut, rolledBack, extra, written)
	if m.log.Enabled(bg, slog.LevelInfo) { // the attributes are not built for nothing
		m.log.Info("run ended", "run_id", rec.RunID, "thread_id", rec.ThreadID, "status", rec.Status, "error", rec.Error)
	}

	// The thread is free before anyone is told the run ended: a client that
	// sees the stream end (or Done) and sends the next request on the thread
	// finds it idle, not busy. A run taken over by another replica has not
	// ended: that replica tells of its end.
	if m.opts.OnFinish != nil && !a.lostLease() {
		m.opts.OnFinish(rec, res)
	}
	m.handOver(a, rolledBack)
	a.Buf.Append("", "end", nil)
	a.Buf.Close()
	close(a.done)
}

// invoke announces the run on its buffer and runs it, unless it was
// cancelled before it began; it never returns a nil result with a nil error.
func (m *Manager) invoke(ctx context.Context, a *Active, rec *Record) (*engine.Result, error) {
	a.Buf.Append("", "metadata", metadataFrame(rec.RunID, rec.ThreadID))
	emit := func(mode, event string, data any) {
		a.Buf.Append(mode, event, mustJSON(data))
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("run %s: %w", rec.RunID, context.Cause(ctx)) // cancelled before it began: nothing ran
	}
	res, err := m.runExec(ctx, rec, a.recovering, emit)
	if res == nil && err == nil {
		err = fmt.Errorf("run %s: the executor returned no result and no error", rec.RunID)
	}
	return res, err
}

// settleStatus sets the status (and error) a run ends with: still running
// when shutdown cut it (it resumes at the next start), interrupted when it
// was cancelled with an action, else what the engine's result says. A run
// that stopped at an interrupt (a node's, or interrupt_before/after) has
// run to completion — success, as on LangGraph's Agent Server; its thread
// is the one that is interrupted.
func settleStatus(rec *Record, res *engine.Result, err error, action string, shutdownCut bool) {
	switch {
	case shutdownCut:
		rec.Status = StatusRunning
	case action != "":
		rec.Status = StatusInterrupted
	case err != nil && res == nil:
		rec.Status = StatusError
		rec.Error = err.Error()
	case res.Status == engine.StatusCompleted, res.Status == engine.StatusInterrupted:
		rec.Status = StatusSuccess
	default:
		rec.Status = StatusError
		if res.Err != nil {
			rec.Error = res.Err.Error()
		} else if err != nil {
			rec.Error = err.Error()
		}
	}
}

// rollBack returns the run's thread to the checkpoint it started from, as a
// rollback cancel asks; it reports whether that was done. When it was not, the
// run stays on record with the reason, so that its thread's state is explained.
func (m *Manager) rollBack(ctx context.Context, rec *Record, startErr error) bool {
	rerr := startErr
	if rerr == nil {
		rerr = RollbackThread(ctx, m.opts.Checkpointer, rec.ThreadID, rec.StartCheckpoint)
	}
	if rerr != nil {
		rec.Error = fmt.Sprintf("rollback not done; the thread keeps this run's checkpoints: %v", rerr)
		m.log.Error("rollback failed", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", rerr)
		return false
	}
	return true
}

// recordEnd stores how the run ended (or forgets it), makes its end durable
// and deletes a stateless run's temporary thread.
func (m *Manager) recordEnd(ctx context.Context, a *Active, rec Record, shutdownCut, rolledBack bool, extra []store.BatchPut, written bool) {
	if m.shared() {
		if rec.Stateless && m.opts.Checkpointer != nil && !shutdownCut {
			m.deleteStatelessThread(ctx, rec.ThreadID)
		}
		m.finishShared(a, rec, shutdownCut, rolledBack || rec.Stateless)
		return
	}
	inMemory := rec.Stateless && m.opts.StatelessInMemory
	// What the run's writers handed over (extra) is written with the record
	// of its end, in the same commit, or alone when the record is not
	// saved; written says both went with the run's last checkpoints.
	switch {
	case written:
		a.saveMu.Lock()
		a.carry.Drop() // the record of its start was not written: no longer needed
		a.saveMu.Unlock()
	case shutdownCut && a.carry.Drop():
		// The record, carried by a first checkpoint that was not written,
		// is stored "running": the next start runs the run.
		m.saveWith(a, extra)
	case shutdownCut:
		// The record stays "running": the next start resumes the run.
		m.putExtra(ctx, rec, extra)
	case rolledBack:
		m.forget(a)
		m.putExtra(ctx, rec, extra)
	case inMemory:
		// Its thread is deleted below; its record goes first, so that a
		// crash in between cannot leave a record that says it ran.
		m.forgetWith(a, extra)
	default:
		m.saveWith(a, extra)
	}
	if a.syncs && shutdownCut {
		m.group.ended()
	}
	if a.syncs && !shutdownCut {
		// The run's last checkpoint and its record are on disk before
		// anyone is told the run has ended; runs that end together share
		// the fsync.
		if err := m.group.Sync(ctx); err != nil {
			m.log.Error("sync the end of a run to disk", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
		}
	}
	if rec.Stateless && m.opts.Checkpointer != nil && !shutdownCut {
		m.deleteStatelessThread(ctx, rec.ThreadID)
		m.forget(a)
	}
}

// rides reports whether the record of a run's end can be written with the
// run's last checkpoints: the Checkpointer carries the Store's items, the
// record is written the usual way (not shared, stateless, forgotten, or
// waiting to be written again) and the run was not cut.
func (m *Manager) rides(a *Active) bool {
	if !m.carries || m.shared() || a.deferred == nil {
		return false
	}
	rec := a.Record()
	if rec.Stateless {
		return false
	}
	a.saveMu.Lock()
	forgotten := a.forgotten
	a.saveMu.Unlock()
	if forgotten {
		return false
	}
	_, waiting := m.unsavedVersion(rec.RunID)
	return !waiting
}

// rideEnd writes the run's last checkpoints with the record of its end (the
// run's record, final) and the puts its writers handed over (extra), in one
// commit, under the run's saveMu, so that a save of the record after it
// (a cancel's) writes the final record too. It reports whether that was
// done, and returns the puts still to write. When the checkpoints could
// not be written, the run failed: its record and result say so.
func (m *Manager) rideEnd(a *Active, res *engine.Result, err error, endWrites func([]store.BatchPut) (bool, error), extra []store.BatchPut) (bool, []store.BatchPut) {
	a.saveMu.Lock()
	var carried bool
	var werr error
	if a.forgotten {
		_, werr = endWrites(nil)
	} else {
		put := m.recordPut(a.Record())
		// A record that its first checkpoint was still to carry has never
		// been written (every save drops the carry first): the Store need
		// not read the item it would replace.
		put.New = a.carry.Drop()
		carried, werr = endWrites(append([]store.BatchPut{put}, extra...))
	}
	a.saveMu.Unlock()
	if werr == nil {
		if carried {
			return true, nil
		}
		return false, extra
	}
	err = endWritesFailed(res, err, werr)
	a.mu.Lock()
	a.rec.Status, a.rec.Error = StatusError, werr.Error()
	a.result, a.err = res, err
	a.mu.Unlock()
	a.Buf.Append("", "error", mustJSON(map[string]any{"error": "RunError", "message": werr.Error()}))
	return false, extra
}

// endWritesFailed records in res a failure to write the run's last
// checkpoints, and returns the run's error.
func endWritesFailed(res *engine.Result, err, werr error) error {
	if werr == nil {
		return err
	}
	res.Status, res.Err = engine.StatusError, werr
	if err == nil {
		err = werr
	}
	return err
}

// deleteStatelessThread deletes the temporary thread of a stateless run
// with its subgraphs' checkpoints. A checkpointer that keeps the thread in
// memory (StatelessInMemory) drops its subgraphs' namespaces with it;
// another one's are found by key range (checkpoint.ChildThreads).
func (m *Manager) deleteStatelessThread(ctx context.Context, threadID string) {
	var err error
	if m.opts.StatelessInMemory {
		err = m.opts.Checkpointer.DeleteThread(ctx, threadID)
	} else {
		err = checkpoint.DeleteThreadTree(ctx, m.opts.Checkpointer, threadID)
	}
	if err != nil {
		m.log.Warn("delete stateless thread", "thread_id", threadID, "error", err)
	}
}

// runExec calls the executor, turning a panic into an error.
func (m *Manager) runExec(ctx context.Context, rec *Record, recovering bool, emit Emit) (res *engine.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("run %s panicked: %v", rec.RunID, p)
			m.log.Error("run panicked", "run_id", rec.RunID, "thread_id", rec.ThreadID, "panic", p)
		}
	}()
	return m.opts.Exec(ctx, rec, recovering, emit)
}

// handOver frees the thread and starts the next queued run.
func (m *Manager) handOver(a *Active, rolledBack bool) {
	rec := a.Record()
	if m.shared() {
		// A run lost to another replica is not kept: it is read from the
		// queue (and followed) as it goes on there.
		m.mu.Lock()
		m.retireLocked(rec.RunID, rolledBack || a.lostLease())
		m.mu.Unlock()
		m.wake()
		return
	}
	m.mu.Lock()
	m.retireLocked(rec.RunID, rolledBack)
	s := m.threads[rec.ThreadID]
	if s == nil || s.active != a {
		m.mu.Unlock()
		return
	}
	s.active = nil
	m.passOnLocked(rec.ThreadID, s)
}

// passOnLocked hands a thread that its run or hold has left to the next
// queued run whose start time has come, or forgets it. m.mu must be held;
// it is released.
func (m *Manager) passOnLocked(threadID string, s *slot) {
	var next *Active
	var unstarted []*Active
	if m.closing {
		// Queued runs never start now: their records stay pending for
		// the next start, and Shutdown need not wait for them.
		unstarted, s.queue = s.queue, nil
	} else {
		next = m.nextLocked(threadID, s)
	}
	m.forgetIdleLocked(threadID, s)
	m.mu.Unlock()
	m.releaseUnstarted(unstarted)
	if next != nil {
		m.start(next)
	}
}

// retireLocked moves an ended run to the finished runs kept for late joins,
// forgetting the oldest beyond Retain; a rolled-back run leaves no trace.
// m.mu must be held.
func (m *Manager) retireLocked(runID string, rolledBack bool) {
	if rolledBack {
		delete(m.runs, runID)
	} else {
		m.finished = append(m.finished, runID)
	}
	for len(m.finished) > m.opts.Retain {
		delete(m.runs, m.finished[0])
		m.finished = m.finished[1:]
	}
}

// releaseUnstarted ends the waits on queued runs that will not start in this
// process; their records stay pending, so the next start runs them.
func (m *Manager) releaseUnstarted(queued []*Active) {
	for _, a := range queued {
		a.Buf.Close()
		close(a.done)
		m.wg.Done()
	}
}

// Get returns a run known in memory.
func (m *Manager) Get(runID string) (*Active, bool) {
	if m.shared() {
		return m.getShared(runID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.runs[runID]
	return a, ok
}

// Busy returns the active run of a thread, if any.
func (m *Manager) Busy(threadID string) (*Active, bool) {
	if m.shared() {
		rec, ok, err := m.opts.Queue.Active(context.Background(), threadID)
		if err != nil {
			m.log.Warn("active run of a thread", "thread_id", threadID, "error", err)
		}
		if !ok {
			return nil, false
		}
		return m.getShared(rec.RunID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.threads[threadID]; s != nil && s.active != nil {
		return s.active, true
	}
	return nil, false
}

// Unended reports whether a thread has a run that has not ended: running,
// queued behind another, or waiting for its start time. LangGraph's Agent
// Server shows such a thread busy from the moment the run is created.
func (m *Manager) Unended(ctx context.Context, threadID string) (bool, error) {
	if m.shared() {
		if _, ok, err := m.opts.Queue.Active(ctx, threadID); ok || err != nil {
			return ok, err
		}
		// Runs waiting for their start time are not active yet.
		recs, err := m.opts.Queue.List(ctx, threadID, 1, 0, StatusPending)
		return len(recs) > 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.threads[threadID]
	return s != nil && (s.active != nil || len(s.queue) > 0), nil
}

// UnendedThreads returns the threads that have a run that has not ended
// (see Unended).
func (m *Manager) UnendedThreads(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	if m.shared() {
		recs, err := m.opts.Queue.Unfinished(ctx)
		for _, r := range recs {
			out[r.ThreadID] = true
		}
		return out, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, s := range m.threads {
		if s.active != nil || len(s.queue) > 0 {
			out[id] = true
		}
	}
	return out, nil
}

// Cancel stops a run: an active one is cancelled (its thread keeps the last
// checkpoint for "interrupt", returns to where the run started for
// "rollback"); a queued one is dropped.
func (m *Manager) Cancel(ctx context.Context, threadID, runID, action string) (*Active, error) {
	if action == "" {
		action = Interrupt
	}
	if action != Interrupt && action != Rollback {
		return nil, fmt.Errorf("cancel action %q: %w (use interrupt or rollback)", action, ErrBadStrategy)
	}
	if m.shared() {
		return m.cancelShared(ctx, threadID, runID, action)
	}
	m.mu.Lock()
	a, ok := m.runs[runID]
	if !ok || a.Record().ThreadID != threadID {
		m.mu.Unlock()
		return nil, fmt.Errorf("run %s on thread %q: %w", runID, threadID, ErrNotFound)
	}
	if m.dequeueLocked(threadID, a) {
		m.retireLocked(runID, action == Rollback)
		m.mu.Unlock()
		m.endQueued(a, action)
		return a, nil
	}
	m.mu.Unlock()
	select {
	case <-a.done:
		return a, nil // already ended
	default:
	}
	a.cancelWith(action)
	m.save(a)
	return a, nil
}

// save stores the run's record as it is now. Writes of one run are ordered
// and never use a caller's context: a request that goes away must not lose
// the write (a cancelled run would come back after a restart).
func (m *Manager) save(a *Active) { m.saveWith(a, nil) }

// saveWith is save with other puts written in the same commit (or alone,
// when the record is no longer saved).
func (m *Manager) saveWith(a *Active, extra []store.BatchPut) {
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	// A first checkpoint that carries an older version of the record has
	// committed before this write, or never carries it.
	a.carry.Drop()
	rec := a.Record()
	if a.forgotten {
		m.putExtra(context.Background(), rec, extra)
		return
	}
	if m.shared() {
		m.saveClaimed(a, rec)
		return
	}
	m.persistWith(context.Background(), rec, extra)
}

// putExtra writes puts a run's writers handed over, in one commit.
func (m *Manager) putExtra(ctx context.Context, rec Record, extra []store.BatchPut) {
	if len(extra) == 0 {
		return
	}
	if err := m.opts.Store.(store.Batcher).PutBatch(context.WithoutCancel(ctx), extra); err != nil {
		m.log.Error("save the records a run's writers handed over", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
	}
}

// forget deletes the run's record; no later save brings it back.
func (m *Manager) forget(a *Active) { m.forgetWith(a, nil) }

// forgetWith is forget with other puts written in the same commit (or
// alone, when the record was already forgotten or that commit fails).
func (m *Manager) forgetWith(a *Active, extra []store.BatchPut) {
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	a.carry.Drop()
	rec := a.Record()
	if a.forgotten {
		m.putExtra(context.Background(), rec, extra)
		return
	}
	a.forgotten = true
	if len(extra) > 0 {
		m.unsavedMu.Lock()
		delete(m.unsaved.records, rec.RunID)
		m.unsavedMu.Unlock()
		del := store.BatchPut{Namespace: recordNS(rec.ThreadID), Key: rec.RunID, Delete: true}
		if err := m.opts.Store.(store.Batcher).PutBatch(context.Background(), append(extra, del)); err == nil {
			return
		}
		m.putExtra(context.Background(), rec, extra)
	}
	m.deleteRecord(context.Background(), rec)
}

// carryOf sets up, for a run about to start, the writing of its record with
// its first checkpoint when it can be (see Attach.Waited), and returns the
// Carry; nil when the record is written at once.
func (m *Manager) carryOf(a *Active) *checkpoint.Carry {
	rec := a.Record()
	if !m.carries || !a.attach.Waited || rec.Stateless || a.recovering {
		return nil
	}
	if _, ok := m.unsavedVersion(rec.RunID); ok {
		return nil // its retries write it: a carried version could land after a newer one
	}
	c := &checkpoint.Carry{Thread: rec.ThreadID, Build: func() []store.BatchPut {
		return []store.BatchPut{m.recordPut(a.Record())}
	}}
	a.saveMu.Lock()
	a.carry = c
	a.saveMu.Unlock()
	return c
}

// persist writes a run record to the Store. The write is not cancelled with
// ctx. A record that cannot be written is kept and written again until it
// is stored (see unsavedRecords).
func (m *Manager) persist(ctx context.Context, rec Record) { m.persistWith(ctx, rec, nil) }

// persistWith is persist with other puts written in the same commit; when
// that commit fails they are written alone and the record as persist
// retries it.
func (m *Manager) persistWith(ctx context.Context, rec Record, extra []store.BatchPut) {
	if m.shared() {
		if err := m.opts.Queue.Save(context.WithoutCancel(ctx), rec); err != nil {
			m.log.Error("save run record", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
		}
		return
	}
	if m.opts.Store == nil {
		return
	}
	m.unsavedMu.Lock()
	if _, waiting := m.unsaved.records[rec.RunID]; waiting {
		m.unsaved.records[rec.RunID] = rec // the retry writes this newer version
		m.unsavedMu.Unlock()
		m.putExtra(ctx, rec, extra)
		return
	}
	m.unsavedMu.Unlock()
	// The record is written without holding unsavedMu, so that runs do not
	// wait for each other's writes: the writes of one run are ordered by
	// its saveMu (the other callers write records of runs not running
	// here), and the retries write only the records kept in m.unsaved.
	if len(extra) > 0 {
		puts := append([]store.BatchPut{m.recordPut(rec)}, extra...)
		if err := m.opts.Store.(store.Batcher).PutBatch(context.WithoutCancel(ctx), puts); err == nil {
			return
		}
		m.putExtra(ctx, rec, extra)
	}
	if err := m.write(ctx, rec); err != nil {
		m.log.Error("save run record; it is written again until it is stored", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
		m.unsavedMu.Lock()
		m.keepUnsavedLocked(rec)
		m.unsavedMu.Unlock()
	}
}

// write stores one run record.
func (m *Manager) write(ctx context.Context, rec Record) error {
	p := m.recordPut(rec)
	return m.opts.Store.Put(context.WithoutCancel(ctx), p.Namespace, p.Key, p.Value, p.Opts)
}

// recordPut is the put that stores a run record.
func (m *Manager) recordPut(rec Record) store.BatchPut {
	return store.BatchPut{Namespace: recordNS(rec.ThreadID), Key: rec.RunID, Value: rec.value(), Opts: store.PutOptions{Index: []string{}}}
}

func (m *Manager) deleteRecord(ctx context.Context, rec Record) {
	if m.opts.Store == nil {
		return
	}
	m.unsavedMu.Lock()
	delete(m.unsaved.records, rec.RunID)
	m.unsavedMu.Unlock()
	ctx = context.WithoutCancel(ctx)
	if err := m.opts.Store.Delete(ctx, recordNS(rec.ThreadID), rec.RunID); err != nil && !errors.Is(err, store.ErrNotFound) {
		m.log.Warn("delete run record", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
	}
}

func recordNS(thread string) []string {
	return append(append([]string(nil), Namespace...), thread)
}

// Load reads a run record from the Store.
func (m *Manager) Load(ctx context.Context, threadID, runID string) (Record, error) {
	if m.shared() {
		m.mu.Lock()
		a, ok := m.runs[runID]
		m.mu.Unlock()
		if ok && a.isLocal() && a.Record().ThreadID == threadID {
			return a.Record(), nil
		}
		return m.opts.Queue.Load(ctx, threadID, runID)
	}
	if a, ok := m.Get(runID); ok && a.Record().ThreadID == threadID {
		return a.Record(), nil
	}
	if m.opts.Store == nil {
		return Record{}, ErrNotFound
	}
	if rec, ok := m.unsavedVersion(runID); ok && rec.ThreadID == threadID {
		return rec, nil
	}
	it, err := m.opts.Store.Get(ctx, recordNS(threadID), runID)
	if errors.Is(err, store.ErrNotFound) {
		return Record{}, fmt.Errorf("run %s on thread %q: %w", runID, threadID, ErrNotFound)
	}
	if err != nil {
		return Record{}, fmt.Errorf("load run %s: %w", runID, err)
	}
	return fromMap(it.Value)
}

// List returns a thread's run records, newest first.
func (m *Manager) List(ctx context.Context, threadID string, limit, offset int, status string) ([]Record, error) {
	if m.shared() {
		return m.opts.Queue.List(ctx, threadID, limit, offset, status)
	}
	if m.opts.Store == nil {
		return nil, nil
	}
	q := store.SearchQuery{Limit: 10000}
	if status != "" {
		q.Filter = map[string]any{"status": status}
	}
	items, err := m.opts.Store.Search(ctx, recordNS(threadID), q)
	if err != nil {
		return nil, fmt.Errorf("list runs of thread %q: %w", threadID, err)
	}
	unsaved := m.unsavedOfThread(threadID)
	out := make([]Record, 0, len(items)+len(unsaved))
	for _, it := range items {
		if len(it.Namespace) != len(Namespace)+1 {
			continue
		}
		r, err := fromMap(it.Value)
		if err != nil {
			continue
		}
		if newer, ok := unsaved[r.RunID]; ok {
			r = newer
			delete(unsaved, r.RunID)
		}
		if status == "" || r.Status == status {
			out = append(out, r)
		}
	}
	for _, r := range unsaved {
		if status == "" || r.Status == status {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	if offset > len(out) {
		offset = len(out)
	}
	out = out[offset:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// DeleteThread removes a thread's run records; its queued runs (those
// waiting for their start time among them) never start.
func (m *Manager) DeleteThread(ctx context.Context, threadID string) error {
	if m.shared() {
		return m.opts.Queue.DeleteThread(ctx, threadID)
	}
	m.mu.Lock()
	var dropped []*Active
	if s := m.threads[threadID]; s != nil {
		dropped, s.queue = s.queue, nil
		for _, q := range dropped {
			m.retireLocked(q.Record().RunID, true)
		}
		m.forgetIdleLocked(threadID, s)
	}
	m.mu.Unlock()
	for _, q := range dropped {
		m.endQueued(q, Rollback)
	}
	recs, err := m.List(ctx, threadID, 0, 0, "")
	if err != nil {
		return err
	}
	for _, r := range recs {
		m.deleteRecord(ctx, r)
	}
	return nil
}

// Recover finds runs that were running or queued when the previous process
// ended. With fail false they are started again (a running run continues
// from its thread's last checkpoint, a queued one starts as requested); with
// fail true they are marked as errors. It returns how many it handled.
func (m *Manager) Recover(ctx context.Context, fail bool) (int, error) {
	if m.shared() {
		// Runs of replicas that died are claimed by the running replicas
		// once their leases expire; with fail, those already orphaned now
		// end in error instead.
		defer m.startClaiming()
		if fail {
			return m.opts.Queue.FailOrphans(ctx, "the replica running this run stopped; not resumed (--on-restart fail)")
		}
		return 0, nil
	}
	if m.opts.Store == nil {
		return 0, nil
	}
	var recs []Record
	for _, status := range []string{StatusRunning, StatusPending} {
		items, err := m.opts.Store.Search(ctx, Namespace, store.SearchQuery{Filter: map[string]any{"status": status}, Limit: 100000})
		if err != nil {
			return 0, fmt.Errorf("find unfinished runs: %w", err)
		}
		for _, it := range items {
			r, err := fromMap(it.Value)
			if err != nil {
				m.log.Warn("unreadable run record", "namespace", it.Namespace, "key", it.Key, "error", err)
				continue
			}
			recs = append(recs, r)
		}
	}
	// Running runs first (they held their thread), then queued ones in order.
	sort.SliceStable(recs, func(i, j int) bool {
		if (recs[i].Status == StatusRunning) != (recs[j].Status == StatusRunning) {
			return recs[i].Status == StatusRunning
		}
		return recs[i].CreatedAt.Before(recs[j].CreatedAt)
	})
	n := 0
	for _, r := range recs {
		if _, known := m.Get(r.RunID); known {
			continue // started by this process (a run submitted before Recover)
		}
		if r.CancelAction != "" {
			// Cancelled before the previous process could stop it: it stays
			// cancelled.
			m.endCancelled(ctx, r)
			n++
			continue
		}
		if fail && (r.Status != StatusPending || r.StartAt.IsZero()) {
			// A run waiting for its start time was not cut: it keeps it.
			r.Error = "the server stopped while this run was " + r.Status + "; not resumed (--on-restart fail)"
			r.Status = StatusError
			r.UpdatedAt = m.opts.Now().UTC()
			m.persist(ctx, r)
			n++
			continue
		}
		// A run that had not yet changed its thread starts afresh with its
		// input; one that had goes on from its thread's last checkpoint, so
		// that its input is applied exactly once.
		recovering := r.Status == StatusRunning && m.began(ctx, r)
		r.MultitaskStrategy = Enqueue
		if _, err := m.submit(ctx, r, recovering, Attach{}); err != nil {
			m.log.Error("resume run after restart", "run_id", r.RunID, "thread_id", r.ThreadID, "error", err)
			continue
		}
		m.log.Info("run resumed after restart", "run_id", r.RunID, "thread_id", r.ThreadID)
		n++
	}
	return n, nil
}

// endCancelled finishes, after a restart, a run whose cancel was accepted
// before the previous process ended: a rollback returns its thread to where
// the run started and deletes the record, an interrupt stores it as
// interrupted.
func (m *Manager) endCancelled(ctx context.Context, r Record) {
	if r.CancelAction == Rollback && r.Status == StatusRunning {
		if err := RollbackThread(ctx, m.opts.Checkpointer, r.ThreadID, r.StartCheckpoint); err != nil {
			r.Error = fmt.Sprintf("rollback not done; the thread keeps this run's checkpoints: %v", err)
			m.log.Error("rollback after restart failed", "run_id", r.RunID, "thread_id", r.ThreadID, "error", err)
		} else {
			m.deleteRecord(ctx, r)
			return
		}
	} else if r.CancelAction == Rollback {
		m.deleteRecord(ctx, r)
		return
	}
	r.Status = StatusInterrupted
	r.UpdatedAt = m.opts.Now().UTC()
	m.persist(ctx, r)
}

// began reports whether a run left "running" by the previous process had
// changed its thread: a checkpoint after the one it started from, or its
// input saved as a pending write. When that cannot be read it answers true,
// so that an input is never applied twice.
func (m *Manager) began(ctx context.Context, r Record) bool {
	if r.Stateless && m.opts.StatelessInMemory {
		return false // its checkpoints were in memory: it starts again
	}
	if m.opts.Checkpointer == nil || r.Stateless {
		return true
	}
	snap, err := m.head(ctx, r.ThreadID)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return r.StartCheckpoint != ""
	case err != nil:
		m.log.Warn("resume run after restart: thread unreadable; continuing it without its input", "run_id", r.RunID, "thread_id", r.ThreadID, "error", err)
		return true
	case snap.ID != r.StartCheckpoint:
		return true
	}
	for _, w := range snap.Pending {
		if w.Kind == "input" {
			return true
		}
	}
	return false
}

// head reads a thread's newest checkpoint and its pending writes, without
// its values when the Checkpointer can (checkpoint.HeadReader).
func (m *Manager) head(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	if hr, ok := m.opts.Checkpointer.(checkpoint.HeadReader); ok {
		return hr.Head(ctx, threadID)
	}
	return m.opts.Checkpointer.Latest(ctx, threadID)
}

// Shutdown stops accepting runs and waits for active ones to end. Queued
// runs do not start; their records stay pending, so the next start runs
// them. At the deadline of ctx, the remaining runs are cancelled; their records stay
// "running", so the next start resumes them from their last checkpoint.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.closing = true
	// Runs waiting for their start time on idle threads never start now:
	// their records stay pending, and the next start schedules them again.
	var waiting []*Active
	for id, s := range m.threads {
		if s.active == nil && !s.held {
			waiting = append(waiting, s.queue...)
			s.queue = nil
			m.forgetIdleLocked(id, s)
		}
	}
	m.mu.Unlock()
	m.releaseUnstarted(waiting)
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	if m.shared() {
		defer m.shutdownShared()
	}
	select {
	case <-done:
		m.flushUnsaved()
		m.cancel(errShutdown) // no run is left to cut; this stops the record retries
		return nil
	case <-ctx.Done():
	}
	m.cancel(errShutdown)
	// Queued runs never start: release their waiters.
	m.mu.Lock()
	var queued []*Active
	for _, s := range m.threads {
		queued = append(queued, s.queue...)
		s.queue = nil
	}
	m.mu.Unlock()
	m.releaseUnstarted(queued)
	<-done
	return fmt.Errorf("shutdown deadline reached; cut runs stay resumable: %w", ctx.Err())
}

// ActiveCount returns the number of running runs.
func (m *Manager) ActiveCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.threads {
		if s.active != nil {
			n++
		}
	}
	return n
}

// value is the record as the Store keeps it: the members of its JSON
// encoding, without encoding and decoding it first (the Store encodes it).
func (rec Record) value() map[string]any {
	v := map[string]any{"run_id": rec.RunID, "thread_id": rec.ThreadID, "assistant_id": rec.AssistantID, "status": rec.Status,
		"created_at": rec.CreatedAt, "updated_at": rec.UpdatedAt, "metadata": rec.Metadata,
		"multitask_strategy": rec.MultitaskStrategy, "kwargs": rec.Kwargs}
	if rec.StartCheckpoint != "" {
		v["start_checkpoint"] = rec.StartCheckpoint
	}
	if rec.Error != "" {
		v["error"] = rec.Error
	}
	if rec.CancelAction != "" {
		v["cancel_action"] = rec.CancelAction
	}
	if rec.StartKnown {
		v["start_known"] = true
	}
	if rec.Stateless {
		v["stateless"] = true
	}
	if !rec.StartAt.IsZero() {
		v["start_at"] = rec.StartAt
	}
	return v
}

func fromMap(v map[string]any) (Record, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Record{}, fmt.Errorf("decode run record: %w", err)
	}
	var r Record
	if err := checkpoint.DecodeJSON(b, &r); err != nil {
		return Record{}, fmt.Errorf("decode run record: %w", err)
	}
	return r, nil
}

// metadataFrame is the data of a run's first frame, as json.Marshal
// encodes {"run_id": runID, "thread_id": threadID, "attempt": 1}.
func metadataFrame(runID, threadID string) []byte {
	b := make([]byte, 0, len(`{"attempt":1,"run_id":"","thread_id":""}`)+len(runID)+len(threadID))
	b = append(b, `{"attempt":1,"run_id":`...)
	b = jsonenc.AppendString(b, runID)
	b = append(b, `,"thread_id":`...)
	b = jsonenc.AppendString(b, threadID)
	return append(b, '}')
}

func mustJSON(v any) []byte {
	if v == nil {
		return []byte("null")
	}
	if e, ok := v.(Encoded); ok {
		return e
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": "EncodeError", "message": err.Error()})
	}
	return b
}

// RollbackThread returns a thread to checkpoint start, dropping every
// checkpoint written after it, in one Checkpointer operation (a crash leaves
// the thread as it was or rolled back); with start empty (the thread was
// new) the thread is deleted.
func RollbackThread(ctx context.Context, cp checkpoint.Checkpointer, threadID, start string) error {
	if cp == nil {
		return errors.New("rollback: no checkpointer")
	}
	if start == "" {
		if err := cp.DeleteThread(ctx, threadID); err != nil {
			return fmt.Errorf("rollback thread %q: %w", threadID, err)
		}
		return nil
	}
	if err := cp.Rollback(ctx, threadID, start); err != nil {
		return fmt.Errorf("rollback thread %q to %s: %w", threadID, start, err)
	}
	return nil
}
