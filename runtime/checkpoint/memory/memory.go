// Package memory is an in-memory checkpoint.Checkpointer for tests and
// short-lived runs. It keeps the same data model as the durable backends —
// versioned blobs, append deltas, pending writes — so that code tested against
// it behaves the same on Badger. Nothing survives the process.
package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Checkpointer is a map-based checkpointer guarded by one mutex. Checkpoints
// are held as JSON so callers never share memory with the store.
type Checkpointer struct {
	mu      sync.RWMutex
	threads map[string]*thread
}

type thread struct {
	// cps holds checkpoint JSON by id; ids is sorted ascending.
	cps    map[string][]byte
	ids    []string
	blobs  map[string]map[int64]checkpoint.Blob
	writes map[string]map[string]checkpoint.PendingWrite
	// latest is the newest checkpoint, decoded.
	latest checkpoint.Checkpoint
	// snaps holds each list field's snapshot (see checkpoint.SnapshotAfter).
	snaps map[string]fieldSnap
}

// fieldSnap is a field's full value at one version.
type fieldSnap struct {
	version int64
	data    json.RawMessage
}

func newThread() *thread {
	return &thread{cps: map[string][]byte{}, blobs: map[string]map[int64]checkpoint.Blob{}, writes: map[string]map[string]checkpoint.PendingWrite{}}
}

var (
	_ checkpoint.Checkpointer = (*Checkpointer)(nil)
	_ checkpoint.HeadReader   = (*Checkpointer)(nil)
)

// New returns an empty checkpointer.
func New() *Checkpointer {
	return &Checkpointer{threads: map[string]*thread{}}
}

// Put implements checkpoint.Checkpointer.
func (c *Checkpointer) Put(ctx context.Context, cp checkpoint.Checkpoint, blobs []checkpoint.Blob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := checkpoint.PreparePut(cp, blobs, time.Now)
	if err != nil {
		return err
	}
	cp, data := p.Checkpoint, p.Data
	c.mu.Lock()
	defer c.mu.Unlock()
	th := c.threads[cp.ThreadID]
	if th == nil {
		th = newThread()
	}
	for _, r := range p.Required {
		if _, ok := th.blobs[r.Field][r.Version]; !ok {
			return fmt.Errorf("put %s/%s: field %s version %d has no blob", cp.ThreadID, cp.ID, r.Field, r.Version)
		}
	}
	c.threads[cp.ThreadID] = th
	for _, b := range blobs {
		if _, overwrite := th.blobs[b.Field][b.Version]; overwrite {
			delete(th.snaps, b.Field)
		}
		if th.blobs[b.Field] == nil {
			th.blobs[b.Field] = map[int64]checkpoint.Blob{}
		}
		b.Data = slices.Clone(b.Data)
		th.blobs[b.Field][b.Version] = b
	}
	if _, exists := th.cps[cp.ID]; !exists {
		i, _ := slices.BinarySearch(th.ids, cp.ID)
		th.ids = slices.Insert(th.ids, i, cp.ID)
	}
	th.cps[cp.ID] = data
	if cp.ParentID != "" {
		delete(th.writes, cp.ParentID)
	}
	if th.ids[len(th.ids)-1] == cp.ID {
		th.latest = cloneSummary(cp)
	}
	return nil
}

