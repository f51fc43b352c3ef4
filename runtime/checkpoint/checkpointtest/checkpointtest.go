// Package checkpointtest is the conformance suite every checkpoint.Checkpointer
// backend runs: storing and reading checkpoints, history paging, versioned and
// append-delta blobs, pending writes, fork, delete, prune, thread listing,
// the listing of a thread's subgraph threads and concurrent use.
package checkpointtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Run runs the suite. open must return a new, empty checkpointer for each
// call; the suite closes nothing, so open should register its own cleanup.
func Run(t *testing.T, open func(t *testing.T) checkpoint.Checkpointer) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, c checkpoint.Checkpointer)
	}{
		{"PutLatestGet", testPutLatestGet},
		{"InvalidPut", testInvalidPut},
		{"NotFound", testNotFound},
		{"History", testHistory},
		{"UnchangedFieldsReuseBlobs", testUnchangedFields},
		{"DeltaChains", testDeltaChains},
		{"PendingWrites", testPendingWrites},
		{"Fork", testFork},
		{"DeleteThread", testDeleteThread},
		{"Prune", testPrune},
		{"Rollback", testRollback},
		{"Threads", testThreads},
		{"ConcurrentThreads", testConcurrent},
		{"CancelledContext", testCancelled},
		{"Head", testHead},
		{"LongChains", testLongChains},
		{"PutBatch", testPutBatch},
		{"Children", testChildren},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, open(t))
		})
	}
}

// epoch is the creation time of the first checkpoint the suite writes.
var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// cpID returns a deterministic checkpoint id that sorts by step then seq, and
// after every id checkpoint.NewID returns (such as a Fork's), as a thread's
// later checkpoints sort after its earlier ones.
func cpID(step, seq int) string { return fmt.Sprintf("t%07d-%016x", step, seq) }

// thread models a thread: the values and versions the suite expects back.
type thread struct {
	id       string
	versions map[string]int64
	values   map[string]json.RawMessage
	step     int
	last     string
	ids      []string
	// at records the expected values at every checkpoint.
	at map[string]map[string]json.RawMessage
}

func newThread(id string) *thread {
	return &thread{id: id, versions: map[string]int64{}, values: map[string]json.RawMessage{}, at: map[string]map[string]json.RawMessage{}}
}

// change describes one field write of a step.
type change struct {
	field string
	// full replaces the value; append adds items via a delta blob.
	full   any
	append []any
}

// put writes the next checkpoint of th with the given changes.
func (th *thread) put(t *testing.T, c checkpoint.Checkpointer, changes ...change) checkpoint.Checkpoint {
	t.Helper()
	cp, blobs := th.next(t, changes...)
	if err := c.Put(context.Background(), cp, blobs); err != nil {
		t.Fatalf("Put %s/%s: %v", th.id, cp.ID, err)
	}
	return cp
}

// next returns the next checkpoint of th with the given changes, and its
// blobs, and takes them into the model as written.
func (th *thread) next(t *testing.T, changes ...change) (checkpoint.Checkpoint, []checkpoint.Blob) {
	t.Helper()
	var blobs []checkpoint.Blob
	for _, ch := range changes {
		prev := th.versions[ch.field]
		v := prev + 1
		th.versions[ch.field] = v
		if ch.append != nil && prev != 0 {
			data := mustJSON(t, ch.append)
			blobs = append(blobs, checkpoint.Blob{Field: ch.field, Version: v, Base: prev, Data: data})
			var items []any
			if err := json.Unmarshal(th.values[ch.field], &items); err != nil {
				t.Fatalf("model value of %s is not a list: %v", ch.field, err)
			}
			th.values[ch.field] = mustJSON(t, append(items, ch.append...))
			continue
		}
		val := ch.full
		if ch.append != nil {
			val = ch.append
		}
		data := mustJSON(t, val)
		blobs = append(blobs, checkpoint.Blob{Field: ch.field, Version: v, Data: data})
		th.values[ch.field] = data
	}
	cp := checkpoint.Checkpoint{
		ThreadID:  th.id,
		ID:        cpID(th.step, len(th.ids)),
		ParentID:  th.last,
		Step:      th.step,
		Next:      []checkpoint.Task{{ID: "n", Node: "n"}},
		GraphName: "g",
		GraphHash: "h1",
		Versions:  maps(th.versions),
		Source:    "loop",
		CreatedAt: epoch.Add(time.Duration(len(th.ids)) * time.Second),
	}
	th.at[cp.ID] = maps(th.values)
	th.ids = append(th.ids, cp.ID)
	th.last = cp.ID
	th.step++
	return cp, blobs
}

