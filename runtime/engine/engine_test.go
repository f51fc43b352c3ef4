package engine_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
)

func eventOf(text string) event.Event {
	return event.Event{Type: event.Text, Payload: map[string]any{"content": text}}
}

const header = `dsl_version: "graphctl/v1"
name: "t"
`

func compileGraph(t testing.TB, src string) *compile.Graph {
	t.Helper()
	g, diags := runtime.LoadSource("test.cue", []byte(header+src))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	return g
}

// recorder collects events safely.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) sink(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.Type)
	}
	return out
}

func run(t *testing.T, eng *engine.Engine, req engine.Request) (*engine.Result, *recorder) {
	t.Helper()
	rec := &recorder{}
	res, err := eng.Run(context.Background(), req, rec.sink)
	if res == nil {
		t.Fatalf("run returned no result: %v", err)
	}
	return res, rec
}

func uniq(t *testing.T) string { return strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) }

func TestLinearRunAndEvents(t *testing.T) {
	g := compileGraph(t, `
state: {
	greeting: {type: "string"}
	n: {type: "int", reducer: "add"}
}
start: "a"
nodes: {
	a: {type: "enginetest", config: {write: {greeting: "hi", n: 1}, emit: "hello"}, next: "b"}
	b: {type: "enginetest", config: {exprs: {greeting: "greeting + ' there'", n: "n * 10"}}, next: "END"}
}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	res, rec := run(t, eng, engine.Request{ThreadID: "t1", Input: map[string]any{"n": 1}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	if got := res.State["greeting"]; got != "hi there" {
		t.Errorf("greeting = %v", got)
	}
	// input 1, a adds 1 → 2, b adds n*10 = 20 → 22.
	if got := res.State["n"]; got != 22 {
		t.Errorf("n = %v, want 22", got)
	}
	if !slices.Equal(res.Path, []string{"a", "b"}) {
		t.Errorf("path %v", res.Path)
	}
	// The input checkpoint, the start checkpoint, then one per step.
	want := []string{"run_start", "checkpoint", "checkpoint", "node_start", "text", "node_end", "checkpoint", "node_start", "node_end", "checkpoint", "done"}
	if got := rec.types(); !slices.Equal(got, want) {
		t.Errorf("events\n got %v\nwant %v", got, want)
	}
}

func TestRoutingFirstMatchAndDefault(t *testing.T) {
	g := compileGraph(t, `
state: {
	goal: {type: "string"}
	out: {type: "string"}
}
start: "route"
nodes: {
	route: {type: "enginetest", routes: [
		{when: "goal == ''", to: "ask"},
		{when: "goal == 'fix' || goal == ''", to: "fix"},
	], default: "other"}
	ask: {type: "enginetest", config: write: out: "ask", next: "END"}
	fix: {type: "enginetest", config: write: out: "fix", next: "END"}
	other: {type: "enginetest", config: write: out: "other", next: "END"}
}`)
	tests := []struct{ goal, want string }{{"", "ask"}, {"fix", "fix"}, {"install", "other"}}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			eng := engine.New(g, memory.New(), engine.Options{})
			res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{"goal": tt.goal}})
			if res.State["out"] != tt.want {
				t.Fatalf("out = %v, want %s (err %v)", res.State["out"], tt.want, res.Err)
			}
		})
	}
}

func TestParallelFanOutAndJoin(t *testing.T) {
	c := uniq(t)
	g := compileGraph(t, fmt.Sprintf(`
state: {
	log: {type: "list<string>", reducer: "append"}
}
start: "split"
nodes: {
	split: {type: "enginetest", config: write: log: ["split"], next: ["c_branch", "b_branch"]}
	b_branch: {type: "enginetest", config: write: log: ["b"], next: "b2"}
	b2: {type: "enginetest", config: write: log: ["b2"], next: "join"}
	c_branch: {type: "enginetest", config: write: log: ["c"], next: "join"}
	join: {type: "enginetest", config: {write: log: ["join"], counter: "%s/join"}, wait_for: ["b2", "c_branch"], next: "END"}
}`, c))
	eng := engine.New(g, memory.New(), engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	// Step 2 applies b before c (task order), the join runs once after b2.
	want := []any{"split", "b", "c", "b2", "join"}
	if !slices.Equal(res.State["log"].([]any), want) {
		t.Fatalf("log = %v, want %v", res.State["log"], want)
	}
	if n := count(c + "/join"); n != 1 {
		t.Fatalf("join ran %d times, want 1", n)
	}
}

func TestMapFanOutGathersInItemOrder(t *testing.T) {
	g := compileGraph(t, `
state: {
	queries: {type: "list<string>"}
	results: {type: "list<string>", reducer: "append"}
}
start: "plan"
nodes: {
	plan: {type: "enginetest", config: write: queries: ["q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10"], map: {over: "queries", to: "search", as: "query"}}
	search: {type: "enginetest", config: exprs: results: "[upper(query)]", next: "END"}
}`)
	eng := engine.New(g, memory.New(), engine.Options{MaxConcurrency: 3})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	got := res.State["results"].([]any)
	if len(got) != 11 || got[0] != "Q0" || got[2] != "Q2" || got[10] != "Q10" {
		t.Fatalf("results = %v", got)
	}
}

func TestUpdateErrors(t *testing.T) {
	tests := []struct {
		name, graph, want string
	}{
		{"concurrent replace", `
state: x: {type: "string"}
start: "s"
nodes: {
	s: {type: "enginetest", next: ["a", "b"]}
	a: {type: "enginetest", config: write: x: "from a", next: "END"}
	b: {type: "enginetest", config: write: x: "from b", next: "END"}
}`, `field "x" (reducer replace) was written by both "a" and "b"`},
		{"undeclared field", `
state: x: {type: "string"}
start: "a"
nodes: a: {type: "enginetest", config: write: y: "oops", next: "END"}`, `node "a" wrote field "y", which the state schema does not declare`},
		{"wrong type", `
state: n: {type: "int"}
start: "a"
nodes: a: {type: "enginetest", config: write: n: "seven", next: "END"}`, `node "a" wrote field "n": want int, got string`},
		{"write refused by a declared type's reducer", `
state: c: {type: "tickets"}
start: "a"
nodes: {
	a: {type: "enginetest", config: write: c: [{id: "t1", status: "closed"}], next: "b"}
	b: {type: "enginetest", config: write: c: [{id: "t1", status: "open"}], next: "END"}
}`, `item "t1": ticket t1 is closed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := engine.New(compileGraph(t, tt.graph), memory.New(), engine.Options{})
			res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
			if res.Status != engine.StatusError || res.Err == nil || !strings.Contains(res.Err.Error(), tt.want) {
				t.Fatalf("status %s, err %v; want error containing %q", res.Status, res.Err, tt.want)
			}
		})
	}
}

