// Package badger stores checkpoints and long-term memory in one embedded
// Badger database: (*DB).Checkpointer implements checkpoint.Checkpointer and
// (*DB).Store implements store.Store.
//
// # Key layout
//
// Every key starts with a one-byte kind and a slash. Strings inside keys are
// written as ⟨s⟩ = uvarint(len(s)) followed by the bytes, so no thread id,
// field or namespace element can be a byte prefix of another and any byte may
// appear in them. A string that ends a key is written raw.
//
//	c/⟨thread⟩ checkpoint-id               → checkpoint record (checkpoint.EncodeRecord; ids sort
//	                                          in creation order)
//	b/⟨thread⟩⟨field⟩ version (8 bytes BE) → blob: 0x00 data (full value)
//	                                          or 0x01 uvarint(base) data (items appended to base)
//	w/⟨thread⟩⟨checkpoint-id⟩ task-id      → pending write JSON
//	t/⟨thread⟩                             → thread summary: 0x01 ⟨latest checkpoint id⟩ ⟨graph⟩
//	                                          varint(step) varint(updated, unix ns; 0 = none),
//	                                          or JSON as earlier versions wrote it
//	f/⟨thread⟩ field                       → field snapshot: uvarint(version), CRC-32 of the blob
//	                                          at that version (4 bytes BE), the full value
//	                                          compressed with S2
//	s/ [uvarint(len(e)+1) e]… 0x00 key     → store item: expiry, created, updated (8 bytes BE
//	                                          unix ns each; expiry 0 = none), flags (1 byte),
//	                                          uvarint(len(terms)) terms, value JSON
//	v/ [uvarint(len(e)+1) e]… 0x00 key     → the item's embedding (store.EncodeVector), when
//	                                          the store has an embedder
//
// Namespace elements are written with length+1 so that the 0x00 ending a
// namespace cannot be read as an element; the encoding of a namespace prefix
// is a byte prefix of the keys of exactly the namespaces it contains.
//
// # Checkpoints
//
// The checkpointer is core.Checkpointer (package checkpoint/core, which
// decides what is stored and when; see docs/storage.md) over this package's
// driver, which stores the records under the keys above. Its transactions
// are Badger transactions, run again when they lose a conflict; Badger runs
// in managed mode, with timestamps from the DB's own oracle (no goroutine
// hand-offs per transaction; see oracle), and directories move freely
// between managed and unmanaged mode. Put, Rollback and Prune lock their
// thread (one lock of a fixed set per thread), and the DB remembers the
// newest checkpoint of the threads it wrote that way, so that a Put does
// not read the thread summary it replaces (see heads). Writes check
// the free space at their first Set, so deletes go on when the disk is
// nearly full. A Put is one transaction: the checkpoint, its new blobs and
// the thread summary commit together, after checking that every version
// the checkpoint names has a blob. A field's chain is read with one reverse
// iterator over the thread's blobs: links to the next-older version (the
// common case) are a single Next, others a Seek. A chain ends at the
// field's snapshot when the walk reaches its version and the blob there has
// the CRC the snapshot recorded. A thread too large to delete in one
// transaction is deleted in batches after it.
//
// # Store
//
// Items carry the terms of their indexed text, tokenised once at Put. Search
// scans the namespace prefix, skips expired items by their binary header,
// decodes values only to apply a filter or to return a result, and ranks the
// candidates with BM25. The scan is linear in the items under the prefix (a
// few milliseconds per thousand small items); it is the right trade for
// per-user memories and a few thousand documents. For namespaces of hundreds of thousands of items an inverted index
// (term → keys, with per-term document frequencies) would be worth its write
// cost. Semantic search is meant to slot in beside BM25: an embedding stored
// with the item at Put and a vector score over the same candidate set.
//
// TTL is enforced on read with the Options.Now clock; with the wall clock the
// Badger entry also carries the expiry so compaction reclaims it.
package badger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/core"
	"github.com/graphctl/graphctl/runtime/store"
)

