package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/reducer"
	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// threadState is a thread's position and values while a run works on it.
type threadState struct {
	cp       checkpoint.Checkpoint // the latest checkpoint (zero for a new thread)
	exists   bool
	values   map[string]any   // every declared field
	versions map[string]int64 // fields that have a stored value
	pending  []checkpoint.PendingWrite
	// floor is the version above which new blobs are numbered, once the
	// thread has branches (see checkpoint.Checkpoint.VersionFloor).
	floor int64
	// deltas counts, per field, the append deltas written since the field's
	// last full value or snapshot that this engine knows of (a cold read
	// leaves at most checkpoint.SnapshotAfter).
	deltas map[string]int
	// forkedFrom is the id of the older checkpoint the state was opened at
	// (see Engine.open), until a run or an update takes it.
	forkedFrom string
	// breakpoint is the breakpoint the thread is stopped at (see StoppedAt).
	breakpoint *Breakpoint
}

// loadThread reads the thread's latest checkpoint and materialises its state.
func (e *Engine) loadThread(snap *checkpoint.Snapshot) (*threadState, error) {
	g := e.graph
	ts := &threadState{values: make(map[string]any, len(g.FieldOrder)), versions: map[string]int64{}}
	for _, name := range g.FieldOrder {
		ts.values[name] = g.Fields[name].Initial
	}
	if snap == nil {
		return ts, nil
	}
	ts.cp = snap.Checkpoint
	ts.breakpoint = StoppedAt(&snap.Checkpoint)
	ts.cp.Interrupts = WaitingInterrupts(&snap.Checkpoint)
	ts.exists = true
	ts.pending = snap.Pending
	ts.floor = snap.VersionFloor
	if err := e.checkCompatible(snap); err != nil {
		return nil, err
	}
	for name, raw := range snap.Values {
		f := g.Fields[name]
		v, err := decodeValue(raw)
		if err != nil {
			return nil, fmt.Errorf("thread %q: field %q: %w", snap.ThreadID, name, err)
		}
		nv, err := f.Spec.Type.Normalize(v)
		if err != nil {
			return nil, fmt.Errorf("%w: thread %q: stored field %q no longer fits its type: %v", ErrIncompatibleGraph, snap.ThreadID, name, err)
		}
		if nv == nil {
			nv = f.Initial
		}
		ts.values[name] = nv
	}
	for k, v := range snap.Versions {
		ts.versions[k] = v
	}
	return ts, nil
}

