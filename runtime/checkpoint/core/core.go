// Package core is the one implementation of checkpoint.Checkpointer that
// every backend shares: a backend is a Driver, the reads and writes of its
// storage, and core.New(driver) is its checkpointer.
//
// The Checkpointer owns everything the backends have in common: the record
// format of checkpoints (checkpoint.EncodeRecord) and pending writes (JSON),
// the checks of a Put (checkpoint.PreparePut) and the blobs it needs from
// before, rebuilding values from chains of append deltas, the field
// snapshots that keep those chains short (checkpoint.SnapshotAfter), history
// paging, the thread listing, fork, rollback, prune and delete. A driver
// stores records under its own keys or tables and runs the Checkpointer's
// reads and writes in its transactions; how a driver lays its records out
// is the backend's on-disk format, unchanged by this package.
//
// # Transactions
//
// Every operation is one transaction (Driver.Begin), except a Latest read
// that saves snapshots (a read-only one, then a best-effort read-write
// one). Within a transaction the Checkpointer reads first and writes last,
// so a driver can queue the writes and send them at commit: a Put and a
// PutWrites write without reading and cost a database server one round
// trip each. A transaction whose commit loses a conflict (ErrConflict) is
// run again. A Put
// requires the versions it does not write (Txn.RequireBlobs), which fails
// the whole transaction when one is missing.
//
// # Snapshots
//
// A Latest read that walked more than checkpoint.SnapshotAfter deltas for a
// field saves the field's value at that version as its snapshot, in an
// transaction that rereads the chain under the thread's shared lock; drivers end
// a chain at the snapshot when the walk reaches its version. A snapshot is
// only a faster path to a value the blobs determine, so every write that
// may change those blobs drops it: a Put drops the snapshot of each field it
// writes at or below the snapshot's version, and a Rollback or a Prune drops
// the thread's snapshots.
package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Checkpointer implements checkpoint.Checkpointer and checkpoint.HeadReader
// over a Driver, and checkpoint.Syncer by the driver's Sync when it has one.
type Checkpointer struct {
	d        Driver
	now      func() time.Time
	sync     func(ctx context.Context) error
	inMemory bool
}

var (
	_ checkpoint.Checkpointer   = (*Checkpointer)(nil)
	_ checkpoint.HeadReader     = (*Checkpointer)(nil)
	_ checkpoint.Syncer         = (*Checkpointer)(nil)
	_ checkpoint.SnapshotSaver  = (*Checkpointer)(nil)
	_ checkpoint.BatchPutter    = (*Checkpointer)(nil)
	_ checkpoint.MemoryResident = (*Checkpointer)(nil)
)

// Options configure New.
type Options struct {
	// Now is the clock of CreatedAt and UpdatedAt; nil means time.Now.
	Now func() time.Time
	// SyncEnds, when set, is called after a Put of a checkpoint that ends a
	// run or waits for input (checkpoint.Checkpoint.Stops), unless the
	// Put's context says the caller syncs (checkpoint.WithSyncByCaller),
	// and by Sync: it makes every write before it durable. A driver whose commits are
	// durable when they return leaves it nil.
	SyncEnds func(ctx context.Context) error
	// InMemory says that the driver keeps everything in the process's
	// memory (see checkpoint.MemoryResident).
	InMemory bool
}

// New returns the checkpointer of a driver.
func New(d Driver, opts Options) *Checkpointer {
	c := &Checkpointer{d: d, now: opts.Now, sync: opts.SyncEnds, inMemory: opts.InMemory}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// maxAttempts bounds how often a transaction that lost a conflict is run.
const maxAttempts = 20

// view runs fn in a read-only transaction.
func (c *Checkpointer) view(ctx context.Context, fn func(Reader) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tx, err := c.d.Begin(ctx, false)
	if err != nil {
		return err
	}
	defer tx.Discard()
	return fn(tx)
}

// update runs fn in a read-write transaction and commits it, running it
// again while it loses conflicts with concurrent transactions.
func (c *Checkpointer) update(ctx context.Context, fn func(Txn) error) error {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := c.attempt(ctx, fn)
		if !errors.Is(err, ErrConflict) || attempt == maxAttempts {
			return err
		}
	}
}

