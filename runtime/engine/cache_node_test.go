package engine_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

var counterSeq atomic.Int64

// freshCounter is a counter name no other run of any test uses, so that
// repeated runs (-count) start from zero.
func freshCounter(t *testing.T) string {
	return fmt.Sprintf("%s_%d", uniq(t), counterSeq.Add(1))
}

// fakeClock is a store clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// A node with cache: {key, ttl} runs once per key: an equal key returns the
// stored update without running the node (a cache_hit event says so), a
// different key runs it, and after the TTL the same key runs it again.
func TestNodeCacheHitMissAndTTL(t *testing.T) {
	counter := freshCounter(t)
	g := compileGraph(t, `
state: {
	question: {type: "string"}
	answer: {type: "string"}
	runs: {type: "int"}
}
start: "answer"
nodes: answer: {
	type: "enginetest"
	config: {counter: "`+counter+`", exprs: {answer: "'answer to ' + question", runs: "runs + 1"}}
	cache: {key: "lower(question)", ttl: "10m"}
	next: "END"
}`)
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	db, err := badger.Open("", badger.Options{InMemory: true, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng := engine.New(g, memory.New(), engine.Options{Store: db.Store()})
	t.Cleanup(func() { eng.Close() })

	steps := []struct {
		name     string
		question string
		advance  time.Duration
		wantRuns int  // node executions so far
		wantHit  bool // a cache_hit event
	}{
		{"first run misses", "Why?", 0, 1, false},
		{"equal key hits", "WHY?", 0, 1, true},
		{"different key misses", "How?", 0, 2, false},
		{"still fresh just before the ttl", "why?", 9 * time.Minute, 2, true},
		{"expired after the ttl", "why?", 2 * time.Minute, 3, false},
		{"stored again after expiry", "Why?", 0, 3, true},
	}
	for i, s := range steps {
		clock.advance(s.advance)
		res, rec := run(t, eng, engine.Request{ThreadID: uniq(t) + s.name, Input: map[string]any{"question": s.question}})
		if res.Err != nil {
			t.Fatalf("step %d (%s): %v", i, s.name, res.Err)
		}
		if got := count(counter); got != s.wantRuns {
			t.Errorf("step %d (%s): node ran %d times in all, want %d", i, s.name, got, s.wantRuns)
		}
		if hit := slices.Contains(rec.types(), engine.CacheHit); hit != s.wantHit {
			t.Errorf("step %d (%s): cache_hit event = %v, want %v (events %v)", i, s.name, hit, s.wantHit, rec.types())
		}
		// A hit applies the stored update: the answer of the question that stored it.
		if res.State["answer"] == nil || res.State["runs"] != 1 {
			t.Errorf("step %d (%s): state = %v, want the stored answer and runs 1", i, s.name, res.State)
		}
	}
}

// Without a store the cache is off and the node always runs.
func TestNodeCacheWithoutStoreRunsNode(t *testing.T) {
	counter := freshCounter(t)
	g := compileGraph(t, `
state: q: {type: "string"}
start: "a"
nodes: a: {type: "enginetest", config: counter: "`+counter+`", cache: key: "q", next: "END"}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	for i := range 2 {
		res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"q": "x"}})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if got := count(counter); got != i+1 {
			t.Errorf("run %d: node ran %d times, want %d", i+1, got, i+1)
		}
	}
}

// A map target's key can use the item: each distinct item runs the node once,
// and a repeated item is served from the cache.
func TestNodeCacheKeyOverMapItem(t *testing.T) {
	counter := freshCounter(t)
	g := compileGraph(t, `
state: {
	items: {type: "list<string>"}
	out: {type: "list<string>", reducer: "append"}
}
start: "fan"
nodes: {
	fan: {type: "enginetest", map: {over: "items", to: "work", as: "it"}}
	work: {type: "enginetest", config: {counter: "`+counter+`", exprs: out: "[upper(it)]"}, cache: key: "it", next: "END"}
}`)
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng := engine.New(g, memory.New(), engine.Options{Store: db.Store(), MaxConcurrency: 1})
	t.Cleanup(func() { eng.Close() })
	res, _ := run(t, eng, engine.Request{ThreadID: "a", Input: map[string]any{"items": []any{"x", "y"}}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	res, rec := run(t, eng, engine.Request{ThreadID: "b", Input: map[string]any{"items": []any{"y", "z", "x"}}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := count(counter); got != 3 {
		t.Errorf("node ran %d times for items x, y, then y, z, x; want 3 (x, y, z once each)", got)
	}
	hits := 0
	for _, typ := range rec.types() {
		if typ == engine.CacheHit {
			hits++
		}
	}
	if hits != 2 {
		t.Errorf("second run: %d cache hits, want 2 (y and x)", hits)
	}
	if got := fmt.Sprint(res.State["out"]); got != "[Y Z X]" {
		t.Errorf("out = %s, want [Y Z X] (item order, hits included)", got)
	}
}

// A failed run stores nothing: the next run with the same key runs the node.
func TestNodeCacheFailureIsNotStored(t *testing.T) {
	counter := freshCounter(t)
	g := compileGraph(t, `
state: {q: {type: "string"}, a: {type: "string"}}
start: "a"
nodes: a: {type: "enginetest", config: {counter: "`+counter+`", fail_times: 1, exprs: a: "q"}, cache: key: "q", next: "END"}`)
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng := engine.New(g, memory.New(), engine.Options{Store: db.Store()})
	t.Cleanup(func() { eng.Close() })
	if res, _ := run(t, eng, engine.Request{ThreadID: "a", Input: map[string]any{"q": "x"}}); res.Err == nil {
		t.Fatal("first run succeeded, want the scripted failure")
	}
	res, rec := run(t, eng, engine.Request{ThreadID: "b", Input: map[string]any{"q": "x"}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if count(counter) != 2 || slices.Contains(rec.types(), engine.CacheHit) {
		t.Errorf("after a failure: runs = %d, events %v; want a second run and no cache hit", count(counter), rec.types())
	}
}

// A stored update belongs to the node's type and config: after the node's
// config changes, an equal key runs the node again rather than reusing an
// update the old config made.
func TestNodeCacheConfigChangeMisses(t *testing.T) {
	counter := freshCounter(t)
	graphWith := func(prefix string) string {
		return `
state: {q: {type: "string"}, a: {type: "string"}}
start: "a"
nodes: a: {type: "enginetest", config: {counter: "` + counter + `", exprs: a: "'` + prefix + `' + q"}, cache: key: "q", next: "END"}`
	}
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for i, tc := range []struct {
		prefix, want string
		runs         int
	}{
		{"old ", "old x", 1},
		{"old ", "old x", 1},
		{"new ", "new x", 2},
	} {
		eng := engine.New(compileGraph(t, graphWith(tc.prefix)), memory.New(), engine.Options{Store: db.Store()})
		res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"q": "x"}})
		eng.Close()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if res.State["a"] != tc.want || count(counter) != tc.runs {
			t.Errorf("run %d: a = %v after %d node runs, want %q after %d", i+1, res.State["a"], count(counter), tc.want, tc.runs)
		}
	}
}
