package badger

import (
	"slices"
	"sync"
)

// maxKnownThreads bounds the threads knownBlobs remembers, and
// maxKnownVersions the versions of one field; past the first it forgets
// them all and learns again, past the second the oldest version.
const (
	maxKnownThreads  = 4096
	maxKnownVersions = 4
)

// knownBlobs remembers, for threads this DB wrote under their lock, blob
// versions that are stored: those their Puts wrote and those their Puts
// found when they required them. A Put requires the current versions of
// the fields it does not rewrite, which the thread's previous Put wrote, so
// it need not read them (a point read that often misses the memtables and
// walks the LSM tree's levels).
//
// Only a transaction that holds the thread's lock exclusively reads a
// thread's entry or adds to it, and it adds once it has committed, before
// it lets the lock go. Every transaction that deletes blobs holds that
// lock too (Rollback and Prune take it, DeleteThread takes it itself) and
// forgets the thread's entry after it commits, before it lets the lock
// go; so no blob an entry names is deleted while the lock is held by a Put
// that trusts the entry. A transaction that writes a thread's blobs
// without its lock (Fork into a new thread) forgets the entry when it
// writes and again after it commits.
type knownBlobs struct {
	mu sync.Mutex
	m  map[string]map[string][]int64
}

// has reports whether the thread's blob of field at version v is known to
// be stored.
func (k *knownBlobs) has(threadID, field string, v int64) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Contains(k.m[threadID][field], v)
}

// add records that the blobs are stored.
func (k *knownBlobs) add(threadID string, refs []knownBlob) {
	if len(refs) == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	fields := k.m[threadID]
	if fields == nil {
		if k.m == nil || len(k.m) >= maxKnownThreads {
			k.m = make(map[string]map[string][]int64)
		}
		fields = make(map[string][]int64, len(refs))
		k.m[threadID] = fields
	}
	for _, r := range refs {
		vs := fields[r.field]
		if slices.Contains(vs, r.version) {
			continue
		}
		if len(vs) >= maxKnownVersions {
			vs = append(vs[:0], vs[1:]...)
		}
		fields[r.field] = append(vs, r.version)
	}
}

// forget forgets what is known of the thread's blobs.
func (k *knownBlobs) forget(threadID string) {
	k.mu.Lock()
	delete(k.m, threadID)
	k.mu.Unlock()
}

// knownBlob is a blob a transaction wrote or found.
type knownBlob struct {
	field   string
	version int64
}
