package engine_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
)

// forEachBackend runs test with each checkpointer: in memory, Badger and,
// when $GRAPHCTL_TEST_POSTGRES names a database, PostgreSQL (a schema of
// its own per checkpointer, dropped after). open returns a new one.
func forEachBackend(t *testing.T, test func(t *testing.T, open func() checkpoint.Checkpointer)) {
	t.Run("memory", func(t *testing.T) {
		test(t, func() checkpoint.Checkpointer { return memory.New() })
	})
	t.Run("badger", func(t *testing.T) {
		test(t, func() checkpoint.Checkpointer {
			db, err := badger.Open(t.TempDir(), badger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db.Checkpointer()
		})
	})
	if os.Getenv(pgtest.Env) == "" {
		return
	}
	t.Run("postgres", func(t *testing.T) {
		test(t, func() checkpoint.Checkpointer { return pgtest.Open(t, postgres.Options{}).Checkpointer() })
	})
}

// askTwiceGraph is a parent whose subgraph node runs a child that prepares
// (counted), then asks two questions (fields a and b).
func askTwiceGraph(t *testing.T, persist bool) *compile.Graph {
	t.Helper()
	p := "false"
	if persist {
		p = "true"
	}
	return loadSubgraphs(t, map[string]string{
		"parent.cue": `
state: {
	topic:  {type: "string"}
	report: {type: "string"}
}
start: "pre"
nodes: {
	pre: {type: "enginetest", config: {counter: "` + uniq(t) + `-pre"}, next: "sub"}
	sub: {type: "subgraph", config: {graph: "child.cue", persist: ` + p + `, input: {topic: "topic"}, output: {report: "topic + ':' + a + ',' + b"}}, next: "END"}
}
`,
		"child.cue": `
state: {
	topic: {type: "string"}
	a:     {type: "string"}
	b:     {type: "string"}
}
start: "prepare"
nodes: {
	prepare: {type: "enginetest", config: {counter: "` + uniq(t) + `-prepare"}, next: "ask_a"}
	ask_a:   {type: "enginetest", config: {interrupt: "a"}, next: "ask_b"}
	ask_b:   {type: "enginetest", config: {interrupt: "b"}, next: "END"}
}
`,
	})
}

// parentCheckpoints finds, in the thread's history, the checkpoint before
// the subgraph node's step and those that wait for the child's answers a
// and b.
func parentCheckpoints(t *testing.T, cp checkpoint.Checkpointer, thread string) (before, waitA, waitB checkpoint.Checkpoint) {
	t.Helper()
	list, err := cp.History(context.Background(), thread, checkpoint.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list { // newest first: the oldest match wins
		switch {
		case len(c.Next) == 1 && c.Next[0].Node == "sub" && c.Next[0].Namespace == "" && len(c.Interrupts) == 0:
			before = c
		case len(c.Interrupts) == 1 && c.Interrupts[0].Field == "a":
			waitA = c
		case len(c.Interrupts) == 1 && c.Interrupts[0].Field == "b":
			waitB = c
		}
	}
	if before.ID == "" || waitA.ID == "" || waitB.ID == "" {
		t.Fatalf("history %+v lacks a checkpoint before the subgraph or waiting for a or b", list)
	}
	return before, waitA, waitB
}

// runAnswered runs the thread through both questions of a new turn.
func runAnswered(t *testing.T, eng *engine.Engine, thread string, answers ...string) *engine.Result {
	t.Helper()
	res, _ := run(t, eng, engine.Request{ThreadID: thread, Input: map[string]any{"topic": "bees"}})
	for _, a := range answers {
		if res.Status != engine.StatusInterrupted {
			t.Fatalf("status %s before answer %q: %v", res.Status, a, res.Err)
		}
		res, _ = run(t, eng, engine.Request{ThreadID: thread, Resume: &engine.Resume{Value: a}})
	}
	return res
}

func wantInterrupt(t *testing.T, res *engine.Result, field string) checkpoint.Interrupt {
	t.Helper()
	if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 || res.Interrupts[0].Field != field {
		t.Fatalf("status %s, interrupts %+v, want one for %s: %v", res.Status, res.Interrupts, field, res.Err)
	}
	return res.Interrupts[0]
}

func TestSubgraphReplayBeforeItsStepRunsTheChildAfresh(t *testing.T) {
	forEachBackend(t, testSubgraphReplayBeforeItsStepRunsTheChildAfresh)
}

func testSubgraphReplayBeforeItsStepRunsTheChildAfresh(t *testing.T, open func() checkpoint.Checkpointer) {
	for _, persist := range []bool{false, true} {
		t.Run(map[bool]string{false: "fresh", true: "persist"}[persist], func(t *testing.T) {
			g := askTwiceGraph(t, persist)
			cp := open()
			eng := engine.New(g, cp, engine.Options{})
			res := runAnswered(t, eng, "t", "x", "y")
			if res.Status != engine.StatusCompleted || res.State["report"] != "bees:x,y" {
				t.Fatalf("first run: %s %v %v", res.Status, res.State["report"], res.Err)
			}
			before, waitA, _ := parentCheckpoints(t, cp, "t")
			prepared := count(uniq(t) + "-prepare")

			res, _ = run(t, eng, engine.Request{ThreadID: "t", CheckpointID: before.ID})
			in := wantInterrupt(t, res, "a")
			if got := count(uniq(t) + "-prepare"); got != prepared+1 {
				t.Errorf("the child's first node ran %d more times on replay, want once", got-prepared)
			}
			if !persist && in.Namespace == waitA.Interrupts[0].Namespace {
				t.Errorf("the replay's child runs in the namespace %q of the earlier run", in.Namespace)
			}
			res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "p"}})
			wantInterrupt(t, res, "b")
			res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "q"}})
			if res.Status != engine.StatusCompleted || res.State["report"] != "bees:p,q" {
				t.Fatalf("the replay's answers: %s %v %v", res.Status, res.State["report"], res.Err)
			}
			if count(uniq(t)+"-pre") != 1 {
				t.Errorf("the node before the replayed checkpoint ran again")
			}
		})
	}
}

