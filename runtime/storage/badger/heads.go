package badger

import (
	"slices"
	"sync"
)

// threadLocks are the locks of core.Txn.Lock: a thread's lock is one of a
// fixed set, chosen by a hash of its id (threads that share one only wait
// for each other's transactions).
type threadLocks [256]sync.RWMutex

func (l *threadLocks) of(threadID string) *sync.RWMutex {
	return &l[l.index(threadID)]
}

// index is the index of the lock of a thread (or store item key).
func (l *threadLocks) index(key string) int {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return int(h % uint32(len(l)))
}

// lock locks exclusively the locks of the keys, each once and in the order
// of their indexes (so that two callers cannot wait for each other), and
// returns the function that unlocks them.
func (l *threadLocks) lock(keys [][]byte) (unlock func()) {
	if len(keys) == 1 {
		m := &l[l.index(string(keys[0]))]
		m.Lock()
		return m.Unlock
	}
	idx := make([]int, 0, len(keys))
	for _, k := range keys {
		idx = append(idx, l.index(string(k)))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		l[i].Lock()
	}
	return func() {
		for _, i := range idx {
			l[i].Unlock()
		}
	}
}

// maxHeads bounds the threads heads remembers; past it, it forgets them
// all and learns again.
const maxHeads = 4096

// heads remembers, for threads written since Open, the newest checkpoint
// id their stored summary names, so that a Put, which replaces the summary
// only with a newer checkpoint, need not read it inside its transaction.
//
// A thread's entry is read and set only by transactions that hold the
// thread's lock exclusively (Put and Rollback), after they commit a
// summary; DeleteThread takes that lock too, and forgets the thread's
// entry. A transaction that writes or deletes a summary without that lock
// (Fork into a new thread) forgets the thread's entry when it writes and
// again after it commits. Such transactions read the summary (or iterate
// over it) themselves, so Badger fails them when a locked Put changed it
// since they began.
//
// An entry also keeps the stored record of the newest checkpoint when the
// transaction that wrote the summary wrote that checkpoint too (a Put), so
// that Newest, under the thread's lock held shared, reads nothing.
type heads struct {
	mu sync.Mutex
	m  map[string]head
}

// head is what heads keeps of a thread.
type head struct {
	latest string
	// record is the newest checkpoint's stored record, nil when unknown;
	// it is never modified.
	record []byte
}

func (h *heads) get(threadID string) (string, bool) {
	e, ok := h.entry(threadID)
	return e.latest, ok
}

func (h *heads) entry(threadID string) (head, bool) {
	h.mu.Lock()
	e, ok := h.m[threadID]
	h.mu.Unlock()
	return e, ok
}

func (h *heads) set(threadID string, e head) {
	h.mu.Lock()
	if h.m == nil || len(h.m) >= maxHeads {
		h.m = make(map[string]head)
	}
	h.m[threadID] = e
	h.mu.Unlock()
}

func (h *heads) forget(threadID string) {
	h.mu.Lock()
	delete(h.m, threadID)
	h.mu.Unlock()
}
