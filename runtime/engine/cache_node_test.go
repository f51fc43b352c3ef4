package engine_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

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
	counter := uniq(t)
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
	counter := uniq(t)
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