func (c *Checkpointer) attempt(ctx context.Context, fn func(Txn) error) error {
	tx, err := c.d.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Discard()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// InMemory implements checkpoint.MemoryResident.
func (c *Checkpointer) InMemory() bool { return c.inMemory }

// Sync implements checkpoint.Syncer.
func (c *Checkpointer) Sync(ctx context.Context) error {
	if c.sync == nil {
		return nil
	}
	return c.sync(ctx)
}

// Put implements checkpoint.Checkpointer in one transaction that only
// writes.
func (c *Checkpointer) Put(ctx context.Context, cp checkpoint.Checkpoint, blobs []checkpoint.Blob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := checkpoint.PreparePut(cp, blobs, c.now)
	if err != nil {
		return err
	}
	cp = p.Checkpoint
	carried, end := c.carried(ctx, cp.ThreadID)
	err = c.update(ctx, func(tx Txn) error {
		if err := tx.Lock(cp.ThreadID, false); err != nil {
			return err
		}
		if len(p.Required) > 0 {
			if err := tx.RequireBlobs(cp.ThreadID, p.Required); err != nil {
				return err
			}
		}
		if err := writePut(tx, p, blobs); err != nil {
			return err
		}
		if err := tx.PutThread(summary(cp), true); err != nil {
			return err
		}
		return putCarried(tx, carried)
	})
	end(err == nil)
	if err != nil {
		return fmt.Errorf("put %s/%s: %w", cp.ThreadID, cp.ID, err)
	}
	return c.syncEnd(ctx, cp)
}

// writePut writes a prepared checkpoint and its blobs, and discards the
// pending writes of its parent.
func writePut(tx Txn, p *checkpoint.PreparedPut, blobs []checkpoint.Blob) error {
	cp := &p.Checkpoint
	for _, b := range blobs {
		if err := tx.DropSnapshot(cp.ThreadID, b.Field, b.Version); err != nil {
			return err
		}
		if err := tx.PutBlob(cp.ThreadID, b); err != nil {
			return err
		}
	}
	if err := tx.PutCheckpoint(cp.ThreadID, cp.ID, p.Data); err != nil {
		return err
	}
	if cp.ParentID != "" {
		return tx.DeleteWrites(cp.ThreadID, cp.ParentID, nil)
	}
	return nil
}

// syncEnd makes the writes durable when cp ends a run or waits for input:
// its client is about to be told.
func (c *Checkpointer) syncEnd(ctx context.Context, cp checkpoint.Checkpoint) error {
	if c.sync == nil || !cp.Stops() || checkpoint.SyncedByCaller(ctx) {
		return nil
	}
	if err := c.sync(ctx); err != nil {
		return fmt.Errorf("put %s/%s: %w", cp.ThreadID, cp.ID, err)
	}
	return nil
}

// PutBatch implements checkpoint.BatchPutter in one transaction that only
// writes: the blobs the checkpoints need from before the batch are checked
// first, then everything is written, and the thread's summary names the
// last checkpoint.
func (c *Checkpointer) PutBatch(ctx context.Context, puts []checkpoint.PutRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(puts) == 0 {
		return nil
	}
	thread := puts[0].Checkpoint.ThreadID
	prepared := make([]*checkpoint.PreparedPut, len(puts))
	var required []checkpoint.BlobRef
	written := map[checkpoint.BlobRef]bool{}
	for i, put := range puts {
		if put.Checkpoint.ThreadID != thread {
			return fmt.Errorf("put a batch of thread %s: checkpoint %s is of thread %s", thread, put.Checkpoint.ID, put.Checkpoint.ThreadID)
		}
		p, err := checkpoint.PreparePut(put.Checkpoint, put.Blobs, c.now)
		if err != nil {
			return err
		}
		for _, r := range p.Required {
			if !written[r] && !slices.Contains(required, r) {
				required = append(required, r)
			}
		}
		for _, b := range put.Blobs {
			written[checkpoint.BlobRef{Field: b.Field, Version: b.Version}] = true
		}
		prepared[i] = p
	}
	last := prepared[len(prepared)-1].Checkpoint
	carried, end := c.carried(ctx, thread)
	err := c.update(ctx, func(tx Txn) error {
		if err := tx.Lock(thread, false); err != nil {
			return err
		}
		if len(required) > 0 {
			if err := tx.RequireBlobs(thread, required); err != nil {
				return err
			}
		}
		for i, p := range prepared {
			if err := writePut(tx, p, puts[i].Blobs); err != nil {
				return err
			}
		}
		if err := tx.PutThread(summary(last), true); err != nil {
			return err
		}
		return putCarried(tx, carried)
	})
	end(err == nil)
	if err != nil {
		return fmt.Errorf("put %d checkpoints of thread %s (%s to %s): %w", len(puts), thread, prepared[0].Checkpoint.ID, last.ID, err)
	}
	return c.syncEnd(ctx, last)
}

// summary is the thread summary naming cp as the newest checkpoint.
func summary(cp checkpoint.Checkpoint) checkpoint.ThreadInfo {
	return checkpoint.ThreadInfo{ThreadID: cp.ThreadID, GraphName: cp.GraphName, Latest: cp.ID, Step: cp.Step, UpdatedAt: cp.CreatedAt}
}

// PutWrites implements checkpoint.Checkpointer.
func (c *Checkpointer) PutWrites(ctx context.Context, threadID, checkpointID string, w checkpoint.PendingWrite) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.TaskID == "" {
		return fmt.Errorf("put writes %s/%s: empty task id", threadID, checkpointID)
	}
	carried, end := c.carried(ctx, threadID)
	err := c.update(ctx, func(tx Txn) error {
		if err := tx.PutWrite(threadID, checkpointID, w); err != nil {
			return err
		}
		return putCarried(tx, carried)
	})
	end(err == nil)
	if err != nil {
		return fmt.Errorf("put writes of task %s at checkpoint %s/%s: %w", w.TaskID, threadID, checkpointID, err)
	}
	return nil
}