// PutWrites implements checkpoint.Checkpointer.
func (c *Checkpointer) PutWrites(ctx context.Context, threadID, checkpointID string, w checkpoint.PendingWrite) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.TaskID == "" {
		return fmt.Errorf("put writes %s/%s: empty task id", threadID, checkpointID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	th := c.threads[threadID]
	if th == nil || th.cps[checkpointID] == nil {
		return fmt.Errorf("put writes of task %s: checkpoint %s/%s: %w", w.TaskID, threadID, checkpointID, checkpoint.ErrNotFound)
	}
	if th.writes[checkpointID] == nil {
		th.writes[checkpointID] = map[string]checkpoint.PendingWrite{}
	}
	w.Update = slices.Clone(w.Update)
	th.writes[checkpointID][w.TaskID] = w
	return nil
}

// Latest implements checkpoint.Checkpointer.
func (c *Checkpointer) Latest(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	th := c.threads[threadID]
	if th == nil || len(th.ids) == 0 {
		c.mu.RUnlock()
		return nil, fmt.Errorf("latest checkpoint of thread %s: %w", threadID, checkpoint.ErrNotFound)
	}
	s, long, err := th.snapshot(threadID, th.ids[len(th.ids)-1])
	c.mu.RUnlock()
	if err != nil || len(long) == 0 {
		return s, err
	}
	// Save the fields whose chains were long as their snapshots, unless the
	// thread changed meanwhile.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.threads[threadID] != th {
		return s, nil
	}
	for _, f := range long {
		v := s.Versions[f]
		if _, ok := th.blobs[f][v]; !ok {
			continue
		}
		if th.snaps == nil {
			th.snaps = map[string]fieldSnap{}
		}
		th.snaps[f] = fieldSnap{version: v, data: slices.Clone(s.Values[f])}
	}
	return s, nil
}

// Get implements checkpoint.Checkpointer.
func (c *Checkpointer) Get(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	th := c.threads[threadID]
	if th == nil || th.cps[checkpointID] == nil {
		return nil, fmt.Errorf("checkpoint %s/%s: %w", threadID, checkpointID, checkpoint.ErrNotFound)
	}
	s, _, err := th.snapshot(threadID, checkpointID)
	return s, err
}

// Head implements checkpoint.HeadReader.
func (c *Checkpointer) Head(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	th := c.threads[threadID]
	if th == nil || len(th.ids) == 0 {
		return nil, fmt.Errorf("newest checkpoint of thread %s: %w", threadID, checkpoint.ErrNotFound)
	}
	return th.head(threadID, th.ids[len(th.ids)-1])
}

// head decodes a checkpoint with its pending writes, without values.
func (th *thread) head(threadID, id string) (*checkpoint.Snapshot, error) {
	s := &checkpoint.Snapshot{}
	if err := checkpoint.DecodeRecord(threadID, id, th.cps[id], &s.Checkpoint); err != nil {
		return nil, fmt.Errorf("checkpoint %s/%s: decode: %w", threadID, id, err)
	}
	for _, task := range sortedKeys(th.writes[id]) {
		w := th.writes[id][task]
		w.Update = slices.Clone(w.Update)
		s.Pending = append(s.Pending, w)
	}
	return s, nil
}

// snapshot materialises a checkpoint; long lists the fields whose delta
// chains were longer than checkpoint.SnapshotAfter.
func (th *thread) snapshot(threadID, id string) (s *checkpoint.Snapshot, long []string, err error) {
	s, err = th.head(threadID, id)
	if err != nil {
		return nil, nil, err
	}
	s.Values = make(map[string]json.RawMessage, len(s.Versions))
	for field, v := range s.Versions {
		val, walked, err := th.chain(field, v)
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint %s/%s: %w", threadID, id, err)
		}
		s.Values[field] = val
		if walked > checkpoint.SnapshotAfter {
			long = append(long, field)
		}
	}
	return s, long, nil
}

// value rebuilds a field's value at version v.
func (th *thread) value(field string, v int64) (json.RawMessage, error) {
	val, _, err := th.chain(field, v)
	return val, err
}

