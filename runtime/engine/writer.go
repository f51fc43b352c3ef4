package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/store"
)

// writer writes a run's checkpoints and pending writes behind the run, for
// the async and exit durability modes: the run queues them and goes on,
// and they are written in order, the checkpoints that follow one another
// in one transaction (checkpoint.BatchPutter). In async mode a write starts
// once the oldest queued one has waited writeBehind, or once batchSize
// checkpoints are queued; in exit mode only when the run ends (or the
// queue is full). The run flushes the queue before it ends, so that what a
// caller is told has been written. The first failed write fails every
// later one and the run: the thread stays at the last checkpoint written.
type writer struct {
	cp checkpoint.Checkpointer
	// run is the run's context: once it is done, nothing more is queued,
	// as a Put refuses a done context; ctx, without its cancel, writes
	// what was queued before.
	run   context.Context
	ctx   context.Context
	async bool

	// flushing serialises the writes, in queue order.
	flushing sync.Mutex

	mu     sync.Mutex
	queue  []queued
	bytes  int
	err    error
	timer  *time.Timer
	active bool // a background write is scheduled or under way
}

// queued is a checkpoint to put, or a pending write to save when put is nil.
type queued struct {
	put                    *checkpoint.PutRequest
	threadID, checkpointID string
	write                  checkpoint.PendingWrite
}

const (
	// writeBehind is how long a queued checkpoint waits, in async mode,
	// before the background write starts: steps that follow within it are
	// written in the same transaction.
	writeBehind = 2 * time.Millisecond
	// batchSize is the number of queued checkpoints, and batchBytes their
	// blobs' size, from which a write starts at once.
	batchSize  = 64
	batchBytes = 1 << 20
	// backlog and backlogBytes are the number of queued entries and the
	// size of their values at which the run waits for the queue to be
	// written.
	backlog      = 4 * batchSize
	backlogBytes = 4 * batchBytes
)

// newWriter returns the writer of a run of req, or nil when its checkpoints
// are written as they are made: in sync mode, and on a checkpointer that
// does not write batches or keeps them in memory (where a write costs no
// I/O), or a thread that lives for the run only.
func (e *Engine) newWriter(ctx context.Context, req Request) *writer {
	mode := req.Durability
	if mode == "" {
		mode = e.opts.Durability
	}
	if mode == "" {
		mode = checkpoint.DurabilityAsync
	}
	if mode == checkpoint.DurabilitySync {
		return nil
	}
	if _, ok := e.cp.(checkpoint.BatchPutter); !ok {
		return nil
	}
	if m, ok := e.cp.(checkpoint.MemoryResident); ok && m.InMemory() {
		return nil
	}
	if tt, ok := e.cp.(TemporaryThreads); ok && tt.IsTemporary(req.ThreadID) {
		return nil
	}
	return &writer{cp: e.cp, run: ctx, ctx: context.WithoutCancel(ctx), async: mode == checkpoint.DurabilityAsync}
}

// Flush writes now what the run in progress on the thread (or on a
// subgraph's thread of it) has queued to write behind it, so that a reader
// that must see a checkpoint the run reported (a stream showing its state)
// finds it. It does nothing when no run of the thread writes behind it.
func (e *Engine) Flush(threadID string) error {
	if w, ok := e.writers.Load(threadID); ok {
		return w.(*writer).flush()
	}
	for _, c := range e.children {
		if err := c.Flush(threadID); err != nil {
			return err
		}
	}
	return nil
}

// put queues a checkpoint. It returns the error of an earlier write.
func (w *writer) put(cp checkpoint.Checkpoint, blobs []checkpoint.Blob) error {
	size := 0
	for _, b := range blobs {
		size += len(b.Data)
	}
	return w.enqueue(queued{put: &checkpoint.PutRequest{Checkpoint: cp, Blobs: blobs}}, size)
}

// putWrites queues a pending write against a checkpoint.
func (w *writer) putWrites(threadID, checkpointID string, pw checkpoint.PendingWrite) error {
	return w.enqueue(queued{threadID: threadID, checkpointID: checkpointID, write: pw}, len(pw.Update))
}

