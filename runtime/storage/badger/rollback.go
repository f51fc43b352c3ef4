package badger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Rollback implements checkpoint.Checkpointer in one transaction: the
// deletes, the discarded pending writes and the thread summary naming
// checkpointID commit together, so a crash leaves the thread either as it
// was or rolled back, never half-way.
func (c *Checkpointer) Rollback(ctx context.Context, threadID, checkpointID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := c.d.update(ctx, func(txn *bdg.Txn) error {
		item, err := txn.Get(checkpointKey(threadID, checkpointID))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return checkpoint.ErrNotFound
		}
		if err != nil {
			return err
		}
		var start checkpoint.Checkpoint
		if err := item.Value(func(v []byte) error { return checkpoint.DecodeRecord(threadID, checkpointID, v, &start) }); err != nil {
			return fmt.Errorf("decode checkpoint %s: %w", checkpointID, err)
		}
		kept, dropped, err := splitCheckpoints(txn, threadID, checkpointID)
		if err != nil {
			return err
		}
		needed := map[string]map[int64]bool{}
		for _, cp := range kept {
			for f, v := range cp.Versions {
				if needed[f] == nil {
					needed[f] = map[int64]bool{}
				}
				needed[f][v] = true
			}
		}
		deleted := map[string]bool{}
		for _, cp := range dropped {
			for f, v := range cp.Versions {
				key := blobKey(threadID, f, v)
				if needed[f][v] || deleted[string(key)] {
					continue
				}
				deleted[string(key)] = true
				if err := txn.Delete(key); err != nil {
					return err
				}
			}
			if err := deletePrefix(txn, writePrefix(threadID, cp.ID)); err != nil {
				return err
			}
			if err := txn.Delete(checkpointKey(threadID, cp.ID)); err != nil {
				return err
			}
		}
		if err := discardWrites(txn, threadID, start); err != nil {
			return err
		}
		if err := deletePrefix(txn, threadPrefix(kindSnapshot, threadID)); err != nil {
			return err
		}
		start.CreatedAt = c.d.now().UTC()
		data, err := json.Marshal(checkpoint.ThreadInfo{ThreadID: threadID, GraphName: start.GraphName, Latest: start.ID, Step: start.Step, UpdatedAt: start.CreatedAt})
		if err != nil {
			return err
		}
		return txn.Set(threadPrefix(kindThread, threadID), data)
	})
	if err != nil {
		return fmt.Errorf("rollback %s to %s: %w", threadID, checkpointID, err)
	}
	return nil
}

// splitCheckpoints reads a thread's checkpoints: those up to and including
// id, and those after it.
func splitCheckpoints(txn *bdg.Txn, threadID, id string) (kept, dropped []checkpoint.Checkpoint, err error) {
	prefix := threadPrefix(kindCheckpoint, threadID)
	it := txn.NewIterator(bdg.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 32})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		var cp checkpoint.Checkpoint
		cpID := string(it.Item().Key()[len(prefix):])
		if err := it.Item().Value(func(v []byte) error { return checkpoint.DecodeRecord(threadID, cpID, v, &cp) }); err != nil {
			return nil, nil, fmt.Errorf("decode checkpoint %s: %w", cpID, err)
		}
		if string(it.Item().Key()[len(prefix):]) <= id {
			kept = append(kept, cp)
		} else {
			dropped = append(dropped, cp)
		}
	}
	return kept, dropped, nil
}

// discardWrites deletes the pending writes against cp that a rollback to it
// does not keep.
func discardWrites(txn *bdg.Txn, threadID string, cp checkpoint.Checkpoint) error {
	prefix := writePrefix(threadID, cp.ID)
	it := txn.NewIterator(bdg.IteratorOptions{Prefix: prefix, PrefetchValues: true})
	var drop [][]byte
	for it.Rewind(); it.Valid(); it.Next() {
		var w checkpoint.PendingWrite
		if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &w) }); err != nil {
			it.Close()
			return fmt.Errorf("decode pending write %q: %w", it.Item().Key()[len(prefix):], err)
		}
		if !checkpoint.RollbackKeepsWrite(cp, w) {
			drop = append(drop, it.Item().KeyCopy(nil))
		}
	}
	it.Close()
	for _, k := range drop {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