func TestRetryTimeoutAndCatch(t *testing.T) {
	tests := []struct {
		name, node, status, out string
		runs                    int
	}{
		{"retry succeeds", `{type: "enginetest", config: {fail_times: 2, retryable: true, write: out: "ok", counter: "%s"}, retry: {max_attempts: 3, initial_interval: "1ms"}, next: "END"}`, "completed", "ok", 3},
		{"retry exhausted", `{type: "enginetest", config: {fail_times: 5, retryable: true, counter: "%s"}, retry: {max_attempts: 2, initial_interval: "1ms"}, next: "END"}`, "error", "", 2},
		{"code not retried", `{type: "enginetest", config: {fail_times: 1, fail_code: "bad_input", retryable: true, counter: "%s"}, retry: {max_attempts: 3, initial_interval: "1ms", on: ["rate_limit"]}, next: "END"}`, "error", "", 1},
		{"caught", `{type: "enginetest", config: {fail_times: 1, fail_code: "tool_error", counter: "%s"}, catch: [{on: ["tool_error"], to: "handler"}], next: "END"}`, "completed", "handled", 1},
		{"timeout caught", `{type: "enginetest", config: {sleep: "5s", counter: "%s"}, timeout: "20ms", catch: [{on: ["timeout"], to: "handler"}], next: "END"}`, "completed", "handled", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := uniq(t)
			handler := ""
			if strings.Contains(tt.node, "catch") {
				handler = `handler: {type: "enginetest", config: write: out: "handled", next: "END"}`
			}
			g := compileGraph(t, `
state: out: {type: "string"}
start: "work"
nodes: {
	work: `+fmt.Sprintf(tt.node, c)+`
	`+handler+`
}`)
			eng := engine.New(g, memory.New(), engine.Options{})
			res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
			if res.Status != tt.status || res.State["out"] != tt.out {
				t.Fatalf("status %s out %q (err %v), want %s %q", res.Status, res.State["out"], res.Err, tt.status, tt.out)
			}
			if n := count(c); n != tt.runs {
				t.Fatalf("node ran %d times, want %d", n, tt.runs)
			}
		})
	}
}