func (w *writer) enqueue(q queued, size int) error {
	if err := w.run.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.queue = append(w.queue, q)
	w.bytes += size
	full := len(w.queue) >= batchSize || w.bytes >= batchBytes
	switch {
	case len(w.queue) >= backlog || w.bytes >= backlogBytes:
		w.mu.Unlock()
		return w.flush()
	case w.active:
	case full:
		w.active = true
		go w.background()
	case w.async && w.timer == nil:
		w.active = true
		w.timer = time.AfterFunc(writeBehind, w.background)
	case w.async:
		w.active = true
		w.timer.Reset(writeBehind)
	}
	w.mu.Unlock()
	return nil
}

// background writes the queue; it runs once per write started by enqueue.
func (w *writer) background() {
	_ = w.flush() // a failure is kept for the run's next put or flush
	w.mu.Lock()
	w.active = false
	if len(w.queue) >= batchSize || w.bytes >= batchBytes {
		w.active = true
		go w.background()
	} else if w.async && len(w.queue) > 0 {
		w.active = true
		if w.timer == nil {
			w.timer = time.AfterFunc(writeBehind, w.background)
		} else {
			w.timer.Reset(writeBehind)
		}
	}
	w.mu.Unlock()
}

// flush writes everything queued and returns the first write's error, if
// any write failed.
func (w *writer) flush() error {
	w.flushing.Lock()
	defer w.flushing.Unlock()
	w.mu.Lock()
	queue, err := w.queue, w.err
	w.queue, w.bytes = nil, 0
	w.mu.Unlock()
	if err != nil || len(queue) == 0 {
		return err
	}
	err = w.write(queue)
	if err != nil {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}
	return err
}

// write writes entries in order: each run of checkpoints in one batch.
func (w *writer) write(entries []queued) error {
	var puts []checkpoint.PutRequest
	flushPuts := func() error {
		err := checkpoint.PutAll(w.ctx, w.cp, puts)
		puts = puts[:0]
		return err
	}
	for _, q := range entries {
		if q.put != nil {
			puts = append(puts, *q.put)
			continue
		}
		if err := flushPuts(); err != nil {
			return err
		}
		if err := w.cp.PutWrites(w.ctx, q.threadID, q.checkpointID, q.write); err != nil {
			return err
		}
	}
	return flushPuts()
}

// close stops the background writes and writes what is queued.
func (w *writer) close() error { return w.closeCarrying(nil) }

// closeCarrying is close with c's puts written in the transaction of the
// last checkpoints, when any are left to write (see checkpoint.Carry).
func (w *writer) closeCarrying(c *checkpoint.Carry) error {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	if c != nil {
		w.flushing.Lock()
		w.ctx = checkpoint.WithCarry(w.ctx, c) // write reads it under flushing
		w.flushing.Unlock()
	}
	return w.flush()
}

type holdEndWritesKey struct{}

// HoldEndWrites returns a context whose runs, when they write their
// checkpoints behind them, leave the last ones for the caller to write with
// Result.EndWrites, in the same transaction as the caller's own records.
func HoldEndWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, holdEndWritesKey{}, true)
}

func endWritesHeld(ctx context.Context) bool {
	held, _ := ctx.Value(holdEndWritesKey{}).(bool)
	return held
}

// heldEndWrites returns the Result.EndWrites of a run whose writer is
// held: it writes what the run left queued, with puts in the same
// transaction (the checkpointer carries them, checkpoint.ItemCarrier), and
// reports whether the puts were written so; when the run left nothing to
// write, or the checkpointer does not carry them, the caller writes them.
// A write that fails leaves the thread at its last checkpoint written and
// the engine's cached state of the thread dropped.
func (r *run) heldEndWrites(ctx context.Context, runErr error) func([]store.BatchPut) (bool, error) {
	w, e, ts, thread := r.w, r.e, r.ts, r.req.ThreadID
	r.w = nil
	var once sync.Once
	return func(puts []store.BatchPut) (carried bool, err error) {
		once.Do(func() {
			var c *checkpoint.Carry
			if len(puts) > 0 {
				c = &checkpoint.Carry{Thread: thread, Build: func() []store.BatchPut { return puts }}
			}
			err = w.closeCarrying(c)
			e.writers.CompareAndDelete(thread, w)
			if err != nil {
				e.cache.drop(thread)
				err = fmt.Errorf("write the run's checkpoints: %w", err)
				return
			}
			carried = c != nil && !c.Drop()
			if runErr == nil {
				e.boundChains(context.WithoutCancel(ctx), thread, ts)
			}
		})
		return carried, err
	}
}