// chain rebuilds a field's value at version v by following append deltas
// back to the nearest full blob or to the field's snapshot, and reports how
// many deltas it walked.
func (th *thread) chain(field string, v int64) (json.RawMessage, int, error) {
	var deltas []json.RawMessage
	snap, hasSnap := th.snaps[field]
	for {
		b, ok := th.blobs[field][v]
		if !ok {
			return nil, 0, fmt.Errorf("field %s: blob version %d missing", field, v)
		}
		base := b.Data
		if hasSnap && b.Base != 0 && v == snap.version {
			b.Base, base = 0, snap.data
		}
		if b.Base == 0 {
			if len(deltas) == 0 {
				return slices.Clone(base), 0, nil
			}
			slices.Reverse(deltas)
			out, err := checkpoint.AppendArrays(base, deltas...)
			if err != nil {
				return nil, 0, fmt.Errorf("field %s at version %d: %w", field, v, err)
			}
			return out, len(deltas), nil
		}
		deltas = append(deltas, b.Data)
		v = b.Base
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// History implements checkpoint.Checkpointer.
func (c *Checkpointer) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	th := c.threads[threadID]
	if th == nil {
		return nil, nil
	}
	end := len(th.ids)
	if opts.Before != "" {
		end, _ = slices.BinarySearch(th.ids, opts.Before)
	}
	var out []checkpoint.Checkpoint
	for i := end - 1; i >= 0; i-- {
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
		var cp checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, th.ids[i], th.cps[th.ids[i]], &cp); err != nil {
			return nil, fmt.Errorf("history of %s: decode %s: %w", threadID, th.ids[i], err)
		}
		out = append(out, cp)
	}
	return out, nil
}

// Threads implements checkpoint.Checkpointer.
func (c *Checkpointer) Threads(ctx context.Context) ([]checkpoint.ThreadInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]checkpoint.ThreadInfo, 0, len(c.threads))
	for id, th := range c.threads {
		if len(th.ids) == 0 {
			continue
		}
		l := th.latest
		out = append(out, checkpoint.ThreadInfo{ThreadID: id, GraphName: l.GraphName, Latest: l.ID, Step: l.Step, UpdatedAt: l.CreatedAt})
	}
	slices.SortFunc(out, func(a, b checkpoint.ThreadInfo) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ThreadID, b.ThreadID)
	})
	return out, nil
}

// Fork implements checkpoint.Checkpointer. The new thread gets full copies of
// the values, so it shares nothing with the source.
func (c *Checkpointer) Fork(ctx context.Context, threadID, checkpointID, newThreadID string) (*checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if newThreadID == "" {
		return nil, fmt.Errorf("fork %s/%s: empty new thread id", threadID, checkpointID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	src := c.threads[threadID]
	if src == nil || src.cps[checkpointID] == nil {
		return nil, fmt.Errorf("fork %s/%s: %w", threadID, checkpointID, checkpoint.ErrNotFound)
	}
	if dst := c.threads[newThreadID]; dst != nil && len(dst.ids) > 0 {
		return nil, fmt.Errorf("fork %s/%s: thread %s already exists", threadID, checkpointID, newThreadID)
	}
	snap, _, err := src.snapshot(threadID, checkpointID)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	cp := checkpoint.ForkOf(snap.Checkpoint, newThreadID, time.Now().UTC())
	data, err := checkpoint.EncodeRecord(cp)
	if err != nil {
		return nil, fmt.Errorf("fork %s/%s: encode: %w", threadID, checkpointID, err)
	}
	dst := newThread()
	for field, v := range cp.Versions {
		dst.blobs[field] = map[int64]checkpoint.Blob{v: {Field: field, Version: v, Data: snap.Values[field]}}
	}
	dst.cps[cp.ID] = data
	dst.ids = []string{cp.ID}
	dst.latest = cloneSummary(cp)
	c.threads[newThreadID] = dst
	return &cp, nil
}

// DeleteThread implements checkpoint.Checkpointer. Deleting an unknown thread
// is not an error.
func (c *Checkpointer) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.threads, threadID)
	return nil
}