func TestSubgraphReplayWhileWaitingInTheChildResumesItsCheckpoint(t *testing.T) {
	forEachBackend(t, testSubgraphReplayWhileWaitingInTheChildResumesItsCheckpoint)
}

func testSubgraphReplayWhileWaitingInTheChildResumesItsCheckpoint(t *testing.T, open func() checkpoint.Checkpointer) {
	g := askTwiceGraph(t, false)
	cp := open()
	eng := engine.New(g, cp, engine.Options{})
	runAnswered(t, eng, "t", "x", "y")
	_, _, waitB := parentCheckpoints(t, cp, "t")
	orig := waitB.Interrupts[0]
	prepared := count(uniq(t) + "-prepare")

	// Replaying the checkpoint that waits for b waits for b again, in a
	// copy of the child as it was then, and becomes the thread's newest.
	res, _ := run(t, eng, engine.Request{ThreadID: "t", CheckpointID: waitB.ID})
	in := wantInterrupt(t, res, "b")
	if in.ID != orig.ID || in.Namespace == orig.Namespace || !strings.HasPrefix(in.Namespace, "sub:") {
		t.Errorf("interrupt %+v, want %s in a namespace other than %s", in, orig.ID, orig.Namespace)
	}
	latest, err := cp.Latest(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if latest.Source != checkpoint.SourceFork || latest.ParentID != waitB.ID || latest.Next[0].Namespace != in.Namespace {
		t.Errorf("newest checkpoint: source %s, parent %s, next %+v; want a fork of %s", latest.Source, latest.ParentID, latest.Next, waitB.ID)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "z"}})
	if res.Status != engine.StatusCompleted || res.State["report"] != "bees:x,z" {
		t.Fatalf("answer to the replay: %s %v %v", res.Status, res.State["report"], res.Err)
	}
	if got := count(uniq(t) + "-prepare"); got != prepared {
		t.Errorf("the child's first node ran %d more times, want none", got-prepared)
	}
	// The earlier branch's child keeps its own answers.
	if got := childState(t, cp, "t", orig.Namespace)["b"]; got != "y" {
		t.Errorf("the earlier child's b = %v, want y", got)
	}
}

func TestSubgraphForkWhileWaitingInTheChildCarriesItsCheckpoints(t *testing.T) {
	forEachBackend(t, testSubgraphForkWhileWaitingInTheChildCarriesItsCheckpoints)
}