// TableCompression is how the tables Badger writes (memtable flushes and
// compactions) are compressed: zstd at its fastest level, which stores a
// long conversation in about a fifth less space than Badger's default,
// snappy, for a little more background CPU. Each table records its own
// compression, so tables written with another one still read.
const TableCompression = options.ZSTD

// Options configure Open.
type Options struct {
	// InMemory keeps everything in memory (Badger's in-memory mode); dir must
	// then be empty. For tests and benchmarks.
	InMemory bool
	// Logger receives Badger's own log lines; nil discards them.
	Logger *slog.Logger
	// SyncWrites fsyncs every commit (what DurabilityFsync sets).
	SyncWrites bool
	// Durability chooses when commits reach the disk; see Durability.
	Durability Durability
	// MinFree is the free space, in bytes, kept on the directory's
	// filesystem: below it writes fail with ErrDiskFull instead of crashing
	// the process. 0 means DefaultMinFree; a negative value turns the guard
	// off.
	MinFree int64
	// Now is the store's clock for TTLs and timestamps; nil means time.Now.
	Now func() time.Time
}

// Durability is when commits reach the disk.
//
// With DurabilityFsync every commit (every checkpoint, pending write and
// store item) is fsynced before it returns: nothing acknowledged is lost to
// a power cut, at the cost of one fsync per write. With DurabilityBatch (the
// default) commits are written to the OS at once and fsynced in the
// background; a checkpoint that ends a run or holds an interrupt is fsynced
// before Put returns, and (*DB).Sync makes everything before it durable, so
// what a client has been told (a finished or interrupted run) survives a
// power cut, while the steps inside a run that was cut may be lost and run
// again. A killed process loses nothing in either mode: the OS has the data.
type Durability string

// The durability modes.
const (
	DurabilityBatch Durability = "batch"
	DurabilityFsync Durability = "fsync"
)

// ParseDurability reads a durability mode; "" is DurabilityBatch.
func ParseDurability(s string) (Durability, error) {
	switch Durability(s) {
	case "", DurabilityBatch:
		return DurabilityBatch, nil
	case DurabilityFsync:
		return DurabilityFsync, nil
	}
	return "", fmt.Errorf("durability %q: use fsync (every write on disk before it returns) or batch (finished and interrupted runs on disk before they are reported)", s)
}

// MemTableSize is the size of Badger's in-memory table (its skiplist arena
// is allocated at once, on the Go heap). Badger's default, 64 MiB, makes the
// live heap so large that the garbage collector rarely runs and a process's
// allocations keep touching fresh pages: on a 2-core machine a super-step
// then took about 2 page faults (5–15 µs of system time under load) against
// 0.6 with 16 MiB. A transaction holds at most 15% of it in values stored in
// the LSM tree (those under 1 MiB; larger ones go to the value log): a
// checkpoint's values past that are written ahead of its transaction (see
// DB.writeAhead).
const MemTableSize = 16 << 20

// DB is one open Badger database backing a checkpointer and a store.
type DB struct {
	db  *bdg.DB
	orc *oracle
	// locks are the threads' locks and heads their newest checkpoints, for
	// the checkpointer's transactions.
	locks threadLocks
	heads heads
	// blobs are blob versions known to be stored (see knownBlobs).
	blobs knownBlobs
	// itemLocks are the store items' locks, and items what is known of
	// the items the store wrote (see knownItems).
	itemLocks threadLocks
	items     knownItems
	// syncEnds is set when commits are not fsynced one by one: run-ending
	// checkpoints are then synced by Put.
	syncEnds bool
	// logs flushes Badger's logs for Sync, and learns which commits may
	// have written the value log.
	logs      *logSync
	space     *space
	now       func() time.Time
	wallClock bool
	log       *slog.Logger
	// writes and snaps record which checkpoints may have pending writes and
	// which threads may have snapshots (see presence).
	writes, snaps *presence
	// commits and syncs count read-write transactions committed (or
	// attempted) and fsyncs of the logs, and written the bytes of the keys
	// and values they set or deleted, for Stats.
	commits, syncs, written atomic.Uint64
	// syncAsked numbers calls of Sync; syncMu serialises fsyncs, and
	// syncedUpTo (under syncMu) is the highest call number an fsync has
	// covered, with its error in syncErr.
	syncAsked  atomic.Uint64
	syncMu     sync.Mutex
	syncedUpTo uint64
	syncErr    error
}

