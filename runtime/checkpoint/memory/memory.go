// Package memory is an in-memory checkpoint.Checkpointer for tests and
// short-lived runs: the shared checkpointer of package core over maps
// guarded by one mutex, so that it keeps the same data model and behaviour
// as the durable backends — versioned blobs, append deltas, snapshots,
// pending writes. Nothing survives the process.
package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/core"
)

// Checkpointer is the in-memory checkpointer.
type Checkpointer = core.Checkpointer

// New returns an empty checkpointer.
func New() *Checkpointer {
	return core.New(&driver{threads: map[string]*thread{}}, core.Options{InMemory: true})
}

// driver is the storage: records by thread, copied in and out so that
// callers never share memory with it. A read-only transaction holds the
// read lock, a read-write one the write lock; writes are applied as they
// come, which is atomic because the Checkpointer does every check that can
// fail before its first write.
type driver struct {
	mu      sync.RWMutex
	threads map[string]*thread
}

type thread struct {
	// cps holds checkpoint records by id; ids is sorted ascending.
	cps    map[string][]byte
	ids    []string
	blobs  map[string]map[int64]checkpoint.Blob
	writes map[string]map[string]checkpoint.PendingWrite
	info   checkpoint.ThreadInfo
	// hasInfo says info is set.
	hasInfo bool
	snaps   map[string]fieldSnap
}

// fieldSnap is a field's full value at one version.
type fieldSnap struct {
	version int64
	data    []byte
}

// tx is the methods of a transaction, on the locked driver; readTx and
// writeTx are the transactions.
type tx struct{ d *driver }

type (
	readTx  struct{ tx }
	writeTx struct{ tx }
)

func (d *driver) Begin(ctx context.Context, write bool) (core.Txn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if write {
		d.mu.Lock()
		return writeTx{tx{d}}, nil
	}
	d.mu.RLock()
	return readTx{tx{d}}, nil
}

func (readTx) Commit() error  { return nil }
func (t readTx) Discard()     { t.d.mu.RUnlock() }
func (writeTx) Commit() error { return nil }
func (t writeTx) Discard()    { t.d.mu.Unlock() }

func (t tx) thread(id string) *thread { return t.d.threads[id] }

// create returns the thread, created if missing.
func (t tx) create(id string) *thread {
	th := t.d.threads[id]
	if th == nil {
		th = &thread{cps: map[string][]byte{}, blobs: map[string]map[int64]checkpoint.Blob{}, writes: map[string]map[string]checkpoint.PendingWrite{}}
		t.d.threads[id] = th
	}
	return th
}

func (t tx) Checkpoint(threadID, id string) ([]byte, error) {
	if th := t.thread(threadID); th != nil {
		if data, ok := th.cps[id]; ok {
			return data, nil
		}
	}
	return nil, checkpoint.ErrNotFound
}

func (t tx) Newest(threadID string) (string, []byte, error) {
	th := t.thread(threadID)
	if th == nil || len(th.ids) == 0 {
		return "", nil, checkpoint.ErrNotFound
	}
	if data, ok := th.cps[th.info.Latest]; ok && th.hasInfo {
		return th.info.Latest, data, nil
	}
	id := th.ids[len(th.ids)-1]
	return id, th.cps[id], nil
}

func (t tx) Checkpoints(threadID, before string, limit int, fn func(string, []byte) error) error {
	th := t.thread(threadID)
	if th == nil {
		return nil
	}
	end := len(th.ids)
	if before != "" {
		end, _ = slices.BinarySearch(th.ids, before)
	}
	for i, n := end-1, 0; i >= 0 && (limit == 0 || n < limit); i, n = i-1, n+1 {
		if err := fn(th.ids[i], th.cps[th.ids[i]]); err != nil {
			return err
		}
	}
	return nil
}

func (t tx) Writes(threadID, checkpointID string) ([]checkpoint.PendingWrite, error) {
	th := t.thread(threadID)
	if th == nil || len(th.writes[checkpointID]) == 0 {
		return nil, nil
	}
	ws := th.writes[checkpointID]
	out := make([]checkpoint.PendingWrite, 0, len(ws))
	for _, w := range ws {
		w.Update = slices.Clone(w.Update)
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b checkpoint.PendingWrite) int { return strings.Compare(a.TaskID, b.TaskID) })
	return out, nil
}

func (t tx) Chains(threadID string, versions map[string]int64) (map[string][]core.Link, error) {
	out := make(map[string][]core.Link, len(versions))
	th := t.thread(threadID)
	if th == nil {
		return out, nil
	}
	for f, v := range versions {
		snap, hasSnap := th.snaps[f]
		chain, _ := core.WalkChain(v, func(v int64) (core.Link, bool, error) {
			b, ok := th.blobs[f][v]
			if hasSnap && ok && b.Base != 0 && v == snap.version {
				return core.Link{Version: v, Data: snap.data}, true, nil
			}
			return core.Link{Version: v, Base: b.Base, Data: b.Data}, ok, nil
		})
		if len(chain) == 1 {
			// A full value goes to the caller as it is: a copy.
			chain[0].Data = slices.Clone(chain[0].Data)
		}
		out[f] = chain
	}
	return out, nil
}

