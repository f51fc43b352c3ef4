package badger

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Checkpointer is the Badger checkpoint.Checkpointer; get one from
// (*DB).Checkpointer.
type Checkpointer struct{ d *DB }

var (
	_ checkpoint.Checkpointer = (*Checkpointer)(nil)
	_ checkpoint.HeadReader   = (*Checkpointer)(nil)
)

const (
	blobFull  byte = 0
	blobDelta byte = 1
)

func encodeBlob(b checkpoint.Blob) []byte {
	if b.Base == 0 {
		return append([]byte{blobFull}, b.Data...)
	}
	out := binary.AppendUvarint([]byte{blobDelta}, uint64(b.Base))
	return append(out, b.Data...)
}

// decodeBlob returns the base (0 for a full value) and the data of a stored
// blob; data aliases val.
func decodeBlob(val []byte) (base int64, data []byte, err error) {
	if len(val) == 0 {
		return 0, nil, errors.New("empty blob")
	}
	switch val[0] {
	case blobFull:
		return 0, val[1:], nil
	case blobDelta:
		b, n := binary.Uvarint(val[1:])
		if n <= 0 {
			return 0, nil, errors.New("corrupt delta base")
		}
		return int64(b), val[1+n:], nil
	}
	return 0, nil, fmt.Errorf("unknown blob kind %d", val[0])
}

func exists(txn *bdg.Txn, key []byte) (bool, error) {
	_, err := txn.Get(key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, bdg.ErrKeyNotFound):
		return false, nil
	}
	return false, err
}

// Put implements checkpoint.Checkpointer in one transaction.
func (c *Checkpointer) Put(ctx context.Context, cp checkpoint.Checkpoint, blobs []checkpoint.Blob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := checkpoint.PreparePut(cp, blobs, c.d.now)
	if err != nil {
		return err
	}
	cp, data := p.Checkpoint, p.Data
	err = c.d.update(ctx, func(txn *bdg.Txn) error {
		for _, r := range p.Required {
			ok, err := exists(txn, blobKey(cp.ThreadID, r.Field, r.Version))
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("field %s version %d has no blob", r.Field, r.Version)
			}
		}
		for _, b := range blobs {
			key := blobKey(cp.ThreadID, b.Field, b.Version)
			overwrite, err := exists(txn, key)
			if err != nil {
				return err
			}
			if overwrite {
				// The field's snapshot may have been built on the old blob.
				if err := txn.Delete(snapshotKey(cp.ThreadID, b.Field)); err != nil {
					return err
				}
			}
			if err := txn.Set(key, encodeBlob(b)); err != nil {
				return err
			}
		}
		if err := txn.Set(checkpointKey(cp.ThreadID, cp.ID), data); err != nil {
			return err
		}
		if cp.ParentID != "" {
			if err := deletePrefix(txn, writePrefix(cp.ThreadID, cp.ParentID)); err != nil {
				return err
			}
		}
		return c.touchThread(txn, cp)
	})
	if err != nil {
		return fmt.Errorf("put %s/%s: %w", cp.ThreadID, cp.ID, err)
	}
	if len(cp.Next) == 0 || len(cp.Interrupts) > 0 {
		// The run ends here (or waits): its client is about to be told.
		if err := c.d.Sync(); err != nil {
			return fmt.Errorf("put %s/%s: %w", cp.ThreadID, cp.ID, err)
		}
	}
	return nil
}

// Sync implements checkpoint.Syncer: every write before it is durable.
func (c *Checkpointer) Sync(ctx context.Context) error { return c.d.Sync() }

// touchThread updates the thread summary when cp is its newest checkpoint.
func (c *Checkpointer) touchThread(txn *bdg.Txn, cp checkpoint.Checkpoint) error {
	key := threadPrefix(kindThread, cp.ThreadID)
	item, err := txn.Get(key)
	switch {
	case errors.Is(err, bdg.ErrKeyNotFound):
	case err != nil:
		return err
	default:
		var info checkpoint.ThreadInfo
		if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &info) }); err != nil {
			return fmt.Errorf("thread summary: %w", err)
		}
		if info.Latest > cp.ID {
			return nil
		}
	}
	data, err := json.Marshal(checkpoint.ThreadInfo{ThreadID: cp.ThreadID, GraphName: cp.GraphName, Latest: cp.ID, Step: cp.Step, UpdatedAt: cp.CreatedAt})
	if err != nil {
		return err
	}
	return txn.Set(key, data)
}

