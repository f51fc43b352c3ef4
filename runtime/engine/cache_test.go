package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// countingCheckpointer counts full state reads (Latest) and head reads.
type countingCheckpointer struct {
	checkpoint.Checkpointer
	latest, heads atomic.Int64
}

func (c *countingCheckpointer) Latest(ctx context.Context, thread string) (*checkpoint.Snapshot, error) {
	c.latest.Add(1)
	return c.Checkpointer.Latest(ctx, thread)
}

func (c *countingCheckpointer) Head(ctx context.Context, thread string) (*checkpoint.Snapshot, error) {
	c.heads.Add(1)
	return c.Checkpointer.(checkpoint.HeadReader).Head(ctx, thread)
}

const chatGraph = `
state: {
	messages: {type: "messages"}
	turns: {type: "int", reducer: "add"}
	log: {type: "list<string>", reducer: "append"}
}
start: "reply"
nodes: reply: {type: "enginetest", config: exprs: {
	messages: "[{role: 'assistant', content: 'reply to ' + messages[-1].content}]"
	turns: "1"
	log: "['turn ' + string(turns + 1)]"
}, next: "END"}`

func say(t *testing.T, eng *engine.Engine, thread, text string) *engine.Result {
	t.Helper()
	input, err := engine.TextInput(eng.Graph(), text)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := run(t, eng, engine.Request{ThreadID: thread, Input: input})
	if res.Err != nil {
		t.Fatalf("turn %q: %v", text, res.Err)
	}
	return res
}

// A thread's next run takes its state from the engine's cache: after the
// first turn, turns read only the thread's newest checkpoint (Head), never
// its values (Latest), and the state they build on is the stored one.
func TestThreadStateIsCachedBetweenRuns(t *testing.T) {
	g := compileGraph(t, chatGraph)
	cp := &countingCheckpointer{Checkpointer: memory.New()}
	eng := engine.New(g, cp, engine.Options{})
	for i := range 5 {
		say(t, eng, "c", fmt.Sprint("hello ", i))
	}
	if got := cp.latest.Load(); got != 1 {
		t.Errorf("5 turns read the thread's values %d times, want once (the first turn, on a new thread)", got)
	}
	if got := cp.heads.Load(); got != 4 {
		t.Errorf("5 turns read the thread's head %d times, want 4", got)
	}
	// What the cache served is what storage holds.
	fresh := engine.New(g, cp.Checkpointer, engine.Options{StateCache: -1})
	res := say(t, fresh, "c", "hello 5")
	if n := len(res.State["messages"].([]any)); n != 12 {
		t.Errorf("messages after 6 turns = %d, want 12", n)
	}
	if res.State["turns"] != 6 {
		t.Errorf("turns = %v, want 6", res.State["turns"])
	}
	if log := res.State["log"].([]any); len(log) != 6 || log[5] != "turn 6" {
		t.Errorf("log = %v", log)
	}
}

