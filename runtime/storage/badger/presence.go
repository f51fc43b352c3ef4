package badger

import (
	"encoding/binary"
	"math"
	"strings"
	"sync"

	bdg "github.com/dgraph-io/badger/v4"
)

// presence remembers where keys of one kind may be stored — the pending
// writes of a checkpoint, the snapshots of a thread — so that a Put can skip
// the scan or read that would find nothing, which is almost always what it
// would find. A Badger directory is open in one process at a time, so the
// process sees every write to it: Open lists the keys already stored; an
// entry is added before a transaction writes a key under it and stays while
// that transaction is open; it is removed only after a transaction that
// deleted its keys committed, when no transaction that may write under it
// is open and nothing was added since the deleting transaction looked. An
// entry may so be present for keys that are gone (the scan then finds
// nothing, as it did before), but is never absent for keys that are stored.
//
// An entry also keeps a bound: for a snapshot, a version its stored
// snapshot's is not above (math.MaxInt64 when unknown, as for those found
// at Open), raised before a snapshot is written and lowered only to a
// version read back while nothing was added.
type presence struct {
	mu  sync.Mutex
	gen uint64
	m   map[string]*mark
}

// mark is what presence knows of an entry.
type mark struct {
	gen   uint64 // the generation of the last add
	open  int    // transactions that added under it and have not ended
	bound int64
}

func newPresence() *presence { return &presence{m: map[string]*mark{}} }

// add records that a transaction may write a key under entry, with a bound
// of at least bound; the transaction calls release when it ends, committed
// or not.
func (p *presence) add(entry string, bound int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	m := p.m[entry]
	if m == nil {
		m = &mark{bound: bound}
		p.m[entry] = m
	}
	m.gen = p.gen
	m.open++
	m.bound = max(m.bound, bound)
}

// bound returns the entry's bound, whether it is present, and the
// generation to pass to remove or learn.
func (p *presence) bound(entry []byte) (bound int64, ok bool, seen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.m[string(entry)]
	if m == nil {
		return 0, false, p.gen
	}
	return m.bound, true, p.gen
}

// learn lowers the entry's bound to what a transaction read, when nothing
// was added under it since generation seen and no transaction that may
// write under it is open.
func (p *presence) learn(entry string, bound int64, seen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := p.m[entry]; m != nil && m.gen <= seen && m.open == 0 && bound < m.bound {
		m.bound = bound
	}
}

// release ends an add's transaction.
func (p *presence) release(entry string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := p.m[entry]; m != nil && m.open > 0 {
		m.open--
	}
}

// has reports whether keys may be stored under entry, and the generation
// to pass to remove once they are deleted.
func (p *presence) has(entry []byte) (bool, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.m[string(entry)]
	return ok, p.gen
}

// now is the current generation, to pass to remove.
func (p *presence) now() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gen
}

// remove forgets the entries with the prefix (exactly entry when !prefix)
// to which nothing was added after generation seen and that no open
// transaction may write under.
func (p *presence) remove(entry string, prefix bool, seen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	gone := func(m *mark) bool { return m.gen <= seen && m.open == 0 }
	if !prefix {
		if m := p.m[entry]; m != nil && gone(m) {
			delete(p.m, entry)
		}
		return
	}
	for k, m := range p.m {
		if strings.HasPrefix(k, entry) && gone(m) {
			delete(p.m, k)
		}
	}
}

// change is a transaction's use of a presence: an add to release when the
// transaction ends, or a removal to make when it commits.
type change struct {
	p      *presence
	entry  string
	add    bool
	prefix bool
	seen   uint64
}

// loadPresence lists the pending writes and snapshots stored in db: for
// each, its entry is the key up to the end of the parts (thread, then
// checkpoint) that name it.
func loadPresence(db *bdg.DB) (writes, snaps *presence, err error) {
	writes, snaps = newPresence(), newPresence()
	err = db.View(func(txn *bdg.Txn) error {
		for _, k := range []struct {
			kind  byte
			parts int
			p     *presence
		}{{kindWrite, 2, writes}, {kindSnapshot, 2, snaps}} {
			it := txn.NewIterator(bdg.IteratorOptions{Prefix: []byte{k.kind, '/'}})
			for it.Rewind(); it.Valid(); it.Next() {
				key := it.Item().Key()
				entry := string(key) // unreadable: kept, never matched
				if end, ok := partsEnd(key, 2, k.parts); ok {
					entry = string(key[:end])
				}
				k.p.add(entry, math.MaxInt64)
				k.p.release(entry)
			}
			it.Close()
		}
		return nil
	})
	return writes, snaps, err
}

// partsEnd returns the offset in key just after n ⟨s⟩ parts starting at from.
func partsEnd(key []byte, from, n int) (int, bool) {
	at := from
	for range n {
		l, w := binary.Uvarint(key[at:])
		if w <= 0 || uint64(len(key)-at-w) < l {
			return 0, false
		}
		at += w + int(l)
	}
	return at, true
}
