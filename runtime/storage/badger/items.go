package badger

import (
	"sync"
	"time"
)

// maxKnownItems bounds the store items knownItems remembers; past it, it
// forgets them all and learns again.
const maxKnownItems = 4096

// maxKnownValue is the largest stored value knownItems keeps for Get, so
// that what it holds stays under maxKnownItems × maxKnownValue bytes.
const maxKnownValue = 1 << 10

// knownItems remembers, for store items this DB wrote, what a Put that
// replaces one needs of it: its creation and expiry times and whether it
// has an embedding. A Put of an item the DB knows then reads nothing, and
// a Get of a small one (its stored value is kept too) reads nothing either:
// the DB is the only writer of its directory, so what it last wrote of an
// item is what is stored.
//
// An item's entry is read and set only under the item's lock (one of a
// fixed set, by a hash of its key; Put, PutBatch, Delete and a checkpoint
// transaction's PutItems take it), set after the transaction that wrote
// the item committed and forgotten after one that deleted it, or failed,
// ended, before the lock is let go.
type knownItems struct {
	mu sync.Mutex
	m  map[string]itemFacts
}

// itemFacts are what knownItems keeps of a stored item.
type itemFacts struct {
	created, expires time.Time
	hasVector        bool
	// value is the stored value (see encodeRecord) when it is at most
	// maxKnownValue bytes; it is never modified.
	value []byte
}

func (k *knownItems) get(key []byte) (itemFacts, bool) {
	k.mu.Lock()
	f, ok := k.m[string(key)]
	k.mu.Unlock()
	return f, ok
}

func (k *knownItems) set(key []byte, f itemFacts) {
	k.mu.Lock()
	if k.m == nil || len(k.m) >= maxKnownItems {
		k.m = make(map[string]itemFacts)
	}
	k.m[string(key)] = f
	k.mu.Unlock()
}

// learn records what a transaction that wrote the items and returned facts
// left stored, once it committed (ok) or failed (not ok: they are
// forgotten).
func (k *knownItems) learn(ps []putItem, facts []itemFacts, ok bool) {
	for i, p := range ps {
		if !ok || p.delete {
			k.forget(p.k)
		} else {
			k.set(p.k, facts[i])
		}
	}
}

func (k *knownItems) forget(key []byte) {
	k.mu.Lock()
	delete(k.m, string(key))
	k.mu.Unlock()
}
