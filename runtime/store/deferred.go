package store

import (
	"context"
	"sync"
)

// Deferred gathers the puts that writers inside a run hand over to the
// code that ends the run, which writes them in the same transaction as its
// own record of the run's end (a Batcher's PutBatch): one commit instead of
// one per writer. A writer finds it in its context (DeferredOf) and, when
// Add accepts its puts, does not write them itself.
type Deferred struct {
	// Thread is the thread of the run whose context carries it; writes
	// that belong to another thread (a subgraph's) are not deferred.
	Thread string

	mu     sync.Mutex
	puts   []BatchPut
	closed bool
}

// Add hands puts over to be written with the run's end. It reports false
// (and keeps nothing) once the puts have been taken: the writer then
// writes them itself.
func (d *Deferred) Add(puts ...BatchPut) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.puts = append(d.puts, puts...)
	return true
}

// Take returns the puts handed over so far; later Adds are refused.
func (d *Deferred) Take() []BatchPut {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	puts := d.puts
	d.puts = nil
	return puts
}

type deferredKey struct{}

// WithDeferred returns a context whose writers hand their puts over to d.
func WithDeferred(ctx context.Context, d *Deferred) context.Context {
	return context.WithValue(ctx, deferredKey{}, d)
}

// DeferredOf returns the Deferred of ctx, or nil.
func DeferredOf(ctx context.Context) *Deferred {
	d, _ := ctx.Value(deferredKey{}).(*Deferred)
	return d
}