// Two engines sharing one database, as two server processes sharing
// PostgreSQL do: each sees the turns the other ran, because a cached state
// is used only while its checkpoint is the thread's newest.
func TestCachedStateFollowsOtherWriters(t *testing.T) {
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := compileGraph(t, chatGraph)
	a := engine.New(g, db.Checkpointer(), engine.Options{})
	b := engine.New(g, db.Checkpointer(), engine.Options{})
	var res *engine.Result
	for i := range 6 {
		eng := a
		if i%3 == 1 {
			eng = b
		}
		res = say(t, eng, "shared", fmt.Sprint("message ", i))
	}
	msgs := res.State["messages"].([]any)
	if len(msgs) != 12 {
		t.Fatalf("messages = %d, want 12: %v", len(msgs), msgs)
	}
	for i := range 6 {
		if got, want := msgs[2*i].(map[string]any)["content"], fmt.Sprint("message ", i); got != want {
			t.Errorf("message %d = %v, want %v", 2*i, got, want)
		}
	}
	if res.State["turns"] != 6 {
		t.Errorf("turns = %v, want 6", res.State["turns"])
	}

	// A state update and a rollback also move the thread on under the cache.
	if _, err := a.UpdateState(context.Background(), "shared", "", map[string]any{"turns": 10}); err != nil {
		t.Fatal(err)
	}
	res = say(t, a, "shared", "after update")
	if res.State["turns"] != 17 {
		t.Errorf("turns after an update of +10 and a turn = %v, want 17", res.State["turns"])
	}
	// Newest first: the turn's step, start and input checkpoints, the
	// update, the turn before.
	hist, err := db.Checkpointer().History(context.Background(), "shared", checkpoint.ListOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpointer().Rollback(context.Background(), "shared", hist[4].ID); err != nil {
		t.Fatal(err)
	}
	res = say(t, a, "shared", "after rollback")
	if res.State["turns"] != 7 {
		t.Errorf("turns after rolling back past the update and the turn = %v, want 7", res.State["turns"])
	}
	if n := len(res.State["messages"].([]any)); n != 14 {
		t.Errorf("messages after rollback and a turn = %d, want 14", n)
	}

	// A deleted thread starts afresh.
	if err := db.Checkpointer().DeleteThread(context.Background(), "shared"); err != nil {
		t.Fatal(err)
	}
	res = say(t, a, "shared", "new start")
	if n := len(res.State["messages"].([]any)); n != 2 || res.State["turns"] != 1 {
		t.Errorf("after deleting the thread: %d messages, turns %v; want 2 and 1", n, res.State["turns"])
	}
}

// A failed run leaves nothing cached: the next run reads the thread, and the
// writes its failed step applied before the failure are not in its state.
func TestFailedRunIsNotCached(t *testing.T) {
	g := compileGraph(t, `
state: {
	n: {type: "int", reducer: "add"}
	m: {type: "int"}
	fail: {type: "bool"}
}
start: "a"
nodes: {
	a: {type: "enginetest", next: ["b", "c"]}
	b: {type: "enginetest", config: write: n: 1, next: "END"}
	c: {type: "enginetest", config: exprs: m: "fail ? 'not a number' : 1", next: "END"}
}`)
	cp := &countingCheckpointer{Checkpointer: memory.New()}
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "f", Input: map[string]any{}})
	if res.Err != nil || res.State["n"] != 1 {
		t.Fatalf("first run: %v, n = %v", res.Err, res.State["n"])
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "f", Input: map[string]any{"fail": true}})
	if res.Err == nil {
		t.Fatal("second run did not fail")
	}
	before := cp.latest.Load()
	res, _ = run(t, eng, engine.Request{ThreadID: "f", Input: map[string]any{"fail": false}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if cp.latest.Load() != before+1 {
		t.Errorf("the run after a failed one did not read the thread from storage")
	}
	if res.State["n"] != 2 {
		t.Errorf("n = %v, want 2 (the failed step's write of b is not applied)", res.State["n"])
	}
}

// Lists handed to callers have no room to grow: a caller appending to its
// copy of the state gets a new list, which the thread's next turn (whose
// reducers grow the thread's lists in place) leaves alone.
func TestResultListsAreTheCallersOwn(t *testing.T) {
	g := compileGraph(t, chatGraph)
	eng := engine.New(g, memory.New(), engine.Options{})
	var mine []any
	for i := range 20 {
		res := say(t, eng, "own", fmt.Sprint("hello ", i))
		log := res.State["log"].([]any)
		mine = append(log, "mine")
		if len(log) != i+1 {
			t.Fatalf("turn %d: log has %d entries", i, len(log))
		}
	}
	res := say(t, eng, "own", "last")
	if mine[20] != "mine" {
		t.Errorf("the caller's list changed under it: %v", mine[20])
	}
	if log := res.State["log"].([]any); len(log) != 21 || log[20] != "turn 21" {
		t.Errorf("log = %v", log)
	}
}