func (t tx) Blobs(threadID string) ([]checkpoint.Blob, error) {
	th := t.thread(threadID)
	if th == nil {
		return nil, nil
	}
	var out []checkpoint.Blob
	for f, byVersion := range th.blobs {
		for v, b := range byVersion {
			out = append(out, checkpoint.Blob{Field: f, Version: v, Base: b.Base})
		}
	}
	return out, nil
}

func (t tx) Thread(threadID string) (checkpoint.ThreadInfo, error) {
	if th := t.thread(threadID); th != nil && th.hasInfo {
		return th.info, nil
	}
	return checkpoint.ThreadInfo{}, checkpoint.ErrNotFound
}

func (t tx) Threads() ([]checkpoint.ThreadInfo, error) {
	out := make([]checkpoint.ThreadInfo, 0, len(t.d.threads))
	for _, th := range t.d.threads {
		if th.hasInfo {
			out = append(out, th.info)
		}
	}
	return out, nil
}

func (t tx) Children(threadID string) ([]string, error) {
	var out []string
	for id, th := range t.d.threads {
		if th.hasInfo && checkpoint.IsChildOf(id, threadID) {
			out = append(out, id)
		}
	}
	return out, nil
}

func (t tx) Lock(string, bool) error { return nil }

func (t tx) RequireBlobs(threadID string, refs []checkpoint.BlobRef) error {
	th := t.thread(threadID)
	for _, r := range refs {
		if th == nil {
			return fmt.Errorf("field %s version %d has no blob", r.Field, r.Version)
		}
		if _, ok := th.blobs[r.Field][r.Version]; !ok {
			return fmt.Errorf("field %s version %d has no blob", r.Field, r.Version)
		}
	}
	return nil
}

func (t tx) PutBlob(threadID string, b checkpoint.Blob) error {
	th := t.create(threadID)
	if th.blobs[b.Field] == nil {
		th.blobs[b.Field] = map[int64]checkpoint.Blob{}
	}
	th.blobs[b.Field][b.Version] = checkpoint.Blob{Base: b.Base, Data: slices.Clone(b.Data)}
	return nil
}

func (t tx) DeleteBlobs(threadID string, refs []checkpoint.BlobRef) error {
	th := t.thread(threadID)
	if th == nil {
		return nil
	}
	for _, r := range refs {
		delete(th.blobs[r.Field], r.Version)
		if len(th.blobs[r.Field]) == 0 {
			delete(th.blobs, r.Field)
		}
	}
	return nil
}

func (t tx) PutCheckpoint(threadID, id string, record []byte) error {
	th := t.create(threadID)
	if _, exists := th.cps[id]; !exists {
		i, _ := slices.BinarySearch(th.ids, id)
		th.ids = slices.Insert(th.ids, i, id)
	}
	th.cps[id] = record
	return nil
}

func (t tx) DeleteCheckpoints(threadID string, ids []string) error {
	th := t.thread(threadID)
	if th == nil {
		return nil
	}
	for _, id := range ids {
		delete(th.cps, id)
		delete(th.writes, id)
	}
	th.ids = slices.DeleteFunc(th.ids, func(id string) bool { _, ok := th.cps[id]; return !ok })
	return nil
}

func (t tx) PutWrite(threadID, checkpointID string, w checkpoint.PendingWrite) error {
	th := t.thread(threadID)
	if th == nil || th.cps[checkpointID] == nil {
		return checkpoint.ErrNotFound
	}
	if th.writes[checkpointID] == nil {
		th.writes[checkpointID] = map[string]checkpoint.PendingWrite{}
	}
	w.Update = slices.Clone(w.Update)
	th.writes[checkpointID][w.TaskID] = w
	return nil
}

func (t tx) DeleteWrites(threadID, checkpointID string, taskIDs []string) error {
	th := t.thread(threadID)
	if th == nil {
		return nil
	}
	if taskIDs == nil {
		delete(th.writes, checkpointID)
		return nil
	}
	for _, task := range taskIDs {
		delete(th.writes[checkpointID], task)
	}
	return nil
}

func (t tx) PutThread(info checkpoint.ThreadInfo, ifNewer bool) error {
	th := t.create(info.ThreadID)
	if ifNewer && th.hasInfo && th.info.Latest > info.Latest {
		return nil
	}
	th.info, th.hasInfo = info, true
	return nil
}

func (t tx) PutSnapshot(threadID, field string, version int64, value []byte) error {
	th := t.create(threadID)
	if th.snaps == nil {
		th.snaps = map[string]fieldSnap{}
	}
	th.snaps[field] = fieldSnap{version: version, data: slices.Clone(value)}
	return nil
}

func (t tx) DropSnapshot(threadID, field string, from int64) error {
	if th := t.thread(threadID); th != nil {
		if s, ok := th.snaps[field]; ok && s.version >= from {
			delete(th.snaps, field)
		}
	}
	return nil
}

func (t tx) DropSnapshots(threadID string) error {
	if th := t.thread(threadID); th != nil {
		th.snaps = nil
	}
	return nil
}

func (t tx) DeleteThread(threadID string) error {
	delete(t.d.threads, threadID)
	return nil
}