func TestRecursionLimit(t *testing.T) {
	g := compileGraph(t, `
state: n: {type: "int", reducer: "add"}
start: "a"
defaults: recursion_limit: 6
nodes: {
	a: {type: "enginetest", config: write: n: 1, next: "b"}
	b: {type: "enginetest", routes: [{when: "n > 100", to: "END"}], default: "a"}
}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
	if res.Status != engine.StatusError || !strings.Contains(res.Err.Error(), "recursion limit of 6 steps") ||
		!strings.Contains(res.Err.Error(), "a → b") {
		t.Fatalf("status %s err %v", res.Status, res.Err)
	}
	if res.State["n"] != 3 {
		t.Fatalf("n = %v, want 3 (state kept at the last checkpoint)", res.State["n"])
	}
}

func TestInterruptAndResumeRunsNothingTwice(t *testing.T) {
	c := uniq(t)
	g := compileGraph(t, fmt.Sprintf(`
state: {
	answer: {type: "string"}
	out: {type: "string"}
}
start: "before"
nodes: {
	before: {type: "enginetest", config: counter: "%[1]s/before", next: "ask"}
	ask: {type: "enginetest", config: {interrupt: "answer", counter: "%[1]s/ask"}, routes: [{when: "answer == 'yes'", to: "yes"}], default: "no"}
	yes: {type: "enginetest", config: exprs: out: "'got ' + answer", next: "END"}
	no: {type: "enginetest", config: write: out: "refused", next: "END"}
}`, c))
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, rec := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
	if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("status %s interrupts %v err %v", res.Status, res.Interrupts, res.Err)
	}
	in := res.Interrupts[0]
	if in.Field != "answer" || in.Payload["question"] != "value for answer?" || !slices.Contains(rec.types(), "interrupt") {
		t.Fatalf("interrupt %+v", in)
	}
	// Continuing with no input keeps it waiting.
	again, _ := run(t, eng, engine.Request{ThreadID: "x"})
	if again.Status != engine.StatusInterrupted || len(again.Interrupts) != 1 || again.Interrupts[0].ID != in.ID {
		t.Fatalf("no input while interrupted: %s %v (%v)", again.Status, again.Interrupts, again.Err)
	}
	// A fresh engine (as after a restart) resumes it.
	eng2 := engine.New(g, cp, engine.Options{})
	res, _ = run(t, eng2, engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: "yes"}})
	if res.Status != engine.StatusCompleted || res.State["out"] != "got yes" {
		t.Fatalf("after resume: %s %v (%v)", res.Status, res.State["out"], res.Err)
	}
	if count(c+"/before") != 1 || count(c+"/ask") != 1 {
		t.Fatalf("before ran %d, ask ran %d times; want 1 and 1", count(c+"/before"), count(c+"/ask"))
	}
}

func TestParallelInterruptsResumedByID(t *testing.T) {
	g := compileGraph(t, `
state: {
	a: {type: "string"}
	b: {type: "string"}
	out: {type: "string"}
}
start: "s"
nodes: {
	s: {type: "enginetest", next: ["ask_a", "ask_b"]}
	ask_a: {type: "enginetest", config: interrupt: "a", next: "join"}
	ask_b: {type: "enginetest", config: interrupt: "b", next: "join"}
	join: {type: "enginetest", wait_for: ["ask_a", "ask_b"], config: exprs: out: "a + '+' + b", next: "END"}
}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
	if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 2 || res.Interrupts[0].ID == res.Interrupts[1].ID {
		t.Fatalf("want 2 distinct interrupts, got %+v (%v)", res.Interrupts, res.Err)
	}
	ids := map[string]string{}
	for _, in := range res.Interrupts {
		ids[in.Field] = in.ID
	}
	amb, _ := run(t, eng, engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: "?"}})
	if amb.Status != engine.StatusError || !strings.Contains(amb.Err.Error(), "name the one to resume") {
		t.Fatalf("ambiguous resume: %s %v", amb.Status, amb.Err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "x", Resume: &engine.Resume{InterruptID: ids["b"], Value: "B"}})
	if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 || res.Interrupts[0].ID != ids["a"] {
		t.Fatalf("after first resume: %s %+v (%v)", res.Status, res.Interrupts, res.Err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "x", Resume: &engine.Resume{InterruptID: ids["a"], Value: "A"}})
	if res.Status != engine.StatusCompleted || res.State["out"] != "A+B" {
		t.Fatalf("after second resume: %s %v (%v)", res.Status, res.State["out"], res.Err)
	}
}

