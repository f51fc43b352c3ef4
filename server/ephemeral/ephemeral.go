// Package ephemeral is a checkpoint.Checkpointer that keeps temporary
// threads in memory and every other thread in a durable checkpointer.
//
// A stateless run (POST /runs/wait, /runs/stream) runs on a thread that is
// deleted when the run ends: nobody reads its checkpoints afterwards, so
// writing them to disk only to delete them costs a transaction per
// super-step for nothing. The server marks such a thread temporary before its
// run starts (Temporary); from then on every checkpoint of the thread and of
// its subgraphs' namespaces lives in an in-memory checkpointer of its own
// (checkpoint/memory, the same data model as the durable backends), and
// DeleteThread of the thread drops it. Everything else goes to the durable
// checkpointer unchanged.
package ephemeral

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/store"
)

// Checkpointer routes temporary threads to memory and the others to a
// durable checkpointer. It is safe for concurrent use.
type Checkpointer struct {
	durable checkpoint.Checkpointer

	mu   sync.RWMutex
	temp map[string]*memory.Checkpointer
}

var (
	_ checkpoint.Checkpointer = (*Checkpointer)(nil)
	_ checkpoint.BatchPutter  = (*Checkpointer)(nil)
	_ checkpoint.Syncer       = (*Checkpointer)(nil)
	_ checkpoint.HeadReader   = (*Checkpointer)(nil)
	_ checkpoint.ItemCarrier  = (*Checkpointer)(nil)
	_ checkpoint.ChildLister  = (*Checkpointer)(nil)
)

// New returns a checkpointer that keeps every thread in durable until it is
// marked temporary.
func New(durable checkpoint.Checkpointer) *Checkpointer {
	return &Checkpointer{durable: durable, temp: map[string]*memory.Checkpointer{}}
}

// Durable returns the checkpointer of the threads that are not temporary.
func (c *Checkpointer) Durable() checkpoint.Checkpointer { return c.durable }

// Temporary marks a root thread (not a subgraph namespace) as temporary:
// its checkpoints, and those of its subgraphs, are kept in memory until
// DeleteThread deletes it. Mark a thread before anything of it is written:
// checkpoints already in the durable checkpointer are not moved.
func (c *Checkpointer) Temporary(threadID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.temp[threadID] == nil {
		c.temp[threadID] = memory.New()
	}
}

// IsTemporary reports whether a thread (or the root thread of a subgraph
// namespace) is temporary.
func (c *Checkpointer) IsTemporary(threadID string) bool {
	return c.memory(threadID) != nil
}

// memory returns the in-memory checkpointer of a temporary thread, nil for
// a durable one.
func (c *Checkpointer) memory(threadID string) *memory.Checkpointer {
	root, _ := checkpoint.SplitThreadID(threadID)
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.temp[root]
}

// of returns the checkpointer that holds a thread.
func (c *Checkpointer) of(threadID string) checkpoint.Checkpointer {
	if m := c.memory(threadID); m != nil {
		return m
	}
	return c.durable
}

// Put implements checkpoint.Checkpointer.
func (c *Checkpointer) Put(ctx context.Context, cp checkpoint.Checkpoint, blobs []checkpoint.Blob) error {
	takeHead(ctx, cp.ThreadID)
	return c.of(cp.ThreadID).Put(ctx, cp, blobs)
}

// PutBatch implements checkpoint.BatchPutter: in one transaction when
// the thread's checkpointer writes batches.
func (c *Checkpointer) PutBatch(ctx context.Context, puts []checkpoint.PutRequest) error {
	if len(puts) == 0 {
		return nil
	}
	thread := puts[0].Checkpoint.ThreadID
	takeHead(ctx, thread)
	return checkpoint.PutAll(ctx, c.of(thread), puts)
}

// InMemory implements checkpoint.MemoryResident for the durable
// checkpointer's threads (a run on a temporary thread is told apart by
// IsTemporary).
func (c *Checkpointer) InMemory() bool {
	m, ok := c.durable.(checkpoint.MemoryResident)
	return ok && m.InMemory()
}

// PutWrites implements checkpoint.Checkpointer.
func (c *Checkpointer) PutWrites(ctx context.Context, threadID, checkpointID string, w checkpoint.PendingWrite) error {
	takeHead(ctx, threadID)
	return c.of(threadID).PutWrites(ctx, threadID, checkpointID, w)
}

// Latest implements checkpoint.Checkpointer.
func (c *Checkpointer) Latest(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	takeHead(ctx, threadID)
	return c.of(threadID).Latest(ctx, threadID)
}

// Head implements checkpoint.HeadReader. A durable checkpointer that cannot
// read heads answers with its Latest snapshot, values dropped. The head
// handed over with ctx (WithHead) answers the first read of its thread.
func (c *Checkpointer) Head(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	if snap := takeHead(ctx, threadID); snap != nil {
		return snap, nil
	}
	cp := c.of(threadID)
	if hr, ok := cp.(checkpoint.HeadReader); ok {
		return hr.Head(ctx, threadID)
	}
	snap, err := cp.Latest(ctx, threadID)
	if err != nil {
		return nil, err
	}
	snap.Values = nil
	return snap, nil
}