// PutWrites implements checkpoint.Checkpointer.
func (c *Checkpointer) PutWrites(ctx context.Context, threadID, checkpointID string, w checkpoint.PendingWrite) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.TaskID == "" {
		return fmt.Errorf("put writes %s/%s: empty task id", threadID, checkpointID)
	}
	data, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("put writes of task %s at %s/%s: encode: %w", w.TaskID, threadID, checkpointID, err)
	}
	err = c.d.update(ctx, func(txn *bdg.Txn) error {
		ok, err := exists(txn, checkpointKey(threadID, checkpointID))
		if err != nil {
			return err
		}
		if !ok {
			return checkpoint.ErrNotFound
		}
		return txn.Set(append(writePrefix(threadID, checkpointID), w.TaskID...), data)
	})
	if err != nil {
		return fmt.Errorf("put writes of task %s at checkpoint %s/%s: %w", w.TaskID, threadID, checkpointID, err)
	}
	return nil
}

// Latest implements checkpoint.Checkpointer.
func (c *Checkpointer) Latest(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var snap *checkpoint.Snapshot
	var long []string
	err := c.d.db.View(func(txn *bdg.Txn) error {
		id, data, err := latestCheckpoint(txn, threadID)
		if err != nil {
			return err
		}
		snap, long, err = snapshot(txn, threadID, id, data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("latest checkpoint of thread %s: %w", threadID, err)
	}
	if len(long) > 0 {
		c.saveSnapshots(threadID, long, snap.Versions)
	}
	return snap, nil
}

// saveSnapshots saves the values of fields at their versions as the fields'
// snapshots, rereading their chains in the same transaction: if a concurrent
// rollback or overwrite changes a blob read, the commit fails and nothing is
// saved. A snapshot only speeds reads up, so failures are not errors.
func (c *Checkpointer) saveSnapshots(threadID string, fields []string, versions map[string]int64) {
	if c.d.space.room() != nil {
		return
	}
	err := c.d.db.Update(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.IteratorOptions{Prefix: threadPrefix(kindBlob, threadID), Reverse: true})
		defer it.Close()
		for _, f := range fields {
			v := versions[f]
			val, _, err := fieldValue(txn, it, threadID, f, v)
			if err != nil {
				return err
			}
			key := blobKey(threadID, f, v)
			it.Seek(key)
			if !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
				return fmt.Errorf("field %s: blob version %d missing", f, v)
			}
			var sum uint32
			if err := it.Item().Value(func(b []byte) error { sum = crc32.ChecksumIEEE(b); return nil }); err != nil {
				return err
			}
			out := binary.AppendUvarint(nil, uint64(v))
			out = binary.BigEndian.AppendUint32(out, sum)
			if err := txn.Set(snapshotKey(threadID, f), append(out, s2.EncodeBetter(nil, val)...)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		c.d.log.Debug("field snapshot not saved", "thread", threadID, "fields", fields, "error", err)
	}
}

// fieldSnapshot is a field's saved value at one version.
type fieldSnapshot struct {
	version int64
	sum     uint32
	data    []byte
}

// readSnapshot returns the field's snapshot, if it has a readable one.
func readSnapshot(txn *bdg.Txn, threadID, field string) (*fieldSnapshot, error) {
	item, err := txn.Get(snapshotKey(threadID, field))
	switch {
	case errors.Is(err, bdg.ErrKeyNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	val, err := item.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	v, n := binary.Uvarint(val)
	if n <= 0 || len(val) < n+4 {
		return nil, nil // unreadable: ignored, and replaced by the next save
	}
	data, err := s2.Decode(nil, val[n+4:])
	if err != nil {
		return nil, nil // likewise
	}
	return &fieldSnapshot{version: int64(v), sum: binary.BigEndian.Uint32(val[n:]), data: data}, nil
}

// Get implements checkpoint.Checkpointer.
func (c *Checkpointer) Get(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var snap *checkpoint.Snapshot
	err := c.d.db.View(func(txn *bdg.Txn) error {
		item, err := txn.Get(checkpointKey(threadID, checkpointID))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return checkpoint.ErrNotFound
		}
		if err != nil {
			return err
		}
		data, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		snap, _, err = snapshot(txn, threadID, checkpointID, data)
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
	err := c.d.db.View(func(txn *bdg.Txn) error {
		id, data, err := latestCheckpoint(txn, threadID)
		if err != nil {
			return err
		}
		snap, err = head(txn, threadID, id, data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("newest checkpoint of thread %s: %w", threadID, err)
	}
	return snap, nil
}

// snapshot decodes a checkpoint and materialises its values and pending
// writes; long lists the fields whose chains were longer than
// checkpoint.SnapshotAfter.
func snapshot(txn *bdg.Txn, threadID, id string, data []byte) (s *checkpoint.Snapshot, long []string, err error) {
	s, err = head(txn, threadID, id, data)
	if err != nil {
		return nil, nil, err
	}
	if s.Values, long, err = values(txn, threadID, s.Versions); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", s.ID, err)
	}
	return s, long, nil
}

// head decodes a checkpoint and reads its pending writes.
func head(txn *bdg.Txn, threadID, id string, data []byte) (*checkpoint.Snapshot, error) {
	s := &checkpoint.Snapshot{}
	if err := checkpoint.DecodeRecord(threadID, id, data, &s.Checkpoint); err != nil {
		return nil, fmt.Errorf("decode checkpoint: %w", err)
	}
	prefix := writePrefix(threadID, s.ID)
	it := txn.NewIterator(bdg.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 16})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		var w checkpoint.PendingWrite
		if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &w) }); err != nil {
			return nil, fmt.Errorf("checkpoint %s: pending write %q: %w", s.ID, it.Item().Key()[len(prefix):], err)
		}
		s.Pending = append(s.Pending, w)
	}
	return s, nil
}

// values materialises every field at its version with one reverse iterator
// over the thread's blobs; long lists the fields whose chains were longer
// than checkpoint.SnapshotAfter.
func values(txn *bdg.Txn, threadID string, versions map[string]int64) (map[string]json.RawMessage, []string, error) {
	out := make(map[string]json.RawMessage, len(versions))
	if len(versions) == 0 {
		return out, nil, nil
	}
	it := txn.NewIterator(bdg.IteratorOptions{Prefix: threadPrefix(kindBlob, threadID), Reverse: true})
	defer it.Close()
	fields := make([]string, 0, len(versions))
	for f := range versions {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	var long []string
	for _, f := range fields {
		v, walked, err := fieldValue(txn, it, threadID, f, versions[f])
		if err != nil {
			return nil, nil, err
		}
		out[f] = v
		if walked > checkpoint.SnapshotAfter {
			long = append(long, f)
		}
	}
	return out, long, nil
}

// fieldValue rebuilds field at version v from it, a reverse iterator over the
// thread's blobs: it walks Base links to the nearest full blob, or to the
// field's snapshot, stepping with Next when the base is the adjacent older key
// and seeking otherwise. It reports how many deltas it walked.
func fieldValue(txn *bdg.Txn, it *bdg.Iterator, threadID, field string, v int64) (json.RawMessage, int, error) {
	prefix := blobFieldPrefix(threadID, field)
	key := binary.BigEndian.AppendUint64(slices.Clone(prefix), uint64(v))
	it.Seek(key)
	var deltas []json.RawMessage
	var snap *fieldSnapshot
	for {
		if !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
			return nil, 0, fmt.Errorf("field %s: blob version %d missing", field, v)
		}
		val, err := it.Item().ValueCopy(nil)
		if err != nil {
			return nil, 0, fmt.Errorf("field %s version %d: %w", field, v, err)
		}
		base, data, err := decodeBlob(val)
		if err != nil {
			return nil, 0, fmt.Errorf("field %s version %d: %w", field, v, err)
		}
		if base != 0 && len(deltas) == 0 {
			// A chain: the field's snapshot may shorten it.
			if snap, err = readSnapshot(txn, threadID, field); err != nil {
				return nil, 0, fmt.Errorf("field %s snapshot: %w", field, err)
			}
		}
		if base != 0 && snap != nil && snap.version == v && snap.sum == crc32.ChecksumIEEE(val) {
			base, data = 0, snap.data
		}
		if base == 0 {
			if len(deltas) == 0 {
				return data, 0, nil
			}
			slices.Reverse(deltas)
			out, err := checkpoint.AppendArrays(data, deltas...)
			if err != nil {
				return nil, 0, fmt.Errorf("field %s at version %d: %w", field, v, err)
			}
			return out, len(deltas), nil
		}
		if base >= v {
			return nil, 0, fmt.Errorf("field %s version %d: base %d is not older", field, v, base)
		}
		deltas = append(deltas, data)
		v = base
		binary.BigEndian.PutUint64(key[len(prefix):], uint64(v))
		it.Next()
		if !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
			it.Seek(key)
		}
	}
}