// Stats counts the database's writes since it was opened.
type Stats struct {
	// Commits is the number of read-write transactions and write batches
	// committed, retries of conflicting ones included.
	Commits uint64 `json:"commits"`
	// Syncs is the number of fsyncs of Badger's logs asked for by Sync.
	Syncs uint64 `json:"syncs"`
	// Bytes is the bytes of the keys and values those commits set, and of
	// the keys they deleted: what they wrote to the logs, less Badger's
	// own framing of each entry.
	Bytes uint64 `json:"bytes"`
}

// Stats returns the database's write counters.
func (d *DB) Stats() Stats {
	return Stats{Commits: d.commits.Load(), Syncs: d.syncs.Load(), Bytes: d.written.Load()}
}

// wrote counts an entry of n bytes (key and value) set or deleted.
func (d *DB) wrote(n int) { d.written.Add(uint64(n)) }

// Open opens (creating if needed) the database in dir, or an in-memory one.
func Open(dir string, opts Options) (*DB, error) {
	var bo bdg.Options
	switch {
	case opts.InMemory && dir != "":
		return nil, fmt.Errorf("open badger: in-memory mode takes no directory, got %q", dir)
	case opts.InMemory:
		bo = bdg.DefaultOptions("").WithInMemory(true)
	case dir == "":
		return nil, errors.New("open badger: empty directory")
	default:
		bo = bdg.DefaultOptions(dir)
	}
	if _, err := ParseDurability(string(opts.Durability)); err != nil {
		return nil, fmt.Errorf("open badger: %w", err)
	}
	if opts.Durability == DurabilityFsync {
		opts.SyncWrites = true
	}
	var sp *space
	if !opts.InMemory && opts.MinFree >= 0 {
		min := opts.MinFree
		if min == 0 {
			min = DefaultMinFree
		}
		sp = &space{dir: dir, min: min}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open badger: %w", err)
		}
		if err := sp.room(); err != nil {
			return nil, fmt.Errorf("open badger: %w", err)
		}
	}
	bo = bo.WithSyncWrites(opts.SyncWrites).WithLogger(nil).WithMemTableSize(MemTableSize).
		WithCompression(TableCompression).WithZSTDCompressionLevel(1)
	if opts.Logger != nil {
		bo = bo.WithLogger(slogAdapter{opts.Logger})
	}
	// Managed mode: the DB's oracle hands out timestamps (see oracle).
	db, err := bdg.OpenManaged(bo)
	if err != nil {
		return nil, fmt.Errorf("open badger at %q: %w", dir, err)
	}
	writes, snaps, err := loadPresence(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open badger at %q: list pending writes and snapshots: %w", dir, err)
	}
	d := &DB{db: db, orc: newOracle(db), now: opts.Now, wallClock: opts.Now == nil, log: opts.Logger, syncEnds: !opts.SyncWrites && !opts.InMemory, space: sp,
		writes: writes, snaps: snaps, logs: newLogSync(db, dir)}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d, nil
}

// Close closes the database.
func (d *DB) Close() error {
	d.syncMu.Lock()
	d.logs.close()
	d.syncMu.Unlock()
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("close badger: %w", err)
	}
	return nil
}

