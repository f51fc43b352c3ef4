package badger

import (
	"sync"

	bdg "github.com/dgraph-io/badger/v4"
)

// oracle hands out the read and commit timestamps of the database's
// transactions. Badger runs in managed mode (bdg.OpenManaged): its own
// oracle tracks every transaction with two watermarks, each served by a
// goroutine that every begin, commit and discard wakes through a channel;
// on a small machine those hand-offs cost a super-step more than the write
// itself. This oracle keeps the same guarantees with a mutex:
//
//   - A transaction reads at the newest commit timestamp handed out when it
//     began, after every commit at or below it is applied (it waits for
//     commits still being written, as Badger's oracle does), so it sees
//     every transaction that committed before it began and none in part.
//   - Commit timestamps increase; a timestamp whose commit failed is simply
//     never written.
//   - The discard timestamp given to Badger (below which compactions may
//     drop overwritten versions, and conflict records are forgotten) stays
//     at or below the read timestamp of every open transaction.
//
// Conflict detection is Badger's: a transaction fails to commit when a
// transaction that committed after it began wrote a key it read.
//
// Timestamps are Badger's versions, as in unmanaged mode, so directories
// move freely between the two modes: Open starts after the highest version
// stored.
type oracle struct {
	db *bdg.DB

	mu sync.Mutex
	// next is the next commit timestamp.
	next uint64
	// applied is the highest timestamp at or below which every commit is
	// applied (written, or failed).
	applied uint64
	// writing holds the timestamps handed out and not yet applied, in
	// increasing order.
	writing []uint64
	// waiting counts Begins waiting for applied to move; moved wakes them.
	waiting int
	moved   *sync.Cond
	// readers counts the open transactions by read timestamp.
	readers map[uint64]int
	// discard is the discard timestamp last given to Badger.
	discard uint64
}

func newOracle(db *bdg.DB) *oracle {
	max := db.MaxVersion()
	o := &oracle{db: db, next: max + 1, applied: max, discard: max, readers: map[uint64]int{}}
	o.moved = sync.NewCond(&o.mu)
	db.SetDiscardTs(max)
	return o
}

// begin returns the read timestamp of a new transaction, which end must
// release.
func (o *oracle) begin() uint64 {
	o.mu.Lock()
	ts := o.next - 1
	for o.applied < ts {
		o.waiting++
		o.moved.Wait()
		o.waiting--
	}
	o.readers[ts]++
	o.mu.Unlock()
	return ts
}

// end releases a read timestamp from begin.
func (o *oracle) end(readTs uint64) {
	o.mu.Lock()
	if n := o.readers[readTs]; n > 1 {
		o.readers[readTs] = n - 1
	} else {
		delete(o.readers, readTs)
	}
	o.advance()
	o.mu.Unlock()
}

// commitTs hands out a commit timestamp, which applied must release.
func (o *oracle) commitTs() uint64 {
	o.mu.Lock()
	ts := o.next
	o.next++
	o.writing = append(o.writing, ts)
	o.mu.Unlock()
	return ts
}

// done records that the commit at ts is applied or failed.
func (o *oracle) done(ts uint64) {
	o.mu.Lock()
	for i, w := range o.writing {
		if w == ts {
			o.writing = append(o.writing[:i], o.writing[i+1:]...)
			break
		}
	}
	applied := o.next - 1
	if len(o.writing) > 0 {
		applied = o.writing[0] - 1
	}
	if applied > o.applied {
		o.applied = applied
		if o.waiting > 0 {
			o.moved.Broadcast()
		}
	}
	o.advance()
	o.mu.Unlock()
}

// advance moves Badger's discard timestamp up to the oldest open read
// timestamp, or to applied when no transaction is open. Called with mu
// held.
func (o *oracle) advance() {
	floor := o.applied
	for ts := range o.readers {
		floor = min(floor, ts)
	}
	if floor > o.discard {
		o.discard = floor
		o.db.SetDiscardTs(floor)
	}
}
