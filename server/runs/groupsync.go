package runs

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSyncDelay is how long the end of a run waits, at most, for other
// runs to end before the fsync that makes it durable (Options.SyncDelay).
const DefaultSyncDelay = 500 * time.Microsecond

// minSyncWorthDelay is the shortest sync that the ends of runs wait for
// each other to share.
const minSyncWorthDelay = 20 * time.Microsecond

// groupSync makes the ends of runs durable together (group commit): runs
// that end while an fsync is under way share the next one; a run that ends
// when none is, while other runs are still executing, waits up to delay for
// them to end too, and one fsync then covers every run that ended
// meanwhile.
// A run that ends alone, with no fsync under way, is synced at once. Each
// caller returns only after an fsync that started after its call, so what
// it wrote before calling is on disk.
type groupSync struct {
	sync  func(context.Context) error
	delay time.Duration

	// executing counts the runs that will sync their end and have not
	// asked yet.
	executing atomic.Int64

	// cost is how long the last sync took.
	cost atomic.Int64

	mu   sync.Mutex
	next *syncBatch // the batch new callers join; nil when none is open
	// syncing is closed when the fsync under way returns; nil when none is.
	syncing chan struct{}
}

// syncBatch is the callers one fsync covers.
type syncBatch struct {
	members   int           // the callers it covers
	quiet     chan struct{} // closed once no other run is executing
	quietDone bool
	done      chan struct{} // closed when the fsync has returned
	err       error
}

// started counts a run that will end with Sync, or with ended when its
// end is not synced.
func (g *groupSync) started() { g.executing.Add(1) }

// ended is called instead of Sync by a started run whose end is not synced.
func (g *groupSync) ended() {
	g.mu.Lock()
	g.leaveLocked()
	g.mu.Unlock()
}

// leaveLocked counts a started run out of the executing ones; the open
// batch stops waiting once none is left. g.mu must be held.
func (g *groupSync) leaveLocked() {
	if g.executing.Add(-1) > 0 {
		return
	}
	if b := g.next; b != nil && !b.quietDone {
		b.quietDone = true
		close(b.quiet)
	}
}

// Sync is called once by every started run whose end is to be made
// durable, once it has written it (it joins the next fsync and leaves the
// executing runs at once): it returns once an fsync that started after
// the call has returned.
func (g *groupSync) Sync(ctx context.Context) error {
	g.mu.Lock()
	b := g.next
	if b != nil {
		b.members++
		g.leaveLocked()
		g.mu.Unlock()
		<-b.done
		return b.err
	}
	b = &syncBatch{members: 1, quiet: make(chan struct{}), done: make(chan struct{})}
	g.next = b
	g.leaveLocked()
	// While an fsync is under way the batch gathers the runs ending
	// meanwhile without a delay of its own.
	quiet := b.quietDone || g.syncing != nil
	g.mu.Unlock()
	// A sync that costs next to nothing (commits synced one by one, or an
	// in-memory database) is not worth waiting for company.
	if !quiet && g.delay > 0 && time.Duration(g.cost.Load()) >= minSyncWorthDelay {
		t := time.NewTimer(g.delay)
		select {
		case <-b.quiet:
		case <-t.C:
		}
		t.Stop()
	}
	// While an fsync is under way the batch stays open: everyone who ends
	// meanwhile waits for the next fsync anyway, and one covers them all.
	g.mu.Lock()
	for g.syncing != nil {
		busy := g.syncing
		g.mu.Unlock()
		<-busy
		g.mu.Lock()
	}
	g.next = nil
	syncing := make(chan struct{})
	g.syncing = syncing
	g.mu.Unlock()
	start := time.Now()
	b.err = g.sync(ctx)
	g.cost.Store(int64(time.Since(start)))
	g.mu.Lock()
	g.syncing = nil
	g.mu.Unlock()
	close(syncing)
	close(b.done)
	return b.err
}
