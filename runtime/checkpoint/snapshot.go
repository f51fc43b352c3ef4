package checkpoint

import "context"

// SnapshotAfter bounds the delta chains a read of a thread's newest state
// walks. A list field that only grows is stored as a chain of append deltas
// on a full value; when a Latest read had to walk more than SnapshotAfter
// deltas for a field, the backend saves the field's value at that version in
// full, as the field's snapshot, and later reads of it and of versions built
// on it stop there. A thread keeps one snapshot per field, replaced as the
// field grows, so snapshots add at most one copy of the current state to
// what a thread stores, however long it gets; and with the engine's state
// cache a growing conversation is read cold only after a restart or when it
// has not run for a while, so snapshots are written rarely.
//
// A snapshot is only a faster path to a value the blobs already determine:
// backends drop a thread's snapshots when a rollback, a prune or a delete
// changes which blobs exist, and a field's snapshot when a put overwrites a
// version it may depend on.
const SnapshotAfter = 32

// SnapshotEvery is how many append deltas a writer that keeps a thread's
// state in memory (the engine, with its state cache) lets a field gather
// before it asks for the field's snapshot (SnapshotSaver): such a thread is
// rarely read cold, so its chains would otherwise grow without bound and the
// first cold read — after a restart, or once the thread left the cache —
// would walk all of them. Saving a snapshot costs a read of the chain since
// the last one and a write of the full value, so the engine also waits for
// a number of deltas proportional to the list's length (a quarter of its
// items), which keeps the cost per append constant: a cold read then walks
// at most SnapshotEvery deltas, or a quarter as many as the list it
// decodes has items, plus SnapshotAfter.
const SnapshotEvery = 256

// SnapshotSaver is implemented by checkpointers that keep field snapshots.
type SnapshotSaver interface {
	// SaveSnapshots saves the values of the thread's fields at the
	// versions given as their snapshots, reading them from the blobs.
	SaveSnapshots(ctx context.Context, threadID string, versions map[string]int64) error
}
