// Package transfer copies threads and long-term memory between storage
// backends as JSON Lines: `graphctl threads export` writes every checkpoint
// of every thread (oldest first, with the values of the fields it changed and
// its pending writes) and every live store item; `graphctl threads import`
// writes them into another backend with the same checkpoint ids, versions and
// parents, so history, forks and resume work there as before.
package transfer

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/store"
)

// Format is the value of the first line's "format" key.
const Format = "graphctl-export/v1"

// Line is one line of an export.
type Line struct {
	// Kind is "header", "checkpoint" or "item".
	Kind   string `json:"kind"`
	Format string `json:"format,omitempty"`
	// Checkpoint, Values and Pending describe one checkpoint: Values hold the
	// full value of every field whose version the previous line of the
	// thread did not have.
	Checkpoint *checkpoint.Checkpoint     `json:"checkpoint,omitempty"`
	Values     map[string]json.RawMessage `json:"values,omitempty"`
	Pending    []checkpoint.PendingWrite  `json:"pending,omitempty"`
	Item       *store.Item                `json:"item,omitempty"`
}

// Counts say what an export or import moved.
type Counts struct {
	Threads, Checkpoints, Items int
}

// Export writes every thread's checkpoints and, when st is not nil, every
// store item to w.
func Export(ctx context.Context, cp checkpoint.Checkpointer, st store.Store, w io.Writer) (Counts, error) {
	var n Counts
	enc := json.NewEncoder(w)
	if err := enc.Encode(Line{Kind: "header", Format: Format}); err != nil {
		return n, err
	}
	threads, err := cp.Threads(ctx)
	if err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	for _, th := range threads {
		hist, err := cp.History(ctx, th.ThreadID, checkpoint.ListOptions{})
		if err != nil {
			return n, fmt.Errorf("export thread %s: %w", th.ThreadID, err)
		}
		slices.Reverse(hist)
		have := map[string]int64{}
		for _, h := range hist {
			snap, err := cp.Get(ctx, th.ThreadID, h.ID)
			if err != nil {
				return n, fmt.Errorf("export thread %s: %w", th.ThreadID, err)
			}
			vals := map[string]json.RawMessage{}
			for f, v := range snap.Versions {
				if have[f] != v {
					vals[f] = snap.Values[f]
				}
			}
			have = snap.Versions
			c := snap.Checkpoint
			if err := enc.Encode(Line{Kind: "checkpoint", Checkpoint: &c, Values: vals, Pending: snap.Pending}); err != nil {
				return n, err
			}
			n.Checkpoints++
		}
		n.Threads++
	}
	if st == nil {
		return n, nil
	}
	items, err := st.Search(ctx, nil, store.SearchQuery{})
	if err != nil {
		return n, fmt.Errorf("export store: %w", err)
	}
	slices.Reverse(items) // oldest first, so an import keeps the newest-first order
	for i := range items {
		items[i].Score = 0
		if err := enc.Encode(Line{Kind: "item", Item: &items[i]}); err != nil {
			return n, err
		}
		n.Items++
	}
	return n, nil
}

// Import reads an export from r into cp and st. A thread that already exists
// in cp is an error (nothing of it is overwritten); store items replace items
// with the same namespace and key, keep their remaining time to live (now is
// the clock for it) and are indexed with the store's default (every string
// field); their created and updated times become the time of the import.
func Import(ctx context.Context, cp checkpoint.Checkpointer, st store.Store, r io.Reader, now func() time.Time) (Counts, error) {
	var n Counts
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	lineNo := 0
	checked := map[string]bool{}
	for sc.Scan() {
		lineNo++
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return n, fmt.Errorf("import line %d: %w", lineNo, err)
		}
		if lineNo == 1 {
			if l.Kind != "header" || l.Format != Format {
				return n, fmt.Errorf("import line 1: not a graphctl export (want a header with format %q)", Format)
			}
			continue
		}
		switch l.Kind {
		case "checkpoint":
			if l.Checkpoint == nil {
				return n, fmt.Errorf("import line %d: checkpoint line without a checkpoint", lineNo)
			}
			c := *l.Checkpoint
			if !checked[c.ThreadID] {
				if _, err := cp.Latest(ctx, c.ThreadID); err == nil {
					return n, fmt.Errorf("import line %d: thread %s already exists here; delete it first or import elsewhere", lineNo, c.ThreadID)
				} else if !errors.Is(err, checkpoint.ErrNotFound) {
					return n, fmt.Errorf("import line %d: %w", lineNo, err)
				}
				checked[c.ThreadID] = true
				n.Threads++
			}
			var blobs []checkpoint.Blob
			for f, data := range l.Values {
				blobs = append(blobs, checkpoint.Blob{Field: f, Version: c.Versions[f], Data: data})
			}
			slices.SortFunc(blobs, func(a, b checkpoint.Blob) int { return strings.Compare(a.Field, b.Field) })
			if err := cp.Put(ctx, c, blobs); err != nil {
				return n, fmt.Errorf("import line %d: %w", lineNo, err)
			}
			for _, w := range l.Pending {
				if err := cp.PutWrites(ctx, c.ThreadID, c.ID, w); err != nil {
					return n, fmt.Errorf("import line %d: %w", lineNo, err)
				}
			}
			n.Checkpoints++
		case "item":
			if l.Item == nil {
				return n, fmt.Errorf("import line %d: item line without an item", lineNo)
			}
			if st == nil {
				continue
			}
			it := l.Item
			var opts store.PutOptions
			if !it.ExpiresAt.IsZero() {
				opts.TTL = it.ExpiresAt.Sub(now())
				if opts.TTL <= 0 {
					continue // expired since the export
				}
			}
			if err := st.Put(ctx, it.Namespace, it.Key, it.Value, opts); err != nil {
				return n, fmt.Errorf("import line %d: %w", lineNo, err)
			}
			n.Items++
		default:
			return n, fmt.Errorf("import line %d: unknown kind %q", lineNo, l.Kind)
		}
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("import line %d: %w", lineNo+1, err)
	}
	if lineNo == 0 {
		return n, errors.New("import: empty input")
	}
	return n, nil
}
