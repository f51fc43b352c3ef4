package checkpoint

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