// Sync makes every commit before it durable (an fsync of Badger's memtable
// logs, and of its value log when a commit may have written it; see
// logSync). It is cheap when nothing is waiting. Concurrent calls share
// fsyncs (group commit): a call returns after an fsync that started after
// the call did.
func (d *DB) Sync() error {
	if !d.syncEnds {
		return nil
	}
	ticket := d.syncAsked.Add(1)
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	if d.syncedUpTo >= ticket {
		// An fsync that started after this call covered it.
		return d.syncErr
	}
	upTo := d.syncAsked.Load()
	d.syncs.Add(1)
	err := d.logs.sync()
	if err != nil {
		err = fmt.Errorf("badger sync: %w", err)
	}
	d.syncedUpTo, d.syncErr = upTo, err
	return err
}

// Checkpointer returns the checkpointer backed by d.
func (d *DB) Checkpointer() checkpoint.Checkpointer {
	return core.New(&driver{d: d}, core.Options{Now: d.now, SyncEnds: func(context.Context) error { return d.Sync() }})
}

// Store returns the long-term memory store backed by d.
func (d *DB) Store() store.Store { return &Store{d: d} }

// StoreWith returns the store backed by d that embeds the items it puts with
// e and ranks text queries by cosine similarity (see store.RankVectors).
func (d *DB) StoreWith(e store.Embedder) store.Store { return &Store{d: d, emb: e} }

// Size reports the bytes of the LSM tree and the value log, as Badger counts
// them (on disk; updated periodically by Badger).
func (d *DB) Size() (lsm, vlog int64) { return d.db.Size() }