// Get implements checkpoint.Checkpointer.
func (c *Checkpointer) Get(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	return c.of(threadID).Get(ctx, threadID, checkpointID)
}

// History implements checkpoint.Checkpointer.
func (c *Checkpointer) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	return c.of(threadID).History(ctx, threadID, opts)
}

// Threads implements checkpoint.Checkpointer: the durable threads; temporary
// ones are not listed.
func (c *Checkpointer) Threads(ctx context.Context) ([]checkpoint.ThreadInfo, error) {
	return c.durable.Threads(ctx)
}

// Children implements checkpoint.ChildLister: a temporary thread's from
// memory, a durable one's from the durable checkpointer (by key range when
// it is a ChildLister).
func (c *Checkpointer) Children(ctx context.Context, threadID string) ([]string, error) {
	return checkpoint.ChildThreads(ctx, c.of(threadID), threadID)
}

// Fork implements checkpoint.Checkpointer. A fork stays within one
// checkpointer: within a temporary thread (its namespaces), or between
// durable threads; copying a temporary thread into another one is refused.
func (c *Checkpointer) Fork(ctx context.Context, threadID, checkpointID, newThreadID string) (*checkpoint.Checkpoint, error) {
	takeHead(ctx, newThreadID)
	from, to := c.memory(threadID), c.memory(newThreadID)
	switch {
	case from == nil && to == nil:
		return c.durable.Fork(ctx, threadID, checkpointID, newThreadID)
	case from != nil && from == to:
		return from.Fork(ctx, threadID, checkpointID, newThreadID)
	case from != nil:
		return nil, fmt.Errorf("fork thread %q into %q: %q is the temporary thread of a stateless run; its checkpoints cannot be copied to another thread", threadID, newThreadID, threadID)
	default:
		return nil, fmt.Errorf("fork thread %q into %q: %q is the temporary thread of a stateless run; nothing can be copied into it", threadID, newThreadID, newThreadID)
	}
}

// DeleteThread implements checkpoint.Checkpointer. Deleting a temporary
// root thread drops it, with its subgraphs' namespaces, from memory; the
// thread is durable again afterwards.
func (c *Checkpointer) DeleteThread(ctx context.Context, threadID string) error {
	takeHead(ctx, threadID)
	m := c.memory(threadID)
	if m == nil {
		return c.durable.DeleteThread(ctx, threadID)
	}
	if root, _ := checkpoint.SplitThreadID(threadID); root != threadID {
		return m.DeleteThread(ctx, threadID)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.temp, threadID)
	c.mu.Unlock()
	return nil
}

// Rollback implements checkpoint.Checkpointer.
func (c *Checkpointer) Rollback(ctx context.Context, threadID, checkpointID string) error {
	takeHead(ctx, threadID)
	return c.of(threadID).Rollback(ctx, threadID, checkpointID)
}

// Prune implements checkpoint.Checkpointer.
func (c *Checkpointer) Prune(ctx context.Context, threadID string, keep int) error {
	takeHead(ctx, threadID)
	return c.of(threadID).Prune(ctx, threadID, keep)
}

// Sync implements checkpoint.Syncer: the durable checkpointer's writes reach
// the disk (nothing to do when it has no Sync).
func (c *Checkpointer) Sync(ctx context.Context) error {
	if s, ok := c.durable.(checkpoint.Syncer); ok {
		return s.Sync(ctx)
	}
	return nil
}

// CarriesItemsOf implements checkpoint.ItemCarrier for the threads that are
// not temporary: those of the durable checkpointer, when it carries items.
func (c *Checkpointer) CarriesItemsOf(s store.Store) bool {
	ic, ok := c.durable.(checkpoint.ItemCarrier)
	return ok && ic.CarriesItemsOf(s)
}

// headMemo is a thread's head read by the caller of a run, handed to the
// run's first read of the same head.
type headMemo struct {
	thread string
	snap   atomic.Pointer[checkpoint.Snapshot]
}

type headMemoKey struct{}

// WithHead returns a context whose first Head of threadID answers snap, a
// head its caller has just read (the run manager reads where a run starts;
// the engine then reads the same head to open the thread): one read instead
// of two. Any other operation on the thread through the context forgets
// snap first, so it never answers for a thread that has changed since. The
// caller must hold the thread (no other writer) until the run has opened it.
func WithHead(ctx context.Context, threadID string, snap *checkpoint.Snapshot) context.Context {
	if snap == nil {
		return ctx
	}
	m := &headMemo{thread: threadID}
	m.snap.Store(snap)
	return context.WithValue(ctx, headMemoKey{}, m)
}

// takeHead returns (once) the head handed over with ctx for threadID.
func takeHead(ctx context.Context, threadID string) *checkpoint.Snapshot {
	m, _ := ctx.Value(headMemoKey{}).(*headMemo)
	if m == nil || m.thread != threadID {
		return nil
	}
	return m.snap.Swap(nil)
}