func maps[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	return b
}

// assertValues compares snapshot values with the model semantically.
func assertValues(t *testing.T, where string, got, want map[string]json.RawMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d fields %v, want %d", where, len(got), keys(got), len(want))
	}
	for f, w := range want {
		g, ok := got[f]
		if !ok {
			t.Errorf("%s: field %q missing", where, f)
			continue
		}
		var gv, wv any
		if err := json.Unmarshal(g, &gv); err != nil {
			t.Errorf("%s: field %q is not JSON: %v (%s)", where, f, err, g)
			continue
		}
		_ = json.Unmarshal(w, &wv)
		if !reflect.DeepEqual(gv, wv) {
			t.Errorf("%s: field %q = %.200s, want %.200s", where, f, g, w)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func mustGet(t *testing.T, c checkpoint.Checkpointer, threadID, id string) *checkpoint.Snapshot {
	t.Helper()
	s, err := c.Get(context.Background(), threadID, id)
	if err != nil {
		t.Fatalf("Get %s/%s: %v", threadID, id, err)
	}
	return s
}

func historyIDs(t *testing.T, c checkpoint.Checkpointer, threadID string, opts checkpoint.ListOptions) []string {
	t.Helper()
	h, err := c.History(context.Background(), threadID, opts)
	if err != nil {
		t.Fatalf("History %s %+v: %v", threadID, opts, err)
	}
	ids := make([]string, len(h))
	for i, cp := range h {
		ids[i] = cp.ID
		if cp.ThreadID != threadID {
			t.Errorf("History %s: checkpoint %s has thread %q", threadID, cp.ID, cp.ThreadID)
		}
	}
	return ids
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func testPutLatestGet(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	th := newThread("t1")
	first := th.put(t, c, change{field: "name", full: "ada"}, change{field: "count", full: 1}, change{field: "obj", full: map[string]any{"k": []any{1, "x"}}})
	th.put(t, c, change{field: "count", full: 2})

	// Every stored attribute of a checkpoint reads back.
	full := checkpoint.Checkpoint{
		ThreadID:   "t1",
		ID:         cpID(9, 99),
		ParentID:   th.last,
		Step:       9,
		Next:       []checkpoint.Task{{ID: "search#1", Node: "search", Item: map[string]any{"q": "x"}, HasItem: true}, {ID: "b", Node: "b"}},
		Interrupts: []checkpoint.Interrupt{{ID: "i1", Node: "ask", TaskID: "ask", Field: "answer", Payload: map[string]any{"form": "f"}, When: "during"}},
		GraphName:  "graph-x",
		GraphHash:  "sha256:abc",
		Versions:   maps(th.versions),
		Source:     "update",
		Writers:    []string{"a", "b"},
		Metadata:   map[string]any{"user": "u1", "n": float64(3)},
		CreatedAt:  epoch.Add(time.Hour),
	}
	if err := c.Put(ctx, full, nil); err != nil {
		t.Fatalf("Put without blobs: %v", err)
	}
	latest, err := c.Latest(ctx, "t1")
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	got := latest.Checkpoint
	if !got.CreatedAt.Equal(full.CreatedAt) {
		t.Errorf("CreatedAt = %v, want %v", got.CreatedAt, full.CreatedAt)
	}
	got.CreatedAt = full.CreatedAt
	if !reflect.DeepEqual(normalize(t, got), normalize(t, full)) {
		t.Errorf("Latest checkpoint =\n%+v\nwant\n%+v", got, full)
	}
	assertValues(t, "Latest", latest.Values, th.values)

	old := mustGet(t, c, "t1", first.ID)
	if old.ID != first.ID || old.Step != 0 {
		t.Errorf("Get first: id %s step %d", old.ID, old.Step)
	}
	assertValues(t, "Get first", old.Values, th.at[first.ID])

	// Overwriting a checkpoint with the same id replaces it.
	full.Source = "resume"
	if err := c.Put(ctx, full, nil); err != nil {
		t.Fatalf("Put again: %v", err)
	}
	if s := mustGet(t, c, "t1", full.ID); s.Source != "resume" {
		t.Errorf("after overwrite Source = %q, want resume", s.Source)
	}
}

// normalize round-trips a checkpoint through JSON so that Go-typed and
// decoded values compare equal.
func normalize(t *testing.T, cp checkpoint.Checkpoint) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, cp), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func testInvalidPut(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	th := newThread("t")
	th.put(t, c, change{field: "a", full: 1}, change{field: "list", append: []any{1}})
	base := func() checkpoint.Checkpoint {
		return checkpoint.Checkpoint{ThreadID: "t", ID: cpID(5, 0), Step: 5, GraphName: "g", Versions: maps(th.versions), CreatedAt: epoch}
	}
	tests := []struct {
		name  string
		cp    func() checkpoint.Checkpoint
		blobs []checkpoint.Blob
	}{
		{"empty thread id", func() checkpoint.Checkpoint { cp := base(); cp.ThreadID = ""; return cp }, nil},
		{"empty checkpoint id", func() checkpoint.Checkpoint { cp := base(); cp.ID = ""; return cp }, nil},
		{"version without blob", func() checkpoint.Checkpoint {
			cp := base()
			cp.Versions["a"] = 7
			return cp
		}, nil},
		{"field without any blob", func() checkpoint.Checkpoint {
			cp := base()
			cp.Versions["ghost"] = 1
			return cp
		}, nil},
		{"blob version not in checkpoint", base, []checkpoint.Blob{{Field: "a", Version: 9, Data: json.RawMessage(`1`)}}},
		{"delta on missing base", func() checkpoint.Checkpoint {
			cp := base()
			cp.Versions["list"] = 5
			return cp
		}, []checkpoint.Blob{{Field: "list", Version: 5, Base: 4, Data: json.RawMessage(`[2]`)}}},
		{"delta not an array", func() checkpoint.Checkpoint {
			cp := base()
			cp.Versions["list"] = 2
			return cp
		}, []checkpoint.Blob{{Field: "list", Version: 2, Base: 1, Data: json.RawMessage(`2`)}}},
		{"invalid JSON", func() checkpoint.Checkpoint {
			cp := base()
			cp.Versions["a"] = 2
			return cp
		}, []checkpoint.Blob{{Field: "a", Version: 2, Data: json.RawMessage(`{`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := tt.cp()
			if err := c.Put(ctx, cp, tt.blobs); err == nil {
				t.Fatalf("Put accepted an invalid checkpoint")
			}
			// Nothing of a rejected Put is visible.
			if cp.ThreadID != "" && cp.ID != "" {
				if _, err := c.Get(ctx, cp.ThreadID, cp.ID); !errors.Is(err, checkpoint.ErrNotFound) {
					t.Errorf("Get after rejected Put: err = %v, want ErrNotFound", err)
				}
			}
		})
	}
	latest, err := c.Latest(ctx, "t")
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	assertValues(t, "Latest after rejected puts", latest.Values, th.values)
}

func testNotFound(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	th := newThread("exists")
	th.put(t, c, change{field: "a", full: 1})
	tests := []struct {
		name string
		call func() error
	}{
		{"Latest unknown thread", func() error { _, err := c.Latest(ctx, "nope"); return err }},
		{"Get unknown thread", func() error { _, err := c.Get(ctx, "nope", th.last); return err }},
		{"Get unknown checkpoint", func() error { _, err := c.Get(ctx, "exists", cpID(42, 0)); return err }},
		{"Fork unknown checkpoint", func() error { _, err := c.Fork(ctx, "exists", cpID(42, 0), "new"); return err }},
		{"PutWrites unknown checkpoint", func() error {
			return c.PutWrites(ctx, "exists", cpID(42, 0), checkpoint.PendingWrite{TaskID: "a", Node: "a", Kind: "update", Update: json.RawMessage(`{}`)})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("err = %v, want ErrNotFound", err)
			}
		})
	}
	h, err := c.History(ctx, "nope", checkpoint.ListOptions{})
	if err != nil || len(h) != 0 {
		t.Errorf("History of unknown thread = %v, %v; want empty, nil", h, err)
	}
}

func testHistory(t *testing.T, c checkpoint.Checkpointer) {
	th := newThread("h")
	for i := range 10 {
		th.put(t, c, change{field: "i", full: i})
	}
	other := newThread("h2") // a thread whose id extends "h" must not leak in
	other.put(t, c, change{field: "i", full: -1})
	all := reversed(th.ids)
	tests := []struct {
		name string
		opts checkpoint.ListOptions
		want []string
	}{
		{"all newest first", checkpoint.ListOptions{}, all},
		{"limit", checkpoint.ListOptions{Limit: 3}, all[:3]},
		{"before", checkpoint.ListOptions{Before: th.ids[5]}, all[5:]},
		{"before with limit", checkpoint.ListOptions{Before: th.ids[5], Limit: 2}, all[5:7]},
		{"before oldest", checkpoint.ListOptions{Before: th.ids[0]}, []string{}},
		{"limit above count", checkpoint.ListOptions{Limit: 50}, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := historyIDs(t, c, "h", tt.opts)
			if !slices.Equal(got, tt.want) {
				t.Errorf("History(%+v) = %v, want %v", tt.opts, got, tt.want)
			}
		})
	}
	// Paging through with Before visits every checkpoint once.
	var paged []string
	before := ""
	for {
		page := historyIDs(t, c, "h", checkpoint.ListOptions{Before: before, Limit: 4})
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		before = page[len(page)-1]
		if len(paged) > 20 {
			t.Fatal("paging does not terminate")
		}
	}
	if !slices.Equal(paged, all) {
		t.Errorf("paged history = %v, want %v", paged, all)
	}
}

func testUnchangedFields(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	th := newThread("u")
	th.put(t, c, change{field: "a", full: "a1"}, change{field: "b", full: "b1"})
	th.put(t, c, change{field: "a", full: "a2"})
	th.put(t, c, change{field: "b", full: "b2"})
	// A checkpoint may point back at older versions, as a state update that
	// restores an earlier value does.
	cp := checkpoint.Checkpoint{ThreadID: "u", ID: cpID(10, 0), Step: 10, GraphName: "g",
		Versions: map[string]int64{"a": 1, "b": 2}, Source: "update", CreatedAt: epoch.Add(time.Minute)}
	if err := c.Put(ctx, cp, nil); err != nil {
		t.Fatalf("Put reusing versions: %v", err)
	}
	s := mustGet(t, c, "u", cp.ID)
	assertValues(t, "reused versions", s.Values, map[string]json.RawMessage{"a": json.RawMessage(`"a1"`), "b": json.RawMessage(`"b2"`)})
	if !reflect.DeepEqual(s.Versions, cp.Versions) {
		t.Errorf("Versions = %v, want %v", s.Versions, cp.Versions)
	}
	for _, id := range th.ids {
		assertValues(t, "Get "+id, mustGet(t, c, "u", id).Values, th.at[id])
	}
}

func testDeltaChains(t *testing.T, c checkpoint.Checkpointer) {
	tests := []struct {
		name  string
		steps int
		// rewriteEvery > 0 writes a full value every n steps.
		rewriteEvery int
		perStep      int
	}{
		{"500 single appends", 500, 0, 1},
		{"appends mixed with rewrites", 300, 37, 2},
		{"empty appends", 20, 0, 0},
		{"rewrite every step", 10, 1, 3},
	}
	for ti, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newThread(fmt.Sprintf("delta-%d", ti))
			th.put(t, c, change{field: "msgs", full: []any{}}, change{field: "n", full: 0})
			for i := 1; i <= tt.steps; i++ {
				items := make([]any, tt.perStep)
				for j := range items {
					items[j] = map[string]any{"i": i, "j": j, "text": fmt.Sprintf("message %d.%d", i, j)}
				}
				ch := change{field: "msgs", append: items}
				if tt.rewriteEvery > 0 && i%tt.rewriteEvery == 0 {
					ch = change{field: "msgs", full: append([]any{fmt.Sprintf("rewrite %d", i)}, items...)}
				}
				th.put(t, c, ch, change{field: "n", full: i})
			}
			latest, err := c.Latest(context.Background(), th.id)
			if err != nil {
				t.Fatalf("Latest: %v", err)
			}
			if latest.ID != th.last {
				t.Errorf("Latest id = %s, want %s", latest.ID, th.last)
			}
			assertValues(t, "Latest", latest.Values, th.values)
			for _, k := range []int{0, 1, len(th.ids) / 3, len(th.ids) / 2, len(th.ids) - 2} {
				id := th.ids[k]
				assertValues(t, "Get "+id, mustGet(t, c, th.id, id).Values, th.at[id])
			}
		})
	}
}