// TestBreakpoints checks static breakpoints as LangGraph has them: the run
// stops before or after the named nodes with no interrupt recorded (the
// thread's checkpoint lists the tasks left, and the result says where it
// stopped), and a run with no input, or a resume, goes on from there.
func TestBreakpoints(t *testing.T) {
	src := `
state: out: {type: "list<string>", reducer: "append"}
start: "a"
nodes: {
	a: {type: "enginetest", config: {write: out: ["a"], counter: "%[1]s/a"}, next: "b"}
	b: {type: "enginetest", config: {write: out: ["b"], counter: "%[1]s/b"}, next: "c"}
	c: {type: "enginetest", config: {write: out: ["c"], counter: "%[1]s/c"}, next: "END"}
}`
	tests := []struct {
		name          string
		before, after []string
		// goOn is the request that goes on from the stop.
		goOn engine.Request
		// stop is the breakpoint of the first run; nil when it completes.
		stop    *engine.Breakpoint
		stopOut []any // state at the stop
		next    string
		// source is the stop checkpoint's: a step's own, or, for a stop
		// before the start node, the turn's start checkpoint (as in
		// LangGraph, both "loop").
		source   checkpoint.Source
		finalOut []any
	}{
		{name: "before, go on with no input", before: []string{"b"},
			stop: &engine.Breakpoint{When: "before", Nodes: []string{"b"}}, stopOut: []any{"a"}, next: "b", source: checkpoint.SourceLoop,
			finalOut: []any{"a", "b", "c"}},
		{name: "before, go on with a resume", before: []string{"b"}, goOn: engine.Request{Resume: &engine.Resume{Value: "ignored"}},
			stop: &engine.Breakpoint{When: "before", Nodes: []string{"b"}}, stopOut: []any{"a"}, next: "b", source: checkpoint.SourceLoop,
			finalOut: []any{"a", "b", "c"}},
		{name: "before, go on with an update", before: []string{"b"}, goOn: engine.Request{Resume: &engine.Resume{}, Update: map[string]any{"out": []any{"edited"}}},
			stop: &engine.Breakpoint{When: "before", Nodes: []string{"b"}}, stopOut: []any{"a"}, next: "b", source: checkpoint.SourceLoop,
			finalOut: []any{"a", "edited", "b", "c"}},
		{name: "before the start node", before: []string{"a"},
			stop: &engine.Breakpoint{When: "before", Nodes: []string{"a"}}, stopOut: []any{}, next: "a", source: checkpoint.SourceLoop,
			finalOut: []any{"a", "b", "c"}},
		{name: "after", after: []string{"a"},
			stop: &engine.Breakpoint{When: "after", Nodes: []string{"a"}}, stopOut: []any{"a"}, next: "b", source: checkpoint.SourceLoop,
			finalOut: []any{"a", "b", "c"}},
		{name: "after the last node", after: []string{"c"}, finalOut: []any{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := uniq(t)
			cp := memory.New()
			eng := engine.New(compileGraph(t, fmt.Sprintf(src, c)), cp, engine.Options{})
			res, rec := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}, InterruptBefore: tt.before, InterruptAfter: tt.after})
			if len(res.Interrupts) != 0 || slices.Contains(rec.types(), event.Interrupt) {
				t.Fatalf("a breakpoint is no interrupt: result %+v, events %v", res.Interrupts, rec.types())
			}
			if tt.stop == nil {
				// Stopped with no task left: the run completed.
				want := &engine.Breakpoint{When: "after", Nodes: tt.after}
				if res.Status != engine.StatusCompleted || !reflect.DeepEqual(res.Breakpoint, want) || !slices.Equal(res.State["out"].([]any), tt.finalOut) {
					t.Fatalf("run: %s at %+v, out %v (%v)", res.Status, res.Breakpoint, res.State["out"], res.Err)
				}
				if snap, err := cp.Latest(context.Background(), "x"); err != nil || engine.StoppedAt(&snap.Checkpoint) != nil {
					t.Fatalf("a thread with no task left is stopped at nothing: %+v (%v)", snap.Metadata, err)
				}
				return
			}
			if res.Status != engine.StatusInterrupted || !reflect.DeepEqual(res.Breakpoint, tt.stop) || !slices.Equal(res.State["out"].([]any), tt.stopOut) {
				t.Fatalf("stop: %s at %+v, out %v (%v)", res.Status, res.Breakpoint, res.State["out"], res.Err)
			}
			done := rec.events[len(rec.events)-1]
			if b, _ := done.Payload["breakpoint"].(map[string]any); done.Type != event.Done || b["when"] != tt.stop.When {
				t.Fatalf("last event: %+v", done)
			}
			snap, err := cp.Latest(context.Background(), "x")
			if err != nil || len(snap.Interrupts) != 0 || len(snap.Next) != 1 || snap.Next[0].Node != tt.next || snap.Source != tt.source {
				t.Fatalf("checkpoint at the stop: next %+v interrupts %+v source %s (%v)", snap.Next, snap.Interrupts, snap.Source, err)
			}
			if b := engine.StoppedAt(&snap.Checkpoint); !reflect.DeepEqual(b, tt.stop) {
				t.Fatalf("StoppedAt = %+v, want %+v", b, tt.stop)
			}
			// The request that goes on keeps the breakpoints: it passes the
			// one it starts at only.
			goOn := tt.goOn
			goOn.ThreadID, goOn.InterruptBefore, goOn.InterruptAfter = "x", tt.before, tt.after
			res, _ = run(t, eng, goOn)
			if res.Status != engine.StatusCompleted || !slices.Equal(res.State["out"].([]any), tt.finalOut) {
				t.Fatalf("go on: %s at %+v, out %v (%v)", res.Status, res.Breakpoint, res.State["out"], res.Err)
			}
			for _, n := range []string{"a", "b", "c"} {
				if count(c+"/"+n) != 1 {
					t.Fatalf("node %s ran %d times, want once", n, count(c+"/"+n))
				}
			}
			// Finished, the thread waits for nothing: a resume is refused.
			res, _ = run(t, eng, engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: "yes"}})
			if res.Status != engine.StatusError || !strings.Contains(fmt.Sprint(res.Err), "no pending interrupt") {
				t.Fatalf("resume of a finished thread: %s (%v)", res.Status, res.Err)
			}
		})
	}
}

