package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
)

// watcher records what an Observer is told, and passes a context value down
// to check that nodes run under the context it returns.
type watcher struct {
	mu     sync.Mutex
	log    []string
	ctxOK  []bool
	result *engine.Result
}

type watchKey struct{}

func (w *watcher) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = append(w.log, s)
}

func (w *watcher) ObserveRun(ctx context.Context, run engine.RunInfo) (context.Context, engine.RunObservation) {
	w.add("run " + run.Graph + " " + run.ThreadID)
	return context.WithValue(ctx, watchKey{}, "run"), runEnd{w}
}

type runEnd struct{ w *watcher }

func (r runEnd) End(res *engine.Result) {
	r.w.add("run end " + res.Status)
	r.w.mu.Lock()
	r.w.result = res
	r.w.mu.Unlock()
}

func (w *watcher) ObserveNode(ctx context.Context, task engine.TaskInfo) (context.Context, engine.NodeObservation) {
	w.mu.Lock()
	w.ctxOK = append(w.ctxOK, ctx.Value(watchKey{}) == "run")
	w.mu.Unlock()
	w.add("node " + task.Node + " " + task.Type)
	return ctx, nodeEnd{w, task.Node}
}

type nodeEnd struct {
	w    *watcher
	node string
}

func (n nodeEnd) Event(ev event.Event) { n.w.add("event " + n.node + " " + ev.Type) }
func (n nodeEnd) End(end engine.TaskEnd) {
	s := "end " + n.node + " " + end.Status
	if end.CaughtBy != "" {
		s += " caught by " + end.CaughtBy + ": " + end.Err.Error()
	}
	if v, ok := end.Update["out"]; ok {
		s += " out=" + v.(string)
	}
	n.w.add(s)
}

func TestObserversSeeRunsNodesEventsAndOutcomes(t *testing.T) {
	c := uniq(t)
	g := compileGraph(t, `
state: out: {type: "string"}
start: "a"
nodes: {
	a: {type: "enginetest", config: {write: out: "A", emit: "hello"}, next: "work"}
	work: {type: "enginetest", config: {fail_times: 1, fail_code: "tool_error", counter: "`+c+`"}, catch: [{on: ["tool_error"], to: "handler"}], next: "END"}
	handler: {type: "enginetest", config: write: out: "handled", next: "END"}
}`)
	w := &watcher{}
	eng := engine.New(g, memory.New(), engine.Options{Observers: []engine.Observer{w}})
	res, _ := run(t, eng, engine.Request{ThreadID: "obs", Input: map[string]any{}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	want := []string{
		"run t obs",
		"node a enginetest", "event a text", "end a ok out=A",
		"node work enginetest", "end work caught caught by handler: tool_error: failure 1 of work",
		"node handler enginetest", "end handler ok out=handled",
		"run end completed",
	}
	if !slices.Equal(w.log, want) {
		t.Errorf("observed\n got %q\nwant %q", w.log, want)
	}
	if w.result != res {
		t.Error("the run observation did not get the run's result")
	}
	for i, ok := range w.ctxOK {
		if !ok {
			t.Errorf("node %d did not run under the run observer's context", i)
		}
	}
}