func testSubgraphForkWhileWaitingInTheChildCarriesItsCheckpoints(t *testing.T, open func() checkpoint.Checkpointer) {
	for _, tc := range []struct {
		name string
		fork func(t *testing.T, eng *engine.Engine, at string) *engine.Result
	}{
		{"update then resume", func(t *testing.T, eng *engine.Engine, at string) *engine.Result {
			if _, err := eng.UpdateStateAt(context.Background(), "t", at, "", map[string]any{"topic": "ants"}); err != nil {
				t.Fatal(err)
			}
			res, _ := run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "m"}})
			return res
		}},
		{"resume at the checkpoint", func(t *testing.T, eng *engine.Engine, at string) *engine.Result {
			res, _ := run(t, eng, engine.Request{ThreadID: "t", CheckpointID: at, Update: map[string]any{"topic": "ants"}, Resume: &engine.Resume{Value: "m"}})
			return res
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := askTwiceGraph(t, false)
			cp := open()
			eng := engine.New(g, cp, engine.Options{})
			runAnswered(t, eng, "t", "x", "y")
			_, waitA, _ := parentCheckpoints(t, cp, "t")
			prepared := count(uniq(t) + "-prepare")

			res := tc.fork(t, eng, waitA.ID)
			wantInterrupt(t, res, "b")
			res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "n"}})
			// The child goes on from a (answered m) with the topic it was
			// given; the update is the parent's.
			if res.Status != engine.StatusCompleted || res.State["report"] != "bees:m,n" || res.State["topic"] != "ants" {
				t.Fatalf("the fork: %s %v %v", res.Status, res.State["report"], res.Err)
			}
			if got := count(uniq(t) + "-prepare"); got != prepared {
				t.Errorf("the child's first node ran %d more times, want none", got-prepared)
			}
			orig := waitA.Interrupts[0].Namespace
			if st := childState(t, cp, "t", orig); st["a"] != "x" || st["b"] != "y" {
				t.Errorf("the earlier child's state %v, want its own answers x and y", st)
			}
		})
	}
}

// nestedSubgraphs are a parent graph whose subgraph runs a subgraph that
// waits twice, for a and then b, and reports them.
var nestedSubgraphs = map[string]string{
	"parent.cue": `
state: {report: {type: "string"}}
start: "outer"
nodes: outer: {type: "subgraph", config: {graph: "mid.cue", output: {report: "report"}}, next: "END"}
`,
	"mid.cue": `
state: {report: {type: "string"}}
start: "inner"
nodes: inner: {type: "subgraph", config: {graph: "leaf.cue", output: {report: "a + ',' + b"}}, next: "END"}
`,
	"leaf.cue": `
state: {
	a: {type: "string"}
	b: {type: "string"}
}
start: "ask_a"
nodes: {
	ask_a: {type: "enginetest", config: {interrupt: "a"}, next: "ask_b"}
	ask_b: {type: "enginetest", config: {interrupt: "b"}, next: "END"}
}
`,
}

func TestNestedSubgraphForkCarriesEveryLevel(t *testing.T) {
	forEachBackend(t, testNestedSubgraphForkCarriesEveryLevel)
}

func testNestedSubgraphForkCarriesEveryLevel(t *testing.T, open func() checkpoint.Checkpointer) {
	g := loadSubgraphs(t, nestedSubgraphs)
	cp := open()
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{}})
	wantInterrupt(t, res, "a")
	first, err := cp.Latest(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "x"}})
	wantInterrupt(t, res, "b")
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "y"}})
	if res.Status != engine.StatusCompleted || res.State["report"] != "x,y" {
		t.Fatalf("first run: %s %v %v", res.Status, res.State["report"], res.Err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", CheckpointID: first.ID, Resume: &engine.Resume{Value: "p"}})
	in := wantInterrupt(t, res, "b")
	if parts := strings.Split(in.Namespace, "|"); len(parts) != 2 || parts[0] == strings.Split(first.Interrupts[0].Namespace, "|")[0] {
		t.Errorf("interrupt namespace %q, want outer:<new id>|inner:<id>", in.Namespace)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "q"}})
	if res.Status != engine.StatusCompleted || res.State["report"] != "p,q" {
		t.Fatalf("the fork: %s %v %v", res.Status, res.State["report"], res.Err)
	}
}

func TestUpdateSubgraphStateWhileItWaits(t *testing.T) {
	forEachBackend(t, testUpdateSubgraphStateWhileItWaits)
}