// Prune implements checkpoint.Checkpointer. A kept version whose delta chain
// runs through a pruned version is rewritten as a full value first.
func (c *Checkpointer) Prune(ctx context.Context, threadID string, keep int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if keep < 1 {
		return fmt.Errorf("prune %s: keep must be at least 1, got %d", threadID, keep)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	th := c.threads[threadID]
	if th == nil || len(th.ids) <= keep {
		return nil
	}
	th.snaps = nil
	cut := len(th.ids) - keep
	needed := map[string]map[int64]bool{}
	for _, id := range th.ids[cut:] {
		var cp checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, id, th.cps[id], &cp); err != nil {
			return fmt.Errorf("prune %s: decode %s: %w", threadID, id, err)
		}
		for f, v := range cp.Versions {
			if needed[f] == nil {
				needed[f] = map[int64]bool{}
			}
			needed[f][v] = true
		}
	}
	for field, set := range needed {
		versions := make([]int64, 0, len(set))
		for v := range set {
			versions = append(versions, v)
		}
		slices.Sort(versions)
		for _, v := range versions {
			b := th.blobs[field][v]
			if b.Base == 0 || set[b.Base] {
				continue
			}
			val, err := th.value(field, v)
			if err != nil {
				return fmt.Errorf("prune %s: %w", threadID, err)
			}
			th.blobs[field][v] = checkpoint.Blob{Field: field, Version: v, Data: val}
		}
	}
	for field, byVersion := range th.blobs {
		for v := range byVersion {
			if !needed[field][v] {
				delete(byVersion, v)
			}
		}
		if len(byVersion) == 0 {
			delete(th.blobs, field)
		}
	}
	for _, id := range th.ids[:cut] {
		delete(th.cps, id)
		delete(th.writes, id)
	}
	th.ids = slices.Clone(th.ids[cut:])
	return nil
}

// Rollback implements checkpoint.Checkpointer under the one mutex.
func (c *Checkpointer) Rollback(ctx context.Context, threadID, checkpointID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	th := c.threads[threadID]
	if th == nil || th.cps[checkpointID] == nil {
		return fmt.Errorf("rollback %s to %s: %w", threadID, checkpointID, checkpoint.ErrNotFound)
	}
	th.snaps = nil
	i, _ := slices.BinarySearch(th.ids, checkpointID)
	var start checkpoint.Checkpoint
	if err := checkpoint.DecodeRecord(threadID, checkpointID, th.cps[checkpointID], &start); err != nil {
		return fmt.Errorf("rollback %s: decode %s: %w", threadID, checkpointID, err)
	}
	needed := map[string]map[int64]bool{}
	for _, id := range th.ids[:i+1] {
		var cp checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, id, th.cps[id], &cp); err != nil {
			return fmt.Errorf("rollback %s: decode %s: %w", threadID, id, err)
		}
		for f, v := range cp.Versions {
			if needed[f] == nil {
				needed[f] = map[int64]bool{}
			}
			needed[f][v] = true
		}
	}
	for _, id := range th.ids[i+1:] {
		var cp checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, id, th.cps[id], &cp); err != nil {
			return fmt.Errorf("rollback %s: decode %s: %w", threadID, id, err)
		}
		for f, v := range cp.Versions {
			if !needed[f][v] {
				delete(th.blobs[f], v)
			}
		}
		delete(th.cps, id)
		delete(th.writes, id)
	}
	for task, w := range th.writes[checkpointID] {
		if !checkpoint.RollbackKeepsWrite(start, w) {
			delete(th.writes[checkpointID], task)
		}
	}
	th.ids = slices.Clone(th.ids[:i+1])
	th.latest = cloneSummary(start)
	th.latest.CreatedAt = time.Now().UTC()
	return nil
}

// cloneSummary copies the parts of a checkpoint the thread listing reads, so
// the stored latest shares no memory with the caller's value.
func cloneSummary(cp checkpoint.Checkpoint) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{
		ThreadID: cp.ThreadID, ID: cp.ID, Step: cp.Step,
		GraphName: cp.GraphName, GraphHash: cp.GraphHash, CreatedAt: cp.CreatedAt,
	}
}
