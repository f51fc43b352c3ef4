package core

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Driver is a backend's storage: transactions over the records of threads.
// A driver stores what it is given and reads it back; what to store, when,
// and what it means is the Checkpointer's business.
type Driver interface {
	// Begin starts a transaction: a consistent, read-only view when write
	// is false, else a read-write transaction whose writes commit together
	// or not at all. The Checkpointer ends every transaction it begins with
	// Discard, after Commit when it means to keep it. It calls only Reader
	// methods on a read-only transaction.
	//
	// Within a read-write transaction the Checkpointer does every read
	// before its first write, so a driver may queue the writes and send
	// them at Commit (a transaction that only writes, as a Put and a
	// PutWrites are, is then one round trip to a database server); the
	// error of a queued write is then Commit's. A Commit that fails with
	// ErrConflict, because a concurrent transaction changed what this one
	// read, is run again.
	Begin(ctx context.Context, write bool) (Txn, error)
}

// ErrConflict is wrapped by the error of a Commit that lost to a
// concurrent transaction and may succeed when run again.
var ErrConflict = errors.New("transaction conflict")

// Reader is the read side of a transaction.
type Reader interface {
	// Checkpoint returns a checkpoint's record, or checkpoint.ErrNotFound.
	Checkpoint(threadID, id string) ([]byte, error)
	// Newest returns the thread's newest checkpoint: the one its summary
	// names, or the highest id when the summary names none that exists; or
	// checkpoint.ErrNotFound.
	Newest(threadID string) (id string, record []byte, err error)
	// Checkpoints calls fn for the thread's checkpoints with ids below
	// before (all when before is ""), newest first, at most limit of them
	// (all when limit is 0), until fn returns an error. record may be
	// reused after fn returns.
	Checkpoints(threadID, before string, limit int, fn func(id string, record []byte) error) error
	// Writes returns the pending writes saved against a checkpoint, ordered
	// by task id. Drivers that store them as bytes use EncodeWrite and
	// DecodeWrite.
	Writes(threadID, checkpointID string) ([]checkpoint.PendingWrite, error)
	// Chains returns, for every field of versions, the chain of blobs that
	// builds its value at that version, newest first: the blob at the
	// version, then the blob at each Base, down to a full value (Base 0).
	// Where the walk reaches the version of the field's snapshot, the
	// snapshot ends the chain as a full value. A missing blob ends a chain
	// early; the Checkpointer reports it.
	Chains(threadID string, versions map[string]int64) (map[string][]Link, error)
	// Blobs lists the versions of every blob the thread has, with their
	// bases, in any order.
	Blobs(threadID string) ([]checkpoint.Blob, error)
	// Thread returns the thread's summary, or checkpoint.ErrNotFound.
	Thread(threadID string) (checkpoint.ThreadInfo, error)
	// Threads returns every thread's summary, in any order.
	Threads() ([]checkpoint.ThreadInfo, error)
	// Children returns the ids of the threads with a summary whose id
	// starts with checkpoint.ChildPrefix(threadID) — the thread's subgraph
	// threads, at any depth — in any order, read by key range or index
	// rather than by listing every thread.
	Children(threadID string) ([]string, error)
}

// Txn is a transaction.
type Txn interface {
	Reader
	// Commit makes the transaction's writes durable, as the driver's
	// storage does.
	Commit() error
	// Discard ends the transaction; after Commit it only releases what the
	// transaction holds.
	Discard()
	// Lock locks the thread until the transaction ends, against every other
	// transaction that locks it (shared false) or against those that lock it
	// exclusively (shared true). Every Put, Rollback and Prune locks its
	// thread exclusively and a snapshot save locks it shared. Drivers whose
	// transactions fail on conflicting reads and writes, or run one at a
	// time, need not do anything.
	Lock(threadID string, shared bool) error
	// RequireBlobs fails the transaction unless every blob named exists.
	RequireBlobs(threadID string, refs []checkpoint.BlobRef) error
	// PutBlob stores a blob, replacing any of the same field and version.
	// Data, not the Blob's Field, is what is stored.
	PutBlob(threadID string, b checkpoint.Blob) error
	// DeleteBlobs deletes blobs.
	DeleteBlobs(threadID string, refs []checkpoint.BlobRef) error
	// PutCheckpoint stores a checkpoint's record; the record is not
	// modified afterwards, so the driver may keep it.
	PutCheckpoint(threadID, id string, record []byte) error
	// DeleteCheckpoints deletes checkpoints and the pending writes saved
	// against them.
	DeleteCheckpoints(threadID string, ids []string) error
	// PutWrite stores a pending write against a checkpoint, replacing the
	// one of the same task; the transaction fails with
	// checkpoint.ErrNotFound when the checkpoint does not exist.
	PutWrite(threadID, checkpointID string, w checkpoint.PendingWrite) error
	// DeleteWrites deletes the pending writes saved against a checkpoint by
	// the tasks named, or all of them when taskIDs is nil.
	DeleteWrites(threadID, checkpointID string, taskIDs []string) error
	// PutThread stores the thread's summary; when ifNewer, only if the
	// summary stored (if any) names a checkpoint id not above info.Latest.
	PutThread(info checkpoint.ThreadInfo, ifNewer bool) error
	// PutSnapshot stores a field's value at a version as its snapshot,
	// replacing the field's previous one.
	PutSnapshot(threadID, field string, version int64, value []byte) error
	// DropSnapshot deletes the field's snapshot if its version is at least
	// from.
	DropSnapshot(threadID, field string, from int64) error
	// DropSnapshots deletes every snapshot of the thread.
	DropSnapshots(threadID string) error
	// DeleteThread deletes everything stored for the thread.
	DeleteThread(threadID string) error
}

// Link is one blob of a chain: a full value (Base 0) or items appended to
// the value at Base.
type Link struct {
	Version int64
	Base    int64
	Data    []byte
}

// WalkChain builds a chain for a driver that reads blobs one at a time: at
// returns the link stored at a version (with a snapshot's value as a full
// link where it applies) and whether there is one.
func WalkChain(v int64, at func(v int64) (Link, bool, error)) ([]Link, error) {
	var out []Link
	for {
		l, ok, err := at(v)
		if err != nil || !ok {
			return out, err
		}
		out = append(out, l)
		if l.Base == 0 || l.Base >= l.Version {
			return out, nil
		}
		v = l.Base
	}
}

// EncodeWrite encodes a pending write for storage: as JSON, the record
// every backend stores.
func EncodeWrite(w checkpoint.PendingWrite) ([]byte, error) { return json.Marshal(w) }

// DecodeWrite decodes a stored pending write.
func DecodeWrite(record []byte) (checkpoint.PendingWrite, error) {
	var w checkpoint.PendingWrite
	err := json.Unmarshal(record, &w)
	return w, err
}