// TestBreakpointStopsAgain checks that a run that goes on from a
// breakpoint stops at the next one its request names.
func TestBreakpointStopsAgain(t *testing.T) {
	g := compileGraph(t, `
state: out: {type: "list<string>", reducer: "append"}
start: "a"
nodes: {
	a: {type: "enginetest", config: write: out: ["a"], next: "b"}
	b: {type: "enginetest", config: write: out: ["b"], routes: [{when: "len(out) > 100", to: "END"}], default: "a"}
}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}, InterruptBefore: []string{"a"}})
	if res.Breakpoint == nil || len(res.State["out"].([]any)) != 0 {
		t.Fatalf("first stop: %+v %v", res.Breakpoint, res.State["out"])
	}
	for want := 1; want <= 3; want++ {
		res, _ = run(t, eng, engine.Request{ThreadID: "x", InterruptBefore: []string{"a"}})
		if res.Status != engine.StatusInterrupted || res.Breakpoint == nil || len(res.State["out"].([]any)) != 2*want {
			t.Fatalf("go on %d: %s %+v %v (%v)", want, res.Status, res.Breakpoint, res.State["out"], res.Err)
		}
	}
}

// TestLegacyBreakpoint checks that a thread an earlier version stopped at a
// breakpoint, recorded as an interrupt before its task, reads as stopped
// at the breakpoint and goes on with a run with no input.
func TestLegacyBreakpoint(t *testing.T) {
	c := uniq(t)
	g := compileGraph(t, fmt.Sprintf(`
state: out: {type: "list<string>", reducer: "append"}
start: "a"
nodes: {
	a: {type: "enginetest", config: write: out: ["a"], next: "b"}
	b: {type: "enginetest", config: {write: out: ["b"], counter: "%s/b"}, next: "END"}
}`, c))
	cp := memory.New()
	ctx := context.Background()
	run(t, engine.New(g, cp, engine.Options{}), engine.Request{ThreadID: "x", Input: map[string]any{}, InterruptBefore: []string{"b"}})
	snap, err := cp.Latest(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	legacy := snap.Checkpoint
	legacy.ID, legacy.ParentID, legacy.Metadata = checkpoint.NewID(), snap.ID, nil
	legacy.Interrupts = []checkpoint.Interrupt{{ID: "b-before-1234", Node: "b", TaskID: "b", When: "before"}}
	if err := cp.Put(ctx, legacy, nil); err != nil {
		t.Fatal(err)
	}
	if b := engine.StoppedAt(&legacy); b == nil || b.When != "before" || !slices.Equal(b.Nodes, []string{"b"}) {
		t.Fatalf("StoppedAt = %+v", b)
	}
	if w := engine.WaitingInterrupts(&legacy); len(w) != 0 {
		t.Fatalf("WaitingInterrupts = %+v, want none", w)
	}
	// A new engine reads the thread from storage.
	res, _ := run(t, engine.New(g, cp, engine.Options{}), engine.Request{ThreadID: "x", InterruptBefore: []string{"b"}})
	if res.Status != engine.StatusCompleted || count(c+"/b") != 1 || !slices.Equal(res.State["out"].([]any), []any{"a", "b"}) {
		t.Fatalf("go on: %s out %v (%v)", res.Status, res.State["out"], res.Err)
	}
}

func TestFailedStepKeepsFinishedSiblings(t *testing.T) {
	for _, tt := range checkpointerModes(t) {
		t.Run(tt.name, func(t *testing.T) {
			c := uniq(t)
			g := compileGraph(t, fmt.Sprintf(`
state: log: {type: "list<string>", reducer: "append"}
start: "s"
nodes: {
	s: {type: "enginetest", next: ["fine", "flaky"]}
	fine: {type: "enginetest", config: {write: log: ["fine"], counter: "%[1]s/fine"}, next: "END"}
	flaky: {type: "enginetest", config: {write: log: ["flaky"], fail_times: 1, counter: "%[1]s/flaky"}, next: "END"}
}`, c))
			cp := tt.open(t)
			eng := engine.New(g, cp, engine.Options{})
			res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}, Durability: tt.mode})
			if res.Status != engine.StatusError {
				t.Fatalf("first run: %s", res.Status)
			}
			snap, err := cp.Latest(context.Background(), "x")
			if err != nil || len(snap.Pending) != 2 || snap.Pending[0].Node != "fine" || snap.Pending[0].Kind != "update" ||
				snap.Pending[1].Node != "flaky" || snap.Pending[1].Kind != "error" || !strings.Contains(string(snap.Pending[1].Update), "failure 1 of flaky") {
				t.Fatalf("pending writes after failure: want fine's update and flaky's error, got %+v (%v)", snap.Pending, err)
			}
			// Continue the thread (no input): only the failed node runs again.
			res, _ = run(t, eng, engine.Request{ThreadID: "x", Durability: tt.mode})
			if res.Status != engine.StatusCompleted {
				t.Fatalf("continue: %s %v", res.Status, res.Err)
			}
			if count(c+"/fine") != 1 || count(c+"/flaky") != 2 {
				t.Fatalf("fine ran %d (want 1), flaky ran %d (want 2)", count(c+"/fine"), count(c+"/flaky"))
			}
			if got := res.State["log"].([]any); !slices.Equal(got, []any{"fine", "flaky"}) {
				t.Fatalf("log = %v", got)
			}
		})
	}
}

func TestMemoryAcrossTurnsWithKeepAndUnion(t *testing.T) {
	g := compileGraph(t, `
state: {
	model: {type: "string", reducer: "keep"}
	symptoms: {type: "list<string>", reducer: "union"}
	said: {type: "string"}
}
start: "extract"
nodes: extract: {type: "enginetest", config: exprs: {model: "said contains 'WDT' ? 'WDT780SAEM1' : ''", symptoms: "said contains 'leak' ? ['leaking'] : []"}, next: "END"}`)
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	for _, said := range []string{"My WDT is leaking", "it leaks a lot", "fix it"} {
		res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{"said": said}})
		if res.Status != engine.StatusCompleted {
			t.Fatalf("%q: %v", said, res.Err)
		}
	}
	snap, err := cp.Latest(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if string(snap.Values["model"]) != `"WDT780SAEM1"` || string(snap.Values["symptoms"]) != `["leaking"]` {
		t.Fatalf("stored model %s symptoms %s", snap.Values["model"], snap.Values["symptoms"])
	}
}

func TestIncompatibleGraphChange(t *testing.T) {
	cp := memory.New()
	g1 := compileGraph(t, `
state: {answer: {type: "string"}, extra: {type: "string"}}
start: "ask"
nodes: {
	ask: {type: "enginetest", config: {write: extra: "x"}, next: "wait"}
	wait: {type: "enginetest", config: interrupt: "answer", next: "END"}
}`)
	res, _ := run(t, engine.New(g1, cp, engine.Options{}), engine.Request{ThreadID: "x", Input: map[string]any{}})
	if res.Status != engine.StatusInterrupted {
		t.Fatalf("%s %v", res.Status, res.Err)
	}
	g2 := compileGraph(t, `
state: {answer: {type: "string"}}
start: "ask"
nodes: ask: {type: "enginetest", next: "END"}`)
	_, err := engine.New(g2, cp, engine.Options{}).Run(context.Background(), engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: "v"}}, nil)
	if !errors.Is(err, engine.ErrIncompatibleGraph) || !strings.Contains(err.Error(), "field extra") || !strings.Contains(err.Error(), "node wait") {
		t.Fatalf("want incompatible-graph error naming node wait and field extra, got %v", err)
	}
	// A compatible change (a new optional field, a changed config) is accepted.
	g3 := compileGraph(t, `
state: {answer: {type: "string"}, extra: {type: "string"}, added: {type: "int"}}
start: "ask"
nodes: {
	ask: {type: "enginetest", next: "wait"}
	wait: {type: "enginetest", config: interrupt: "answer", next: "END"}
}`)
	res, _ = run(t, engine.New(g3, cp, engine.Options{}), engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: "v"}})
	if res.Status != engine.StatusCompleted || res.State["answer"] != "v" {
		t.Fatalf("compatible change: %s %v", res.Status, res.Err)
	}
}

func TestCancellationLeavesThreadResumable(t *testing.T) {
	g := compileGraph(t, `
state: out: {type: "string"}
start: "slow"
nodes: slow: {type: "enginetest", config: {sleep: "10s", write: out: "done"}, next: "END"}`)
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, results := eng.Stream(ctx, engine.Request{ThreadID: "x", Input: map[string]any{}})
	for ev := range events {
		if ev.Type == event.NodeStart {
			cancel()
		}
	}
	res := <-results
	if res.Status != engine.StatusError || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("status %s err %v", res.Status, res.Err)
	}
	snap, err := cp.Latest(context.Background(), "x")
	if err != nil || len(snap.Next) != 1 || snap.Next[0].Node != "slow" {
		t.Fatalf("thread should wait at slow: %+v %v", snap, err)
	}
}

func TestAppendOnlyFieldsStoreDeltas(t *testing.T) {
	g := compileGraph(t, `
state: {
	messages: {type: "messages"}
	said: {type: "string"}
}
start: "reply"
nodes: reply: {type: "enginetest", config: exprs: messages: "[{role: 'user', content: said}, {role: 'assistant', content: 'ok: ' + said}]", next: "END"}`)
	rec := &blobRecorder{Checkpointer: memory.New()}
	eng := engine.New(g, rec, engine.Options{})
	for i := range 5 {
		res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{"said": fmt.Sprint("turn ", i)}})
		if res.Status != engine.StatusCompleted {
			t.Fatal(res.Err)
		}
	}
	var full, delta int
	for _, b := range rec.blobs {
		if b.Field != "messages" {
			continue
		}
		if b.Base == 0 {
			full++
		} else {
			delta++
		}
	}
	if full != 1 || delta != 4 {
		t.Fatalf("messages blobs: %d full, %d delta; want 1 and 4", full, delta)
	}
	snap, _ := rec.Latest(context.Background(), "x")
	if !strings.Contains(string(snap.Values["messages"]), "ok: turn 4") || strings.Count(string(snap.Values["messages"]), `"role"`) != 10 {
		t.Fatalf("messages = %s", snap.Values["messages"])
	}
}

type blobRecorder struct {
	checkpoint.Checkpointer
	mu    sync.Mutex
	blobs []checkpoint.Blob
}

func (b *blobRecorder) Put(ctx context.Context, cp checkpoint.Checkpoint, blobs []checkpoint.Blob) error {
	b.mu.Lock()
	b.blobs = append(b.blobs, blobs...)
	b.mu.Unlock()
	return b.Checkpointer.Put(ctx, cp, blobs)
}

func TestUpdateStateAsNode(t *testing.T) {
	g := compileGraph(t, `
state: {
	answer: {type: "string"}
	log: {type: "list<string>", reducer: "append"}
	out: {type: "string"}
}
start: "ask"
nodes: {
	ask: {type: "enginetest", config: interrupt: "answer", routes: [{when: "answer == 'yes'", to: "yes"}], default: "END"}
	yes: {type: "enginetest", config: exprs: out: "'answered ' + answer", next: "END"}
}`)
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{"log": []any{"a"}}})
	if res.Status != engine.StatusInterrupted {
		t.Fatalf("%s %v", res.Status, res.Err)
	}
	// Without a node: values go through reducers, the interrupt stays.
	c, err := eng.UpdateState(context.Background(), "x", "", map[string]any{"log": "b"})
	if err != nil || c.Source != "update" || len(c.Interrupts) != 1 {
		t.Fatalf("update: %+v %v", c, err)
	}
	// As the interrupt node: the interrupt is answered and its routes chosen.
	c, err = eng.UpdateState(context.Background(), "x", "ask", map[string]any{"answer": "yes"})
	if err != nil || len(c.Interrupts) != 0 || len(c.Next) != 1 || c.Next[0].Node != "yes" {
		t.Fatalf("update as ask: %+v %v", c, err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "x"})
	if res.Status != engine.StatusCompleted || res.State["out"] != "answered yes" || !slices.Equal(res.State["log"].([]any), []any{"a", "b"}) {
		t.Fatalf("after update: %s %v (%v)", res.Status, res.State, res.Err)
	}
	if _, err := eng.UpdateState(context.Background(), "x", "nope", nil); err == nil || !strings.Contains(err.Error(), `no node "nope"`) {
		t.Fatalf("unknown node: %v", err)
	}
	if _, err := eng.UpdateState(context.Background(), "x", "", map[string]any{"out": 3}); err == nil || !strings.Contains(err.Error(), `field "out"`) {
		t.Fatalf("wrong type: %v", err)
	}
}

func TestInterruptWithUpdateAndUsage(t *testing.T) {
	g := compileGraph(t, `
state: {
	answer: {type: "string"}
	status: {type: "string"}
}
start: "ask"
nodes: ask: {type: "enginetest_waiting", next: "END"}`)
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
	if res.Status != engine.StatusInterrupted || res.State["status"] != "WAITING" {
		t.Fatalf("%s %v %v", res.Status, res.State, res.Err)
	}
	snap, _ := cp.Latest(context.Background(), "x")
	tasks, _ := snap.Metadata["tasks"].([]any)
	if len(tasks) != 1 || !strings.Contains(fmt.Sprint(tasks[0]), "prompt_tokens:12") {
		t.Fatalf("trace lacks usage: %v", snap.Metadata["tasks"])
	}
}

func TestCancelDuringRetryWaitDoesNotRunAgain(t *testing.T) {
	c := uniq(t)
	g := compileGraph(t, `
state: out: {type: "string"}
start: "work"
nodes: work: {type: "enginetest", config: {fail_times: 5, retryable: true, counter: "`+c+`"}, retry: {max_attempts: 3, initial_interval: "1h"}, next: "END"}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	res, _ := eng.Run(ctx, engine.Request{ThreadID: "x", Input: map[string]any{}}, func(ev event.Event) {
		rec.sink(ev)
		if ev.Type == "retry" {
			cancel()
		}
	})
	if res == nil || res.Status != engine.StatusError {
		t.Fatalf("want an error result, got %+v", res)
	}
	if !errors.Is(res.Err, context.Canceled) || !strings.Contains(res.Err.Error(), "failure 1 of work") {
		t.Fatalf("error should name the cancellation and the node's failure: %v", res.Err)
	}
	if n := count(c); n != 1 {
		t.Fatalf("node ran %d times after the run was canceled during its retry wait, want 1", n)
	}
}

func TestNodeEndSummaryKeepsUTF8(t *testing.T) {
	tests := []struct {
		name, text string
		truncated  bool
	}{
		{"short", "短い返事", false},
		{"long multibyte", strings.Repeat("日本語の長い返事", 10), true},
		{"long ascii", strings.Repeat("a", 200), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := compileGraph(t, `
state: out: {type: "string"}
start: "work"
nodes: work: {type: "enginetest", config: write: out: `+fmt.Sprintf("%q", tt.text)+`, next: "END"}`)
			eng := engine.New(g, memory.New(), engine.Options{})
			res, rec := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
			if res.Status != engine.StatusCompleted {
				t.Fatalf("status %s: %v", res.Status, res.Err)
			}
			var summary string
			for _, ev := range rec.events {
				if ev.Type == event.NodeEnd {
					upd, _ := ev.Payload["update"].(map[string]any)
					summary, _ = upd["out"].(string)
				}
			}
			if !utf8.ValidString(summary) || len(summary) > 80 {
				t.Fatalf("summary %q: valid UTF-8 %v, %d bytes", summary, utf8.ValidString(summary), len(summary))
			}
			if got := strings.HasSuffix(summary, "..."); got != tt.truncated {
				t.Fatalf("summary %q truncated %v, want %v", summary, got, tt.truncated)
			}
			if !strings.HasPrefix(tt.text, strings.TrimSuffix(summary, "...")) {
				t.Fatalf("summary %q is not a prefix of the value", summary)
			}
		})
	}
}

