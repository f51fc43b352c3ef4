package engine

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// defaultStateCache is the number of threads whose decoded state an engine
// keeps when Options.StateCache is zero.
const defaultStateCache = 128

// stateCache keeps the decoded state of the threads an engine ran most
// recently, so that a thread's next run does not read and decode its whole
// state again: a turn of a long conversation then costs the same as an early
// one.
//
// An entry is the state at one checkpoint. It is used only when the
// checkpointer's Head — a read of the newest checkpoint without its values —
// names the same checkpoint with the same field versions, so a thread moved
// on by anything else (another process sharing the database, a state update,
// a rollback, a deleted thread) is read from storage as before. Values in an
// entry are never modified: runs work on a shallow copy, and reducers build
// new values rather than change old ones.
type stateCache struct {
	mu    sync.Mutex
	limit int
	order *list.List // of *cachedState, most recently used first
	items map[string]*list.Element
}

type cachedState struct {
	thread     string
	checkpoint string
	versions   map[string]int64
	values     map[string]any
	deltas     map[string]int
}

// newStateCache returns a cache of up to limit threads (0: the default), or
// nil when limit is negative.
func newStateCache(limit int) *stateCache {
	switch {
	case limit < 0:
		return nil
	case limit == 0:
		limit = defaultStateCache
	}
	return &stateCache{limit: limit, order: list.New(), items: map[string]*list.Element{}}
}

func (c *stateCache) get(thread string) *cachedState {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[thread]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*cachedState)
}

func (c *stateCache) put(s *cachedState) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[s.thread]; ok {
		el.Value = s
		c.order.MoveToFront(el)
		return
	}
	c.items[s.thread] = c.order.PushFront(s)
	for c.order.Len() > c.limit {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cachedState).thread)
	}
}

func (c *stateCache) drop(thread string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[thread]; ok {
		c.order.Remove(el)
		delete(c.items, thread)
	}
}

// loadLatest returns the thread's state at its newest checkpoint (a new
// thread's initial state when it has none), from the cache when the cached
// checkpoint is still the newest, else from the checkpointer.
func (e *Engine) loadLatest(ctx context.Context, thread string) (*threadState, error) {
	if ts, ok, err := e.loadCached(ctx, thread); ok || err != nil {
		return ts, err
	}
	snap, err := e.cp.Latest(ctx, thread)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		snap = nil
	case err != nil:
		return nil, fmt.Errorf("run thread %q: load checkpoint: %w", thread, err)
	}
	return e.loadThread(snap)
}

// loadCached returns the cached state of the thread when its checkpoint is
// still the thread's newest; ok is false when it is not (or nothing is cached).
func (e *Engine) loadCached(ctx context.Context, thread string) (ts *threadState, ok bool, err error) {
	hr, canCheck := e.cp.(checkpoint.HeadReader)
	if !canCheck {
		return nil, false, nil
	}
	c := e.cache.get(thread)
	if c == nil {
		return nil, false, nil
	}
	head, err := hr.Head(ctx, thread)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		e.cache.drop(thread)
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("run thread %q: load checkpoint: %w", thread, err)
	case head.ID != c.checkpoint || !maps.Equal(head.Versions, c.versions):
		e.cache.drop(thread)
		return nil, false, nil
	}
	// head has no values: loadThread checks it and sets everything else up,
	// then the cached values take the place of the initial ones.
	if ts, err = e.loadThread(head); err != nil {
		return nil, false, err
	}
	for k, v := range c.values {
		ts.values[k] = v
	}
	ts.deltas = maps.Clone(c.deltas)
	return ts, true, nil
}

// TemporaryThreads is implemented by a checkpointer that holds some threads
// for one run only (a stateless run's thread, deleted when the run ends):
// the engine does not cache the state of a thread it reports temporary,
// since nothing reads that thread again, and the entries of the threads
// that are read again stay in the cache.
type TemporaryThreads interface {
	IsTemporary(threadID string) bool
}

// remember caches the thread's state after a run: the state at the thread's
// newest checkpoint when the run ended without error, nothing otherwise (a
// failed run may have applied writes it did not checkpoint, a temporary
// thread is not read again).
func (e *Engine) remember(thread string, ts *threadState, runErr error) {
	if tt, ok := e.cp.(TemporaryThreads); ok && tt.IsTemporary(thread) {
		e.cache.drop(thread)
		return
	}
	if runErr != nil || ts == nil || !ts.exists {
		e.cache.drop(thread)
		return
	}
	e.cache.put(&cachedState{
		thread:     thread,
		checkpoint: ts.cp.ID,
		versions:   maps.Clone(ts.cp.Versions),
		values:     maps.Clone(ts.values),
		deltas:     maps.Clone(ts.deltas),
	})
}

// boundChains asks the checkpointer for the snapshot of every field that
// gathered checkpoint.SnapshotEvery append deltas since its last one, and at
// least one for every snapshotGrowth items of the list, so that a thread run
// from the cache, which nothing reads cold, still has bounded chains when it
// is: a cold read walks no more deltas than a fixed number or a fraction of
// the list it decodes anyway. A snapshot writes the whole list; taking one
// only after a number of appends proportional to the list's length keeps
// its cost per append the same however long the list gets. A snapshot only
// speeds reads up: when saving one fails, the run is not affected and the
// next run tries again.
func (e *Engine) boundChains(ctx context.Context, thread string, ts *threadState) {
	saver, ok := e.cp.(checkpoint.SnapshotSaver)
	if !ok || ts == nil {
		return
	}
	var due map[string]int64
	for f, n := range ts.deltas {
		list, _ := ts.values[f].([]any)
		if v, stored := ts.versions[f]; stored && n >= e.snapshotEvery() && n*snapshotGrowth >= len(list) {
			if due == nil {
				due = map[string]int64{}
			}
			due[f] = v
		}
	}
	if len(due) == 0 || saver.SaveSnapshots(context.WithoutCancel(ctx), thread, due) != nil {
		return
	}
	for f := range due {
		delete(ts.deltas, f)
	}
}

// clipLists returns a shallow copy of state in which every list has no spare
// capacity, so that appending to it, as a node or a caller might, always
// copies instead of writing into memory a later value of the list may share
// (the list reducers grow lists in place; see package reducer). The engine
// itself, and the cache, keep the lists unclipped so that the next write can
// append in place.
func clipLists(state map[string]any) map[string]any {
	out := make(map[string]any, len(state))
	for k, v := range state {
		if l, ok := v.([]any); ok {
			v = l[:len(l):len(l)]
		}
		out[k] = v
	}
	return out
}

// snapshotGrowth is the most items per delta since its last snapshot a
// list has when it gets a new one (see boundChains).
const snapshotGrowth = 4

func (e *Engine) snapshotEvery() int {
	if e.opts.SnapshotEvery > 0 {
		return e.opts.SnapshotEvery
	}
	return checkpoint.SnapshotEvery
}