// History implements checkpoint.Checkpointer.
func (c *Checkpointer) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []checkpoint.Checkpoint
	err := c.d.db.View(func(txn *bdg.Txn) error {
		prefix := threadPrefix(kindCheckpoint, threadID)
		it := txn.NewIterator(bdg.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: true, PrefetchSize: 32})
		defer it.Close()
		start := append(slices.Clone(prefix), 0xFF)
		if opts.Before != "" {
			start = checkpointKey(threadID, opts.Before)
		}
		it.Seek(start)
		if opts.Before != "" && it.Valid() && bytes.Equal(it.Item().Key(), start) {
			it.Next()
		}
		for ; it.Valid(); it.Next() {
			if opts.Limit > 0 && len(out) == opts.Limit {
				break
			}
			var cp checkpoint.Checkpoint
			id := string(it.Item().Key()[len(prefix):])
			if err := it.Item().Value(func(v []byte) error { return checkpoint.DecodeRecord(threadID, id, v, &cp) }); err != nil {
				return fmt.Errorf("decode checkpoint %s: %w", id, err)
			}
			out = append(out, cp)
		}
		return nil
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
	err := c.d.db.View(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.IteratorOptions{Prefix: []byte{kindThread, '/'}, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var info checkpoint.ThreadInfo
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &info) }); err != nil {
				return fmt.Errorf("decode thread summary %q: %w", it.Item().Key(), err)
			}
			out = append(out, info)
		}
		return nil
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
// gets full copies of the values at the same versions.
func (c *Checkpointer) Fork(ctx context.Context, threadID, checkpointID, newThreadID string) (*checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if newThreadID == "" {
		return nil, fmt.Errorf("fork %s/%s: empty new thread id", threadID, checkpointID)
	}
	var forked checkpoint.Checkpoint
	err := c.d.update(ctx, func(txn *bdg.Txn) error {
		taken, err := exists(txn, threadPrefix(kindThread, newThreadID))
		if err != nil {
			return err
		}
		if taken {
			return fmt.Errorf("thread %s already exists", newThreadID)
		}
		item, err := txn.Get(checkpointKey(threadID, checkpointID))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return checkpoint.ErrNotFound
		}
		if err != nil {
			return err
		}
		data, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		var src checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, checkpointID, data, &src); err != nil {
			return fmt.Errorf("decode checkpoint: %w", err)
		}
		vals, _, err := values(txn, threadID, src.Versions)
		if err != nil {
			return err
		}
		forked = checkpoint.ForkOf(src, newThreadID, c.d.now().UTC())
		for f, v := range forked.Versions {
			if err := txn.Set(blobKey(newThreadID, f, v), encodeBlob(checkpoint.Blob{Field: f, Version: v, Data: vals[f]})); err != nil {
				return err
			}
		}
		out, err := checkpoint.EncodeRecord(forked)
		if err != nil {
			return err
		}
		if err := txn.Set(checkpointKey(newThreadID, forked.ID), out); err != nil {
			return err
		}
		return c.touchThread(txn, forked)
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
	var keys [][]byte
	err := c.d.db.View(func(txn *bdg.Txn) error {
		for _, kind := range threadKinds {
			it := txn.NewIterator(bdg.IteratorOptions{Prefix: threadPrefix(kind, threadID)})
			for it.Rewind(); it.Valid(); it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			it.Close()
		}
		return nil
	})
	if err == nil {
		err = c.d.deleteAtomically(ctx, keys)
	}
	if err != nil {
		return fmt.Errorf("delete thread %s: %w", threadID, err)
	}
	return nil
}