// TestBreakpointAfterAnAnswer checks that a resume whose answered node is
// followed by a node the request stops before stops at the resume's own
// checkpoint, and that a run with no input goes on from it.
func TestBreakpointAfterAnAnswer(t *testing.T) {
	g := compileGraph(t, `
state: {
	answer: {type: "string"}
	out: {type: "string"}
}
start: "ask"
nodes: {
	ask: {type: "enginetest", config: interrupt: "answer", next: "done"}
	done: {type: "enginetest", config: exprs: out: "'got ' + answer", next: "END"}
}`)
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: "yes"}, InterruptBefore: []string{"done"}})
	if res.Status != engine.StatusInterrupted || res.Breakpoint == nil || len(res.Interrupts) != 0 || res.State["answer"] != "yes" {
		t.Fatalf("resume: %s at %+v, interrupts %+v, state %v (%v)", res.Status, res.Breakpoint, res.Interrupts, res.State, res.Err)
	}
	snap, err := cp.Latest(context.Background(), "x")
	if err != nil || snap.Source != checkpoint.SourceResume || engine.StoppedAt(&snap.Checkpoint) == nil {
		t.Fatalf("stop checkpoint: source %s, metadata %v (%v)", snap.Source, snap.Metadata, err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "x", InterruptBefore: []string{"done"}})
	if res.Status != engine.StatusCompleted || res.State["out"] != "got yes" {
		t.Fatalf("go on: %s %v (%v)", res.Status, res.State, res.Err)
	}
}