// checkCompatible accepts a checkpoint written by this graph, or by another
// version of it whose nodes and fields the loaded graph still has.
func (e *Engine) checkCompatible(snap *checkpoint.Snapshot) error {
	g := e.graph
	if snap.GraphName != "" && snap.GraphName != g.Spec.Name {
		return fmt.Errorf("%w: thread %q belongs to graph %q, not %q", ErrIncompatibleGraph, snap.ThreadID, snap.GraphName, g.Spec.Name)
	}
	if snap.GraphHash == shortHash(g.Spec.Hash) {
		return nil
	}
	var missing []string
	for _, t := range snap.Next {
		if _, ok := g.Nodes[t.Node]; !ok {
			missing = append(missing, "node "+t.Node)
		}
	}
	for _, in := range snap.Interrupts {
		if _, ok := g.Nodes[in.Node]; !ok {
			missing = append(missing, "node "+in.Node)
		}
	}
	for name := range snap.Versions {
		if _, ok := g.Fields[name]; !ok {
			missing = append(missing, "field "+name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%w: thread %q was written by another version of graph %q (hash %.12s) that had %s, which the loaded version (hash %.12s) lacks",
			ErrIncompatibleGraph, snap.ThreadID, g.Spec.Name, snap.GraphHash, strings.Join(missing, ", "), g.Spec.Hash)
	}
	return nil
}

func decodeValue(raw json.RawMessage) (any, error) { return checkpoint.DecodeValue(raw) }

// write is one task's update, in the order it is applied.
type write struct {
	taskID string
	node   string
	update node.Update
}

// fieldChange tracks how a field changed during one step.
type fieldChange struct {
	// appendFrom is the length of the step-start list when every write of the
	// step only appended to it, else -1.
	appendFrom int
	writers    []string
	// first holds the first writer, so that a field written once in a
	// step costs no list of its own.
	first [1]string
	// unchanged is true while no write of the step changed the value.
	unchanged bool
}

func (c *fieldChange) writersOrNil() []string {
	if c == nil {
		return nil
	}
	return c.writers
}

// applyWrites merges the writes into values through the reducers, checking every
// update against the schema. It returns the changed fields (nil when no
// write wrote any).
func applyWrites(g *compile.Graph, values map[string]any, writes []write) (map[string]*fieldChange, error) {
	slices.SortStableFunc(writes, func(a, b write) int { return strings.Compare(a.taskID, b.taskID) })
	var changes map[string]*fieldChange // made at the first write
	var one [1]string
	for _, w := range writes {
		names := one[:0]
		if len(w.update) == 1 {
			for name := range w.update {
				names = append(names, name)
			}
		} else {
			names = sortedKeys(w.update)
		}
		if changes == nil && len(names) > 0 {
			changes = make(map[string]*fieldChange, len(names))
		}
		for _, name := range names {
			f, ok := g.Fields[name]
			if !ok {
				return nil, fmt.Errorf("node %q wrote field %q, which the state schema does not declare", w.node, name)
			}
			v, err := f.Spec.Type.Normalize(w.update[name])
			if err != nil {
				// Reducers over lists accept a single item too.
				if f.Spec.Type.IsList() && !isList(w.update[name]) {
					v, err = f.Spec.Type.Normalize([]any{w.update[name]})
				}
				if err != nil {
					return nil, fmt.Errorf("node %q wrote field %q: %v", w.node, name, err)
				}
			}
			if err := checkEnum(f, w.node, v); err != nil {
				return nil, err
			}
			ch := changes[name]
			if ch != nil && f.Reducer.Exclusive {
				return nil, fmt.Errorf("field %q (reducer %s) was written by both %q and %q in the same step; give it a reducer that merges concurrent writes, or write it from one node",
					name, f.Reducer.Name, ch.writers[0], w.node)
			}
			old := values[name]
			if old == nil {
				old = f.Initial
			}
			res, err := f.Reducer.Reduce(old, v)
			if err != nil {
				return nil, fmt.Errorf("node %q wrote field %q: reducer %s: %w", w.node, name, f.Reducer.Name, err)
			}
			if res.Unchanged {
				if ch == nil {
					ch = &fieldChange{appendFrom: 0, unchanged: true}
					ch.writers = ch.first[:0]
					changes[name] = ch
				}
				ch.writers = append(ch.writers, w.node)
				continue
			}
			if ch == nil || ch.unchanged {
				prev := ch.writersOrNil()
				ch = &fieldChange{appendFrom: res.AppendedFrom}
				ch.writers = append(ch.first[:0], prev...)
				changes[name] = ch
			} else if res.AppendedFrom < 0 {
				ch.appendFrom = -1
			}
			ch.writers = append(ch.writers, w.node)
			values[name] = res.Value
		}
	}
	return changes, nil
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// blobsFor encodes the changed fields as new blob versions, as append deltas
// where the field only grew and a stored base version exists. New versions
// are numbered above floor when it is set. It returns the field versions
// after the blobs — versions itself, which it never modifies, when no field
// got a new one — and the new floor.
func blobsFor(values map[string]any, versions map[string]int64, changes map[string]*fieldChange, floor int64) ([]checkpoint.Blob, map[string]int64, int64, error) {
	var blobs []checkpoint.Blob
	out := versions
	for _, name := range sortedKeys(changes) {
		ch := changes[name]
		if ch.unchanged {
			continue
		}
		base := versions[name]
		b := checkpoint.Blob{Field: name, Version: base + 1}
		if floor > 0 {
			b.Version = max(base, floor) + 1
		}
		val := values[name]
		if list, ok := val.([]any); ok && ch.appendFrom >= 0 && base > 0 && ch.appendFrom <= len(list) {
			if ch.appendFrom == len(list) {
				continue // nothing appended: the stored version is still right
			}
			b.Base = base
			val = list[ch.appendFrom:]
		}
		data, err := encodeValue(val)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("encode field %q: %w", name, err)
		}
		b.Data = data
		if blobs == nil {
			blobs = make([]checkpoint.Blob, 0, len(changes))
			out = make(map[string]int64, len(versions)+len(changes))
			maps.Copy(out, versions)
		}
		out[name] = b.Version
		if floor > 0 {
			floor = b.Version
		}
		blobs = append(blobs, b)
	}
	return blobs, out, floor, nil
}

// encodeValue encodes a field's value as JSON: numbers and booleans
// directly, anything else through encoding/json.
func encodeValue(v any) ([]byte, error) {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(nil, x, 10), nil
	case bool:
		return strconv.AppendBool(nil, x), nil
	}
	return jsonenc.Append(nil, v)
}