// Prune implements checkpoint.Checkpointer. All decisions are taken on one
// snapshot, so blobs written concurrently are never deleted.
func (c *Checkpointer) Prune(ctx context.Context, threadID string, keep int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if keep < 1 {
		return fmt.Errorf("prune %s: keep must be at least 1, got %d", threadID, keep)
	}
	txn := c.d.db.NewTransaction(false)
	defer txn.Discard()
	plan, err := planPrune(txn, threadID, keep)
	if err != nil {
		return fmt.Errorf("prune %s: %w", threadID, err)
	}
	if plan == nil {
		return nil
	}
	// Rewrites first: if deleting fails half-way, every kept checkpoint is
	// still readable and a later Prune finishes the job. The thread's field
	// snapshots go with them.
	{
		err := c.d.update(ctx, func(w *bdg.Txn) error {
			if err := deletePrefix(w, threadPrefix(kindSnapshot, threadID)); err != nil {
				return err
			}
			for _, b := range plan.rewrites {
				if err := w.Set(blobKey(threadID, b.Field, b.Version), encodeBlob(b)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("prune %s: rewrite kept values: %w", threadID, err)
		}
	}
	if err := c.d.deleteKeys(plan.deletes); err != nil {
		return fmt.Errorf("prune %s: delete: %w", threadID, err)
	}
	c.d.log.Debug("pruned thread", "thread", threadID, "kept", keep, "rewritten", len(plan.rewrites), "deleted_keys", len(plan.deletes))
	return nil
}

type prunePlan struct {
	rewrites []checkpoint.Blob
	deletes  [][]byte
}

func planPrune(txn *bdg.Txn, threadID string, keep int) (*prunePlan, error) {
	cpPrefix := threadPrefix(kindCheckpoint, threadID)
	var ids []string
	it := txn.NewIterator(bdg.IteratorOptions{Prefix: cpPrefix})
	for it.Rewind(); it.Valid(); it.Next() {
		ids = append(ids, string(it.Item().Key()[len(cpPrefix):]))
	}
	it.Close()
	if len(ids) <= keep {
		return nil, nil
	}
	cut := len(ids) - keep
	needed := map[string]map[int64]bool{}
	for _, id := range ids[cut:] {
		item, err := txn.Get(checkpointKey(threadID, id))
		if err != nil {
			return nil, fmt.Errorf("read kept checkpoint %s: %w", id, err)
		}
		var cp checkpoint.Checkpoint
		if err := item.Value(func(v []byte) error { return checkpoint.DecodeRecord(threadID, id, v, &cp) }); err != nil {
			return nil, fmt.Errorf("decode kept checkpoint %s: %w", id, err)
		}
		for f, v := range cp.Versions {
			if needed[f] == nil {
				needed[f] = map[int64]bool{}
			}
			needed[f][v] = true
		}
	}
	plan := &prunePlan{}
	blobIt := txn.NewIterator(bdg.IteratorOptions{Prefix: threadPrefix(kindBlob, threadID), Reverse: true})
	defer blobIt.Close()
	for _, field := range sortedFields(needed) {
		set := needed[field]
		versions := make([]int64, 0, len(set))
		for v := range set {
			versions = append(versions, v)
		}
		slices.Sort(versions)
		for _, v := range versions {
			item, err := txn.Get(blobKey(threadID, field, v))
			if err != nil {
				return nil, fmt.Errorf("read blob %s@%d: %w", field, v, err)
			}
			var base int64
			err = item.Value(func(val []byte) error {
				var err error
				base, _, err = decodeBlob(val)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("blob %s@%d: %w", field, v, err)
			}
			if base == 0 || set[base] {
				continue
			}
			full, _, err := fieldValue(txn, blobIt, threadID, field, v)
			if err != nil {
				return nil, err
			}
			plan.rewrites = append(plan.rewrites, checkpoint.Blob{Field: field, Version: v, Data: full})
		}
	}
	for _, id := range ids[:cut] {
		plan.deletes = append(plan.deletes, checkpointKey(threadID, id))
	}
	pruned := make(map[string]bool, cut)
	for _, id := range ids[:cut] {
		pruned[id] = true
	}
	wPrefix := threadPrefix(kindWrite, threadID)
	it = txn.NewIterator(bdg.IteratorOptions{Prefix: wPrefix})
	for it.Rewind(); it.Valid(); it.Next() {
		cpID, _, err := readPart(it.Item().Key()[len(wPrefix):])
		if err != nil {
			it.Close()
			return nil, err
		}
		if pruned[cpID] {
			plan.deletes = append(plan.deletes, it.Item().KeyCopy(nil))
		}
	}
	it.Close()
	bPrefix := threadPrefix(kindBlob, threadID)
	it = txn.NewIterator(bdg.IteratorOptions{Prefix: bPrefix})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		field, rest, err := readPart(it.Item().Key()[len(bPrefix):])
		if err != nil || len(rest) != 8 {
			return nil, fmt.Errorf("corrupt blob key %q", it.Item().Key())
		}
		if !needed[field][int64(binary.BigEndian.Uint64(rest))] {
			plan.deletes = append(plan.deletes, it.Item().KeyCopy(nil))
		}
	}
	return plan, nil
}

func sortedFields[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// deletePrefix deletes every key with the prefix inside the transaction.
func deletePrefix(txn *bdg.Txn, prefix []byte) error {
	opts := bdg.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = prefix
	it := txn.NewIterator(opts)
	var keys [][]byte
	for it.Rewind(); it.Valid(); it.Next() {
		keys = append(keys, it.Item().KeyCopy(nil))
	}
	it.Close()
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return fmt.Errorf("discard pending write: %w", err)
		}
	}
	return nil
}

// latestCheckpoint reads the thread's newest checkpoint. The thread summary
// names it, so this is two point reads; a reverse scan of the thread's
// checkpoints, slow where many deleted threads left tombstones nearby, is
// only the fallback for a summary that does not match.
func latestCheckpoint(txn *bdg.Txn, threadID string) (id string, data []byte, err error) {
	item, err := txn.Get(threadPrefix(kindThread, threadID))
	switch {
	case errors.Is(err, bdg.ErrKeyNotFound):
		return "", nil, checkpoint.ErrNotFound
	case err != nil:
		return "", nil, err
	}
	var info checkpoint.ThreadInfo
	if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &info) }); err != nil {
		return "", nil, fmt.Errorf("thread summary: %w", err)
	}
	if cp, err := txn.Get(checkpointKey(threadID, info.Latest)); err == nil {
		data, err := cp.ValueCopy(nil)
		return info.Latest, data, err
	} else if !errors.Is(err, bdg.ErrKeyNotFound) {
		return "", nil, err
	}
	prefix := threadPrefix(kindCheckpoint, threadID)
	it := txn.NewIterator(bdg.IteratorOptions{Prefix: prefix, Reverse: true})
	defer it.Close()
	it.Seek(append(slices.Clone(prefix), 0xFF))
	if !it.Valid() {
		return "", nil, checkpoint.ErrNotFound
	}
	data, err = it.Item().ValueCopy(nil)
	return string(it.Item().Key()[len(prefix):]), data, err
}