// Latest implements checkpoint.Checkpointer. When it walked more than
// checkpoint.SnapshotAfter deltas for a field, it saves the field's
// snapshot (see the package documentation).
func (c *Checkpointer) Latest(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var snap *checkpoint.Snapshot
	var long []string
	err := c.view(ctx, func(r Reader) error {
		id, data, err := r.Newest(threadID)
		if err != nil {
			return err
		}
		snap, long, err = materialise(r, threadID, id, data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("latest checkpoint of thread %s: %w", threadID, err)
	}
	if len(long) > 0 {
		// A snapshot only speeds reads up: the next cold read tries again.
		_ = c.saveSnapshots(ctx, threadID, long, snap.Versions)
	}
	return snap, nil
}

// SaveSnapshots implements checkpoint.SnapshotSaver.
func (c *Checkpointer) SaveSnapshots(ctx context.Context, threadID string, versions map[string]int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fields := slices.Sorted(maps.Keys(versions))
	if err := c.saveSnapshots(ctx, threadID, fields, versions); err != nil {
		return fmt.Errorf("save snapshots of thread %s: %w", threadID, err)
	}
	return nil
}

// saveSnapshots saves the values of fields at their versions as the fields'
// snapshots, rereading their chains in the same transaction under the
// thread's shared lock, so that what it saves matches the blobs as they
// are.
func (c *Checkpointer) saveSnapshots(ctx context.Context, threadID string, fields []string, versions map[string]int64) error {
	want := make(map[string]int64, len(fields))
	for _, f := range fields {
		want[f] = versions[f]
	}
	return c.update(ctx, func(tx Txn) error {
		if err := tx.Lock(threadID, true); err != nil {
			return err
		}
		vals, _, err := values(tx, threadID, want)
		if err != nil {
			return err
		}
		for _, f := range fields {
			if err := tx.PutSnapshot(threadID, f, want[f], vals[f]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Get implements checkpoint.Checkpointer.
func (c *Checkpointer) Get(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var snap *checkpoint.Snapshot
	err := c.view(ctx, func(r Reader) error {
		data, err := r.Checkpoint(threadID, checkpointID)
		if err != nil {
			return err
		}
		snap, _, err = materialise(r, threadID, checkpointID, data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s/%s: %w", threadID, checkpointID, err)
	}
	return snap, nil
}

// Head implements checkpoint.HeadReader: the newest checkpoint and its
// pending writes, without values.
func (c *Checkpointer) Head(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var snap *checkpoint.Snapshot
	err := c.view(ctx, func(r Reader) error {
		id, data, err := r.Newest(threadID)
		if err != nil {
			return err
		}
		snap, err = head(r, threadID, id, data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("newest checkpoint of thread %s: %w", threadID, err)
	}
	return snap, nil
}

// head decodes a checkpoint and reads its pending writes.
func head(r Reader, threadID, id string, data []byte) (*checkpoint.Snapshot, error) {
	s := &checkpoint.Snapshot{}
	if err := checkpoint.DecodeRecord(threadID, id, data, &s.Checkpoint); err != nil {
		return nil, fmt.Errorf("decode checkpoint %s: %w", id, err)
	}
	writes, err := pendingWrites(r, threadID, id)
	if err != nil {
		return nil, err
	}
	s.Pending = writes
	return s, nil
}

// pendingWrites reads and decodes the pending writes saved against a
// checkpoint.
func pendingWrites(r Reader, threadID, id string) ([]checkpoint.PendingWrite, error) {
	out, err := r.Writes(threadID, id)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: pending writes: %w", id, err)
	}
	return out, nil
}

// materialise decodes a checkpoint and reads its values and pending writes;
// long lists the fields whose chains were longer than
// checkpoint.SnapshotAfter.
func materialise(r Reader, threadID, id string, data []byte) (*checkpoint.Snapshot, []string, error) {
	s, err := head(r, threadID, id, data)
	if err != nil {
		return nil, nil, err
	}
	var long []string
	if s.Values, long, err = values(r, threadID, s.Versions); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	return s, long, nil
}

// values rebuilds every field at its version; long lists the fields whose
// chains were longer than checkpoint.SnapshotAfter, sorted.
func values(r Reader, threadID string, versions map[string]int64) (map[string]json.RawMessage, []string, error) {
	out := make(map[string]json.RawMessage, len(versions))
	if len(versions) == 0 {
		return out, nil, nil
	}
	chains, err := r.Chains(threadID, versions)
	if err != nil {
		return nil, nil, fmt.Errorf("read values: %w", err)
	}
	var long []string
	for f, v := range versions {
		chain := chains[f]
		val, err := join(f, v, chain)
		if err != nil {
			return nil, nil, err
		}
		out[f] = val
		if len(chain)-1 > checkpoint.SnapshotAfter {
			long = append(long, f)
		}
	}
	slices.Sort(long)
	return out, long, nil
}

// join rebuilds field at version v from its chain, newest link first.
func join(field string, v int64, chain []Link) (json.RawMessage, error) {
	if len(chain) == 0 || chain[0].Version != v {
		return nil, fmt.Errorf("field %s: blob version %d missing", field, v)
	}
	last := chain[len(chain)-1]
	if last.Base != 0 {
		if last.Base >= last.Version {
			return nil, fmt.Errorf("field %s version %d: base %d is not older", field, last.Version, last.Base)
		}
		return nil, fmt.Errorf("field %s version %d: blob version %d missing", field, v, last.Base)
	}
	if len(chain) == 1 {
		return last.Data, nil
	}
	deltas := make([]json.RawMessage, 0, len(chain)-1)
	for i := len(chain) - 2; i >= 0; i-- {
		deltas = append(deltas, chain[i].Data)
	}
	out, err := checkpoint.AppendArrays(last.Data, deltas...)
	if err != nil {
		return nil, fmt.Errorf("field %s at version %d: %w", field, v, err)
	}
	return out, nil
}

// History implements checkpoint.Checkpointer.
func (c *Checkpointer) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []checkpoint.Checkpoint
	err := c.view(ctx, func(r Reader) error {
		out = out[:0]
		return r.Checkpoints(threadID, opts.Before, max(opts.Limit, 0), func(id string, data []byte) error {
			var cp checkpoint.Checkpoint
			if err := checkpoint.DecodeRecord(threadID, id, data, &cp); err != nil {
				return fmt.Errorf("decode checkpoint %s: %w", id, err)
			}
			out = append(out, cp)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("history of thread %s: %w", threadID, err)
	}
	return out, nil
}

// Threads implements checkpoint.Checkpointer.
func (c *Checkpointer) Threads(ctx context.Context) ([]checkpoint.ThreadInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []checkpoint.ThreadInfo
	err := c.view(ctx, func(r Reader) error {
		var err error
		out, err = r.Threads()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	slices.SortFunc(out, func(a, b checkpoint.ThreadInfo) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ThreadID, b.ThreadID)
	})
	return out, nil
}

// Fork implements checkpoint.Checkpointer in one transaction. The new thread
// gets full copies of the values at the same versions, so it shares nothing
// with the source.
func (c *Checkpointer) Fork(ctx context.Context, threadID, checkpointID, newThreadID string) (*checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if newThreadID == "" {
		return nil, fmt.Errorf("fork %s/%s: empty new thread id", threadID, checkpointID)
	}
	var forked checkpoint.Checkpoint
	err := c.update(ctx, func(tx Txn) error {
		switch _, _, err := tx.Newest(newThreadID); {
		case err == nil:
			return fmt.Errorf("thread %s already exists", newThreadID)
		case !errors.Is(err, checkpoint.ErrNotFound):
			return err
		}
		data, err := tx.Checkpoint(threadID, checkpointID)
		if err != nil {
			return err
		}
		var src checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, checkpointID, data, &src); err != nil {
			return fmt.Errorf("decode checkpoint: %w", err)
		}
		vals, _, err := values(tx, threadID, src.Versions)
		if err != nil {
			return err
		}
		forked = checkpoint.ForkOf(src, newThreadID, c.now().UTC())
		rec, err := checkpoint.EncodeRecord(forked)
		if err != nil {
			return fmt.Errorf("encode checkpoint: %w", err)
		}
		for _, f := range sortedKeys(forked.Versions) {
			v := forked.Versions[f]
			if err := tx.PutBlob(newThreadID, checkpoint.Blob{Field: f, Version: v, Data: vals[f]}); err != nil {
				return err
			}
		}
		if err := tx.PutCheckpoint(newThreadID, forked.ID, rec); err != nil {
			return err
		}
		return tx.PutThread(summary(forked), false)
	})
	if err != nil {
		return nil, fmt.Errorf("fork %s/%s into %s: %w", threadID, checkpointID, newThreadID, err)
	}
	return &forked, nil
}

// DeleteThread implements checkpoint.Checkpointer. Deleting an unknown thread
// is not an error.
func (c *Checkpointer) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := c.update(ctx, func(tx Txn) error { return tx.DeleteThread(threadID) })
	if err != nil {
		return fmt.Errorf("delete thread %s: %w", threadID, err)
	}
	return nil
}

// decoded is a checkpoint read for a rollback or a prune.
type decoded struct {
	id       string
	versions map[string]int64
}

// allCheckpoints reads and decodes every checkpoint of a thread, oldest
// first.
func allCheckpoints(r Reader, threadID string) ([]decoded, map[string]checkpoint.Checkpoint, error) {
	var out []decoded
	full := map[string]checkpoint.Checkpoint{}
	err := r.Checkpoints(threadID, "", 0, func(id string, data []byte) error {
		var cp checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, id, data, &cp); err != nil {
			return fmt.Errorf("decode checkpoint %s: %w", id, err)
		}
		full[id] = cp
		out = append(out, decoded{id: id, versions: cp.Versions})
		return nil
	})
	slices.Reverse(out)
	return out, full, err
}

// versionSet is a set of blob versions by field.
type versionSet map[string]map[int64]bool

func (s versionSet) add(versions map[string]int64) {
	for f, v := range versions {
		if s[f] == nil {
			s[f] = map[int64]bool{}
		}
		s[f][v] = true
	}
}

// Rollback implements checkpoint.Checkpointer in one transaction under the
// thread's lock: the deletes, the discarded pending writes and the thread
// summary naming checkpointID commit together, so a crash leaves the thread
// either as it was or rolled back, never half-way.
func (c *Checkpointer) Rollback(ctx context.Context, threadID, checkpointID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := c.update(ctx, func(tx Txn) error {
		if err := tx.Lock(threadID, false); err != nil {
			return err
		}
		cps, full, err := allCheckpoints(tx, threadID)
		if err != nil {
			return err
		}
		start, ok := full[checkpointID]
		if !ok {
			return checkpoint.ErrNotFound
		}
		needed := versionSet{}
		var dropped []string
		var blobs []checkpoint.BlobRef
		for _, cp := range cps {
			if cp.id <= checkpointID {
				needed.add(cp.versions)
			}
		}
		seen := versionSet{}
		for _, cp := range cps {
			if cp.id <= checkpointID {
				continue
			}
			dropped = append(dropped, cp.id)
			for _, f := range sortedKeys(cp.versions) {
				v := cp.versions[f]
				if needed[f][v] || seen[f][v] {
					continue
				}
				seen.add(map[string]int64{f: v})
				blobs = append(blobs, checkpoint.BlobRef{Field: f, Version: v})
			}
		}
		writes, err := pendingWrites(tx, threadID, checkpointID)
		if err != nil {
			return err
		}
		var discard []string
		for _, w := range writes {
			if !checkpoint.RollbackKeepsWrite(start, w) {
				discard = append(discard, w.TaskID)
			}
		}
		if len(blobs) > 0 {
			if err := tx.DeleteBlobs(threadID, blobs); err != nil {
				return err
			}
		}
		if len(dropped) > 0 {
			if err := tx.DeleteCheckpoints(threadID, dropped); err != nil {
				return err
			}
		}
		if len(discard) > 0 {
			if err := tx.DeleteWrites(threadID, checkpointID, discard); err != nil {
				return err
			}
		}
		if err := tx.DropSnapshots(threadID); err != nil {
			return err
		}
		start.CreatedAt = c.now().UTC()
		return tx.PutThread(summary(start), false)
	})
	if err != nil {
		return fmt.Errorf("rollback %s to %s: %w", threadID, checkpointID, err)
	}
	return nil
}

// Prune implements checkpoint.Checkpointer in one transaction under the
// thread's lock. A kept version whose delta chain runs through a version it
// deletes is rewritten as a full value.
func (c *Checkpointer) Prune(ctx context.Context, threadID string, keep int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if keep < 1 {
		return fmt.Errorf("prune %s: keep must be at least 1, got %d", threadID, keep)
	}
	err := c.update(ctx, func(tx Txn) error {
		if err := tx.Lock(threadID, false); err != nil {
			return err
		}
		cps, _, err := allCheckpoints(tx, threadID)
		if err != nil || len(cps) <= keep {
			return err
		}
		cut := len(cps) - keep
		needed := versionSet{}
		for _, cp := range cps[cut:] {
			needed.add(cp.versions)
		}
		stored, err := tx.Blobs(threadID)
		if err != nil {
			return err
		}
		var drop []checkpoint.BlobRef
		var rewrites []checkpoint.Blob
		slices.SortFunc(stored, func(a, b checkpoint.Blob) int {
			return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Version, b.Version))
		})
		for _, b := range stored {
			switch {
			case !needed[b.Field][b.Version]:
				drop = append(drop, checkpoint.BlobRef{Field: b.Field, Version: b.Version})
			case b.Base != 0 && !needed[b.Field][b.Base]:
				// Rebuilt one at a time: two kept versions of a field may
				// both need it.
				vals, _, err := values(tx, threadID, map[string]int64{b.Field: b.Version})
				if err != nil {
					return err
				}
				rewrites = append(rewrites, checkpoint.Blob{Field: b.Field, Version: b.Version, Data: vals[b.Field]})
			}
		}
		pruned := make([]string, cut)
		for i, cp := range cps[:cut] {
			pruned[i] = cp.id
		}
		for _, b := range rewrites {
			if err := tx.PutBlob(threadID, b); err != nil {
				return err
			}
		}
		if err := tx.DeleteCheckpoints(threadID, pruned); err != nil {
			return err
		}
		if err := tx.DropSnapshots(threadID); err != nil {
			return err
		}
		if len(drop) > 0 {
			return tx.DeleteBlobs(threadID, drop)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("prune %s: %w", threadID, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