// copyState returns a shallow copy of the state values for nodes and
// callers, with every list clipped (see clipLists).
func copyState(values map[string]any) map[string]any {
	return clipLists(values)
}

// shortHash is the prefix of a graph's content hash that checkpoints record:
// 64 bits tell versions of one graph apart, at a quarter of the bytes.
func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

// stampMessages returns update with an id on every message of its messages
// fields: the first message without one (an assistant's when there is one)
// gets first() when first is set, the others new UUIDs. Messages are
// copied, not changed in place.
func (e *Engine) stampMessages(update map[string]any, first func() string) map[string]any {
	var out map[string]any
	for k, v := range update {
		f, ok := e.graph.Fields[k]
		if !ok || f.Spec.Type.Kind != graph.Messages {
			continue
		}
		list, isList := v.([]any)
		if !isList {
			list = []any{v}
		}
		pick := -1
		for i, it := range list {
			m, ok := it.(map[string]any)
			if !ok || hasID(m) {
				continue
			}
			if pick < 0 || (m["role"] == "assistant" && list[pick].(map[string]any)["role"] != "assistant") {
				pick = i
			}
		}
		if pick < 0 {
			continue
		}
		stamped := make([]any, len(list))
		for i, it := range list {
			m, ok := it.(map[string]any)
			if !ok || hasID(m) {
				stamped[i] = it
				continue
			}
			cp := make(map[string]any, len(m)+1)
			for kk, vv := range m {
				cp[kk] = vv
			}
			if i == pick && first != nil {
				cp["id"] = first()
			} else {
				cp["id"] = reducer.NewMessageID()
			}
			stamped[i] = cp
		}
		if out == nil {
			out = make(map[string]any, len(update))
			for kk, vv := range update {
				out[kk] = vv
			}
		}
		out[k] = stamped
	}
	if out == nil {
		return update
	}
	return out
}

func hasID(m map[string]any) bool {
	switch id := m["id"].(type) {
	case string:
		return id != ""
	case nil:
		return false
	}
	return true
}

// mergeChanges combines the changes of two successive writes to the state.
func mergeChanges(first, second map[string]*fieldChange) map[string]*fieldChange {
	out := make(map[string]*fieldChange, len(first)+len(second))
	for k, c := range first {
		out[k] = c
	}
	for k, c := range second {
		prev, ok := out[k]
		switch {
		case !ok || prev.unchanged:
			out[k] = c
		case c.unchanged:
		default:
			from := prev.appendFrom
			if c.appendFrom < 0 {
				from = -1
			}
			out[k] = &fieldChange{appendFrom: from, writers: append(append([]string(nil), prev.writers...), c.writers...)}
		}
	}
	return out
}