func testUpdateSubgraphStateWhileItWaits(t *testing.T, open func() checkpoint.Checkpointer) {
	g := askTwiceGraph(t, false)
	cp := open()
	eng := engine.New(g, cp, engine.Options{})
	ctx := context.Background()
	res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"topic": "bees"}})
	ns := wantInterrupt(t, res, "a").Namespace

	// Values only: the child still waits for a, with the new topic.
	upd, err := eng.UpdateSubgraphState(ctx, "t", ns, "", [][]engine.StateUpdate{{{Values: map[string]any{"topic": "wasps"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if upd.ThreadID != checkpoint.ChildThreadID("t", ns) || upd.Source != checkpoint.SourceUpdate {
		t.Errorf("update wrote %s/%s (%s), want a checkpoint of the child", upd.ThreadID, upd.ID, upd.Source)
	}
	parent, err := cp.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if parent.Source != checkpoint.SourceUpdate || len(parent.Interrupts) != 1 || parent.Interrupts[0].Field != "a" || parent.Interrupts[0].Namespace != ns {
		t.Errorf("the parent's newest checkpoint %s: interrupts %+v", parent.Source, parent.Interrupts)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "m"}})
	wantInterrupt(t, res, "b")

	// As the node that asks: the child counts b as answered and goes on
	// when the parent runs on.
	if _, err := eng.UpdateSubgraphState(ctx, "t", ns, "", [][]engine.StateUpdate{{{Values: map[string]any{"b": "preset"}, AsNode: "ask_b"}}}); err != nil {
		t.Fatal(err)
	}
	if parent, err = cp.Latest(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if len(parent.Interrupts) != 0 || len(parent.Next) != 1 || parent.Next[0].Namespace != ns {
		t.Errorf("the parent after the child's question was answered: next %+v, interrupts %+v", parent.Next, parent.Interrupts)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t"})
	if res.Status != engine.StatusCompleted || res.State["report"] != "wasps:m,preset" {
		t.Fatalf("the parent run on: %s %v %v", res.Status, res.State["report"], res.Err)
	}

	for _, tc := range []struct {
		ns   string
		want string
	}{
		{ns, "no task waits"},
		{"pre:" + strings.Split(ns, ":")[1], `no subgraph node "pre"`},
		{"nope:1", `no subgraph node "nope"`},
	} {
		_, err := eng.UpdateSubgraphState(ctx, "t", tc.ns, "", [][]engine.StateUpdate{{{Values: map[string]any{"a": "late"}}}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("update at %q: %v, want %q", tc.ns, err, tc.want)
		}
	}
}

func TestUpdateNestedSubgraphState(t *testing.T) { forEachBackend(t, testUpdateNestedSubgraphState) }

func testUpdateNestedSubgraphState(t *testing.T, open func() checkpoint.Checkpointer) {
	g := loadSubgraphs(t, nestedSubgraphs)
	cp := open()
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{}})
	ns := wantInterrupt(t, res, "a").Namespace
	if _, err := eng.UpdateSubgraphState(context.Background(), "t", ns, "", [][]engine.StateUpdate{{{Values: map[string]any{"a": "x"}, AsNode: "ask_a"}}}); err != nil {
		t.Fatal(err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t"})
	if in := wantInterrupt(t, res, "b"); in.Namespace != ns {
		t.Errorf("b asked in %q, want %q", in.Namespace, ns)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "y"}})
	if res.Status != engine.StatusCompleted || res.State["report"] != "x,y" {
		t.Fatalf("after the update: %s %v %v", res.Status, res.State["report"], res.Err)
	}
}

// TestPersistedSubgraphReplayStartsFromItsStateThen replays a node whose
// child keeps its state across runs: the child starts from the state it had
// before the replayed checkpoint, not from the newer state of the branch
// replayed.
func TestPersistedSubgraphReplayStartsFromItsStateThen(t *testing.T) {
	forEachBackend(t, testPersistedSubgraphReplayStartsFromItsStateThen)
}

func testPersistedSubgraphReplayStartsFromItsStateThen(t *testing.T, open func() checkpoint.Checkpointer) {
	g := askTwiceGraph(t, true)
	cp := open()
	eng := engine.New(g, cp, engine.Options{})
	if res := runAnswered(t, eng, "t", "x", "y"); res.State["report"] != "bees:x,y" {
		t.Fatalf("first turn: %v %v", res.State["report"], res.Err)
	}
	first, _, _ := parentCheckpoints(t, cp, "t")
	if res := runAnswered(t, eng, "t", "u", "v"); res.State["report"] != "bees:u,v" {
		t.Fatalf("second turn: %v %v", res.State["report"], res.Err)
	}
	list, err := cp.History(context.Background(), "t", checkpoint.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var second string
	for _, c := range list {
		if second == "" && len(c.Next) == 1 && c.Next[0].Node == "sub" && c.Next[0].Namespace == "" && len(c.Interrupts) == 0 {
			second = c.ID // the newest: the second turn's
		}
	}
	for _, tc := range []struct {
		name, at, want string
	}{
		{"before the second turn's step: the first turn's state", second, "y"},
		{"before the first run of the node: no state", first.ID, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := run(t, eng, engine.Request{ThreadID: "t", CheckpointID: tc.at})
			wantInterrupt(t, res, "a")
			if got, _ := childState(t, cp, "t", "sub:sub")["b"].(string); got != tc.want {
				t.Errorf("the child's b when it asks again = %q, want %q", got, tc.want)
			}
			res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "p"}})
			wantInterrupt(t, res, "b")
			res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "q"}})
			if res.Status != engine.StatusCompleted || res.State["report"] != "bees:p,q" {
				t.Fatalf("the replay: %s %v %v", res.Status, res.State["report"], res.Err)
			}
		})
	}
}