func testPendingWrites(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	th := newThread("p")
	cp1 := th.put(t, c, change{field: "a", full: 1})
	cp2 := th.put(t, c, change{field: "a", full: 2})
	cp3 := th.put(t, c, change{field: "a", full: 3})
	other := newThread("p-other")
	ocp := other.put(t, c, change{field: "a", full: 1})
	writes := []struct {
		thread, cp string
		w          checkpoint.PendingWrite
	}{
		{"p", cp1.ID, checkpoint.PendingWrite{TaskID: "b", Node: "b", Kind: "update", Update: json.RawMessage(`{"x":1}`)}},
		{"p", cp1.ID, checkpoint.PendingWrite{TaskID: "a#0", Node: "a", Kind: "interrupt", Update: json.RawMessage(`{"form":"f"}`)}},
		{"p", cp2.ID, checkpoint.PendingWrite{TaskID: "c", Node: "c", Kind: "error", Update: json.RawMessage(`{"error":"boom"}`)}},
		{"p-other", ocp.ID, checkpoint.PendingWrite{TaskID: "z", Node: "z", Kind: "update", Update: json.RawMessage(`{}`)}},
		// A task's second write replaces its first.
		{"p", cp1.ID, checkpoint.PendingWrite{TaskID: "b", Node: "b", Kind: "update", Update: json.RawMessage(`{"x":2}`)}},
	}
	for _, w := range writes {
		if err := c.PutWrites(ctx, w.thread, w.cp, w.w); err != nil {
			t.Fatalf("PutWrites %s/%s %s: %v", w.thread, w.cp, w.w.TaskID, err)
		}
	}
	tests := []struct {
		thread, cp string
		want       map[string]checkpoint.PendingWrite
	}{
		{"p", cp1.ID, map[string]checkpoint.PendingWrite{"a#0": writes[1].w, "b": writes[4].w}},
		{"p", cp2.ID, map[string]checkpoint.PendingWrite{"c": writes[2].w}},
		{"p", cp3.ID, map[string]checkpoint.PendingWrite{}},
		{"p-other", ocp.ID, map[string]checkpoint.PendingWrite{"z": writes[3].w}},
	}
	for _, tt := range tests {
		t.Run(tt.thread+"/"+tt.cp, func(t *testing.T) {
			s := mustGet(t, c, tt.thread, tt.cp)
			if len(s.Pending) != len(tt.want) {
				t.Fatalf("Pending = %+v, want %d writes", s.Pending, len(tt.want))
			}
			for _, p := range s.Pending {
				w, ok := tt.want[p.TaskID]
				if !ok {
					t.Errorf("unexpected pending write of task %q", p.TaskID)
					continue
				}
				if p.Node != w.Node || p.Kind != w.Kind || !jsonEqual(p.Update, w.Update) {
					t.Errorf("pending %q = %+v (update %s), want %+v (update %s)", p.TaskID, p, p.Update, w, w.Update)
				}
			}
		})
	}
	latest, err := c.Latest(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(latest.Pending) != 0 {
		t.Errorf("Latest (cp3) Pending = %+v, want none", latest.Pending)
	}

	// A child checkpoint has applied its parent's writes: putting it discards
	// them, and leaves the writes of other checkpoints alone.
	if err := c.PutWrites(ctx, "p", cp3.ID, checkpoint.PendingWrite{TaskID: "d", Node: "d", Kind: "update", Update: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, c, "p", cp3.ID).Pending; len(got) != 1 {
		t.Fatalf("cp3 Pending before its child = %+v, want 1 write", got)
	}
	th.put(t, c, change{field: "a", full: 4})
	if got := mustGet(t, c, "p", cp3.ID).Pending; len(got) != 0 {
		t.Errorf("cp3 Pending after its child was put = %+v, want none", got)
	}
	if got := mustGet(t, c, "p", cp1.ID).Pending; len(got) != 2 {
		t.Errorf("cp1 Pending after an unrelated put = %+v, want its 2 writes", got)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func testFork(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	th := newThread("src")
	th.put(t, c, change{field: "msgs", append: []any{"m0"}}, change{field: "s", full: "a"})
	for i := 1; i < 6; i++ {
		th.put(t, c, change{field: "msgs", append: []any{fmt.Sprintf("m%d", i)}})
	}
	at := th.ids[3]
	forked, err := c.Fork(ctx, "src", at, "dst")
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if forked.ThreadID != "dst" || forked.ID == "" || forked.Source != "fork" {
		t.Errorf("forked checkpoint = %+v, want thread dst, an id, source fork", forked)
	}
	src := mustGet(t, c, "src", at)
	if forked.Step != src.Step {
		t.Errorf("forked step = %d, want %d", forked.Step, src.Step)
	}
	dst, err := c.Latest(ctx, "dst")
	if err != nil {
		t.Fatalf("Latest of fork: %v", err)
	}
	if dst.ID != forked.ID {
		t.Errorf("Latest of fork = %s, want %s", dst.ID, forked.ID)
	}
	assertValues(t, "fork", dst.Values, th.at[at])

	// The fork continues on its own: its appends and the source's do not mix.
	fth := newThread("dst")
	fth.versions = maps(dst.Versions)
	fth.values = maps(th.at[at])
	fth.step = dst.Step + 1
	fth.last = dst.ID
	fth.put(t, c, change{field: "msgs", append: []any{"fork-only"}}, change{field: "s", full: "forked"})
	th.put(t, c, change{field: "msgs", append: []any{"source-only"}})

	srcLatest, err := c.Latest(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	assertValues(t, "source after fork", srcLatest.Values, th.values)
	dstLatest, err := c.Latest(ctx, "dst")
	if err != nil {
		t.Fatal(err)
	}
	assertValues(t, "fork after writes", dstLatest.Values, fth.values)

	// Deleting the source leaves the fork whole.
	if err := c.DeleteThread(ctx, "src"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	dstLatest, err = c.Latest(ctx, "dst")
	if err != nil {
		t.Fatalf("Latest of fork after deleting source: %v", err)
	}
	assertValues(t, "fork after source deleted", dstLatest.Values, fth.values)
	if got := historyIDs(t, c, "dst", checkpoint.ListOptions{}); len(got) != 2 {
		t.Errorf("fork history = %v, want 2 checkpoints", got)
	}

	// Forking onto an existing thread is refused.
	other := newThread("taken")
	other.put(t, c, change{field: "a", full: 1})
	if _, err := c.Fork(ctx, "dst", dst.ID, "taken"); err == nil {
		t.Error("Fork onto an existing thread succeeded")
	}
}

func testDeleteThread(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	a := newThread("del")
	b := newThread("del2")
	for i := range 5 {
		cp := a.put(t, c, change{field: "msgs", append: []any{i}}, change{field: "x", full: i})
		b.put(t, c, change{field: "msgs", append: []any{-i}})
		if err := c.PutWrites(ctx, "del", cp.ID, checkpoint.PendingWrite{TaskID: "t", Node: "t", Kind: "update", Update: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteThread(ctx, "del"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	if _, err := c.Latest(ctx, "del"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Latest after delete: err = %v, want ErrNotFound", err)
	}
	for _, id := range a.ids {
		if _, err := c.Get(ctx, "del", id); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("Get %s after delete: err = %v, want ErrNotFound", id, err)
		}
	}
	if got := historyIDs(t, c, "del", checkpoint.ListOptions{}); len(got) != 0 {
		t.Errorf("History after delete = %v", got)
	}
	threads, err := c.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range threads {
		if ti.ThreadID == "del" {
			t.Errorf("Threads still lists the deleted thread")
		}
	}
	latest, err := c.Latest(ctx, "del2")
	if err != nil {
		t.Fatalf("other thread after delete: %v", err)
	}
	assertValues(t, "other thread", latest.Values, b.values)
	// Deleting again, or a thread that never existed, is not an error.
	if err := c.DeleteThread(ctx, "del"); err != nil {
		t.Errorf("second DeleteThread: %v", err)
	}
	// The id can be reused from scratch.
	fresh := newThread("del")
	fresh.put(t, c, change{field: "msgs", append: []any{"new"}})
	latest, err = c.Latest(ctx, "del")
	if err != nil {
		t.Fatal(err)
	}
	assertValues(t, "reused thread id", latest.Values, fresh.values)
}

func testPrune(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	tests := []struct {
		name  string
		total int
		keep  int
	}{
		{"keep 5 of 40", 40, 5},
		{"keep 1", 12, 1},
		{"keep more than exist", 4, 10},
	}
	for ti, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newThread(fmt.Sprintf("prune-%d", ti))
			th.put(t, c, change{field: "msgs", full: []any{"start"}}, change{field: "rare", full: "r0"}, change{field: "n", full: 0})
			for i := 1; i < tt.total; i++ {
				chs := []change{{field: "msgs", append: []any{fmt.Sprintf("m%d", i)}}, {field: "n", full: i}}
				if i%7 == 0 {
					chs = append(chs, change{field: "rare", full: fmt.Sprintf("r%d", i)})
				}
				cp := th.put(t, c, chs...)
				if err := c.PutWrites(ctx, th.id, cp.ID, checkpoint.PendingWrite{TaskID: "w", Node: "w", Kind: "update", Update: json.RawMessage(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Prune(ctx, th.id, tt.keep); err != nil {
				t.Fatalf("Prune: %v", err)
			}
			kept := th.ids
			if tt.keep < len(kept) {
				kept = kept[len(kept)-tt.keep:]
			}
			if got := historyIDs(t, c, th.id, checkpoint.ListOptions{}); !slices.Equal(got, reversed(kept)) {
				t.Errorf("History after prune = %v, want %v", got, reversed(kept))
			}
			for _, id := range kept {
				s := mustGet(t, c, th.id, id)
				assertValues(t, "kept "+id, s.Values, th.at[id])
				// Each checkpoint's writes were discarded when its child was put;
				// only the newest keeps its write.
				wantPending := 0
				if id == th.ids[len(th.ids)-1] {
					wantPending = 1
				}
				if len(s.Pending) != wantPending {
					t.Errorf("kept %s has %d pending writes, want %d", id, len(s.Pending), wantPending)
				}
			}
			for _, id := range th.ids[:len(th.ids)-len(kept)] {
				if _, err := c.Get(ctx, th.id, id); !errors.Is(err, checkpoint.ErrNotFound) {
					t.Errorf("pruned %s: err = %v, want ErrNotFound", id, err)
				}
			}
			// Pruning again changes nothing, and the thread grows on.
			if err := c.Prune(ctx, th.id, tt.keep); err != nil {
				t.Fatalf("second Prune: %v", err)
			}
			th.put(t, c, change{field: "msgs", append: []any{"after prune"}})
			latest, err := c.Latest(ctx, th.id)
			if err != nil {
				t.Fatal(err)
			}
			assertValues(t, "after prune and append", latest.Values, th.values)
		})
	}
	if err := c.Prune(ctx, "prune-0", 0); err == nil {
		t.Error("Prune with keep 0 succeeded; want an error")
	}
	if err := c.Prune(ctx, "never-existed", 3); err != nil {
		t.Errorf("Prune of unknown thread: %v", err)
	}
}

func testThreads(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	names := []string{"alpha", "beta", "gamma"}
	for _, n := range names {
		th := newThread(n)
		th.put(t, c, change{field: "a", full: n})
	}
	// beta gets a later checkpoint, so it is the most recently updated.
	cp := checkpoint.Checkpoint{ThreadID: "beta", ID: cpID(1, 0), ParentID: cpID(0, 0), Step: 1, GraphName: "g2",
		Versions: map[string]int64{"a": 1}, Source: "loop", CreatedAt: epoch.Add(time.Hour)}
	if err := c.Put(ctx, cp, nil); err != nil {
		t.Fatal(err)
	}
	got, err := c.Threads(ctx)
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	if len(got) != 3 {
		t.Fatalf("Threads = %+v, want 3", got)
	}
	if got[0].ThreadID != "beta" || got[0].Latest != cp.ID || got[0].Step != 1 || got[0].GraphName != "g2" || !got[0].UpdatedAt.Equal(cp.CreatedAt) {
		t.Errorf("first thread = %+v, want beta at %s step 1 graph g2 updated %v", got[0], cp.ID, cp.CreatedAt)
	}
	seen := map[string]bool{}
	for i, ti := range got {
		seen[ti.ThreadID] = true
		if i > 0 && ti.UpdatedAt.After(got[i-1].UpdatedAt) {
			t.Errorf("Threads not ordered by UpdatedAt: %+v", got)
		}
	}
	for _, n := range names {
		if !seen[n] {
			t.Errorf("Threads misses %q", n)
		}
	}
}

func testConcurrent(t *testing.T, c checkpoint.Checkpointer) {
	const workers, puts = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			id := fmt.Sprintf("conc-%d", w)
			for i := 1; i <= puts; i++ {
				blobs := []checkpoint.Blob{{Field: "msgs", Version: int64(i), Data: json.RawMessage(fmt.Sprintf(`[%d]`, i))}}
				if i > 1 {
					blobs[0].Base = int64(i - 1)
				}
				cp := checkpoint.Checkpoint{ThreadID: id, ID: cpID(i, 0), Step: i, GraphName: "g",
					Versions: map[string]int64{"msgs": int64(i)}, CreatedAt: epoch.Add(time.Duration(i) * time.Second)}
				if err := c.Put(ctx, cp, blobs); err != nil {
					errs <- fmt.Errorf("thread %s put %d: %w", id, i, err)
					return
				}
				if _, err := c.Latest(ctx, id); err != nil {
					errs <- fmt.Errorf("thread %s latest %d: %w", id, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := make([]int, puts)
	for i := range want {
		want[i] = i + 1
	}
	for w := range workers {
		id := fmt.Sprintf("conc-%d", w)
		s, err := c.Latest(context.Background(), id)
		if err != nil {
			t.Fatalf("Latest %s: %v", id, err)
		}
		var got []int
		if err := json.Unmarshal(s.Values["msgs"], &got); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s msgs = %s (%v), want %v", id, s.Values["msgs"], err, want)
		}
		if h := historyIDs(t, c, id, checkpoint.ListOptions{}); len(h) != puts {
			t.Errorf("%s history has %d checkpoints, want %d", id, len(h), puts)
		}
	}
}

func testCancelled(t *testing.T, c checkpoint.Checkpointer) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	th := newThread("cancel")
	th.put(t, c, change{field: "a", full: 1})
	if _, err := c.Latest(ctx, "cancel"); !errors.Is(err, context.Canceled) {
		t.Errorf("Latest with cancelled context: err = %v, want context.Canceled", err)
	}
	cp := checkpoint.Checkpoint{ThreadID: "cancel", ID: cpID(1, 0), Step: 1, Versions: map[string]int64{"a": 1}, CreatedAt: epoch}
	if err := c.Put(ctx, cp, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with cancelled context: err = %v, want context.Canceled", err)
	}
}