// ThreadBytes sums the key and value sizes of everything stored for a thread:
// checkpoints, blobs, pending writes and its summary.
func (d *DB) ThreadBytes(ctx context.Context, threadID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var total int64
	err := d.view(func(txn *bdg.Txn) error {
		for _, kind := range threadKinds {
			it := txn.NewIterator(bdg.IteratorOptions{Prefix: threadPrefix(kind, threadID)})
			for it.Rewind(); it.Valid(); it.Next() {
				total += it.Item().KeySize() + it.Item().ValueSize()
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of thread %s: %w", threadID, err)
	}
	return total, nil
}

// CollectGarbage runs Badger's value-log garbage collection until it finds
// nothing to rewrite. Call it periodically on long-lived databases.
func (d *DB) CollectGarbage(discardRatio float64) error {
	// The values it moves are rewritten to the value log.
	defer d.logs.wroteValueLog()
	for {
		err := d.db.RunValueLogGC(discardRatio)
		switch {
		case errors.Is(err, bdg.ErrNoRewrite), errors.Is(err, bdg.ErrGCInMemoryMode):
			return nil
		case err != nil:
			return fmt.Errorf("badger value-log gc: %w", err)
		}
	}
}

// Compact rewrites the LSM tree into as few levels as it can (Badger's
// Flatten), dropping what deletes and overwrites left behind, then collects
// the value log's garbage: the space the live data takes, as a long-lived
// database's background compactions would bring it to.
func (d *DB) Compact() error {
	if err := d.db.Flatten(1); err != nil {
		return fmt.Errorf("badger flatten: %w", err)
	}
	return d.CollectGarbage(0.5)
}

// update runs fn in a read-write transaction, retrying on conflicts with
// concurrent writers of the same keys.
func (d *DB) update(ctx context.Context, fn func(txn *bdg.Txn) error) error {
	if err := d.space.room(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.commits.Add(1)
		err := d.updateOnce(fn)
		if !errors.Is(err, bdg.ErrConflict) || attempt == 20 {
			return err
		}
	}
}

// begin starts a transaction at the oracle's read timestamp; the caller
// ends it with d.discard.
func (d *DB) begin(write bool) *bdg.Txn {
	return d.db.NewTransactionAt(d.orc.begin(), write)
}

// commit commits a read-write transaction from begin at the oracle's next
// commit timestamp; the caller still discards it.
func (d *DB) commit(txn *bdg.Txn) error {
	ts := d.orc.commitTs()
	err := txn.CommitAt(ts, nil)
	d.orc.done(ts)
	return err
}

// discard ends a transaction from begin.
func (d *DB) discard(txn *bdg.Txn) {
	txn.Discard()
	d.orc.end(txn.ReadTs())
}

// view runs fn in a read-only transaction.
func (d *DB) view(fn func(txn *bdg.Txn) error) error {
	txn := d.begin(false)
	defer d.discard(txn)
	return fn(txn)
}

// updateOnce runs fn in a read-write transaction and commits it.
func (d *DB) updateOnce(fn func(txn *bdg.Txn) error) error {
	txn := d.begin(true)
	defer d.discard(txn)
	if err := fn(txn); err != nil {
		return err
	}
	return d.commit(txn)
}

// deleteKeys deletes keys in batches that need not fit one transaction.
func (d *DB) deleteKeys(keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	return d.batch(func(wb *bdg.WriteBatch) error {
		for _, k := range keys {
			d.wrote(len(k))
			if err := wb.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// batch commits what fill writes in a write batch at the oracle's next
// commit timestamp (a batch is not bound by one transaction's size).
func (d *DB) batch(fill func(wb *bdg.WriteBatch) error) error {
	d.commits.Add(1)
	ts := d.orc.commitTs()
	defer d.orc.done(ts)
	wb := d.db.NewWriteBatchAt(ts)
	defer wb.Cancel()
	if err := fill(wb); err != nil {
		return err
	}
	return wb.Flush()
}

// writeAhead writes a checkpoint's blob in a commit of its own, before the
// transaction that writes the checkpoint: a transaction holds a few MiB at
// most (a fraction of MemTableSize), a checkpoint's new values need not fit
// it. A blob is read only through a checkpoint that names its version, so
// it stays unseen until that checkpoint commits; if the checkpoint never
// does, the blob is left over, and the retried step writes the same key.
func (d *DB) writeAhead(key, val []byte) error {
	if err := d.space.room(); err != nil {
		return err
	}
	if d.logs.inValueLog(len(val)) {
		defer d.logs.wroteValueLog()
	}
	d.wrote(len(key) + len(val))
	return d.batch(func(wb *bdg.WriteBatch) error { return wb.Set(key, val) })
}

// Key kinds.
const (
	kindCheckpoint = 'c'
	kindBlob       = 'b'
	kindWrite      = 'w'
	kindThread     = 't'
	kindItem       = 's'
	kindSnapshot   = 'f'
	kindVector     = 'v'
)

var threadKinds = []byte{kindCheckpoint, kindBlob, kindWrite, kindThread, kindSnapshot}

func appendPart(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// readPart decodes one ⟨s⟩ from b and returns it with the rest of b.
func readPart(b []byte) (string, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return "", nil, fmt.Errorf("corrupt key part in %q", b)
	}
	return string(b[w : w+int(n)]), b[w+int(n):], nil
}

func threadPrefix(kind byte, threadID string) []byte {
	return appendPart([]byte{kind, '/'}, threadID)
}

func checkpointKey(threadID, id string) []byte {
	return append(threadPrefix(kindCheckpoint, threadID), id...)
}

func blobFieldPrefix(threadID, field string) []byte {
	return appendPart(threadPrefix(kindBlob, threadID), field)
}

func blobKey(threadID, field string, version int64) []byte {
	return binary.BigEndian.AppendUint64(blobFieldPrefix(threadID, field), uint64(version))
}

func snapshotKey(threadID, field string) []byte {
	return appendPart(threadPrefix(kindSnapshot, threadID), field)
}

func writePrefix(threadID, checkpointID string) []byte {
	return appendPart(threadPrefix(kindWrite, threadID), checkpointID)
}

// slogAdapter routes Badger's printf-style logging to slog.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Errorf(f string, v ...any) { a.l.Error(msg(f, v)) }
func (a slogAdapter) Warningf(f string, v ...any) {
	a.l.Warn(msg(f, v))
}
func (a slogAdapter) Infof(f string, v ...any)  { a.l.Info(msg(f, v)) }
func (a slogAdapter) Debugf(f string, v ...any) { a.l.Debug(msg(f, v)) }

func msg(f string, v []any) string {
	return "badger: " + strings.TrimSpace(fmt.Sprintf(f, v...))
}
