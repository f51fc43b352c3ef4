package checkpoint

import (
	"context"
	"sync"

	"github.com/graphctl/graphctl/runtime/store"
)

// ItemCarrier is implemented by a Checkpointer whose database also holds a
// store's items: the next checkpoint write (Put or PutWrites) of a thread
// whose context carries a Carry (WithCarry) writes the Carry's puts in the
// same transaction, so that they cost no commit of their own.
type ItemCarrier interface {
	// CarriesItemsOf reports whether the puts a Carry holds are written to
	// s by this Checkpointer's transactions.
	CarriesItemsOf(s store.Store) bool
}

// Carry holds store puts that ride with a thread's next checkpoint write: the
// first Put or PutWrites of the thread that commits writes them, once. The
// puts are built when a write takes them, so they are as new as they can be;
// Drop stops the carrying, after a write that is under way has ended, so that
// its owner may write newer versions itself without an older carried one
// landing after them.
type Carry struct {
	// Thread is the thread whose checkpoint writes carry the puts; writes
	// of other threads (a subgraph's) do not.
	Thread string
	// Build returns the puts to write.
	Build func() []store.BatchPut

	// mu is held by a write from Take to its end, and by Drop.
	mu      sync.Mutex
	written bool
	dropped bool
}

// Take returns the puts for a checkpoint write of threadID and the function
// the writer calls when its transaction has ended (committed or not); it
// returns nil puts when there is nothing to carry. Until end is called, Drop
// waits.
func (c *Carry) Take(threadID string) (puts []store.BatchPut, end func(committed bool)) {
	if c == nil || threadID != c.Thread {
		return nil, nil
	}
	c.mu.Lock()
	if c.written || c.dropped {
		c.mu.Unlock()
		return nil, nil
	}
	puts = c.Build()
	if len(puts) == 0 {
		c.mu.Unlock()
		return nil, nil
	}
	return puts, func(committed bool) {
		c.written = c.written || committed
		c.mu.Unlock()
	}
}

// Drop stops the carrying once no write is taking the puts, and reports
// whether they were still to be written (neither written nor dropped
// before): the owner then writes what they stood for itself.
func (c *Carry) Drop() (pending bool) {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pending = !c.written && !c.dropped
	c.dropped = true
	return pending
}

type carryKey struct{}

// WithCarry returns a context whose checkpoint writes carry c's puts (see
// ItemCarrier).
func WithCarry(ctx context.Context, c *Carry) context.Context {
	return context.WithValue(ctx, carryKey{}, c)
}

// CarryOf returns the Carry of ctx, or nil.
func CarryOf(ctx context.Context) *Carry {
	c, _ := ctx.Value(carryKey{}).(*Carry)
	return c
}
