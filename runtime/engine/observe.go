package engine

import (
	"context"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

// Observer follows runs and the tasks of their steps without being part of
// them: tracing (OpenTelemetry spans) and audit logs hook in here
// (Options.Observers). The context an observer returns is the one the run,
// or the node, goes on with, so a span it starts is the parent of what the
// node does (model and tool calls). Implementations must be safe for
// concurrent use: the tasks of a step run concurrently.
type Observer interface {
	// ObserveRun is called when a run starts; the observation's End gets the
	// result.
	ObserveRun(ctx context.Context, run RunInfo) (context.Context, RunObservation)
	// ObserveNode is called when a task starts (before its first attempt;
	// a task replayed from a saved write is not run and not observed).
	ObserveNode(ctx context.Context, task TaskInfo) (context.Context, NodeObservation)
}

// RunObservation is an observer's view of one run.
type RunObservation interface {
	End(res *Result)
}

// NodeObservation is an observer's view of one task.
type NodeObservation interface {
	// Event receives each event the node emits.
	Event(ev event.Event)
	End(end TaskEnd)
}

// RunInfo describes a starting run.
type RunInfo struct {
	ThreadID string
	RunID    string
	Graph    string
	Start    time.Time
	// Input is the request's input (nil for a resume or a recovery).
	Input map[string]any
	// Resume is set when the run answers pending interrupts.
	Resume *Resume
	// State is the thread's state before the run. It changes as the run
	// goes on: read what is needed in ObserveRun, and never modify it.
	State map[string]any
}

// TaskInfo describes a starting task.
type TaskInfo struct {
	ThreadID string
	RunID    string
	Graph    string
	Node     string
	// Type is the node's type.
	Type string
	Task string
	Step int
	// Config is the node's config as written in the graph.
	Config map[string]any
	Start  time.Time
	// State is the state snapshot the step started from; Item is the item
	// of a map fan-out task. They must not be modified.
	State map[string]any
	Item  any
}

// TaskEnd is how a task ended.
type TaskEnd struct {
	// Status is ok, interrupted, caught or error.
	Status   string
	Duration time.Duration
	Attempts int
	// Update is what the node wrote (nil unless ok).
	Update node.Update
	// Err is the failure of an error or caught status.
	Err error
	// CaughtBy is the node a caught failure went to.
	CaughtBy string
}

// nopRunObservation and nopNodeObservation stand in when no observer is set.
type nopRunObservation struct{}

func (nopRunObservation) End(*Result) {}

type nodeObservations []NodeObservation

func (o nodeObservations) Event(ev event.Event) {
	for _, x := range o {
		x.Event(ev)
	}
}

func (o nodeObservations) End(end TaskEnd) {
	for i := len(o) - 1; i >= 0; i-- {
		o[i].End(end)
	}
}

type runObservations []RunObservation

func (o runObservations) End(res *Result) {
	for i := len(o) - 1; i >= 0; i-- {
		o[i].End(res)
	}
}

// observeRun tells the observers a run starts.
func (e *Engine) observeRun(ctx context.Context, req Request, state map[string]any) (context.Context, RunObservation) {
	if len(e.opts.Observers) == 0 {
		return ctx, nopRunObservation{}
	}
	info := RunInfo{ThreadID: req.ThreadID, RunID: req.RunID, Graph: e.graph.Spec.Name, Start: e.opts.Now(),
		Input: req.Input, Resume: req.Resume, State: state}
	obs := make(runObservations, 0, len(e.opts.Observers))
	for _, o := range e.opts.Observers {
		var ro RunObservation
		ctx, ro = o.ObserveRun(ctx, info)
		obs = append(obs, ro)
	}
	return ctx, obs
}

// observeNode tells the observers a task starts.
func (e *Engine) observeNode(ctx context.Context, r *run, t checkpoint.Task, step int, state map[string]any) (context.Context, nodeObservations) {
	if len(e.opts.Observers) == 0 {
		return ctx, nil
	}
	n := e.graph.Nodes[t.Node]
	info := TaskInfo{ThreadID: r.req.ThreadID, RunID: r.req.RunID, Graph: e.graph.Spec.Name, Node: t.Node,
		Type: n.Spec.Type, Task: t.ID, Step: step, Config: n.Spec.Config, Start: time.Now(), State: state, Item: t.Item}
	obs := make(nodeObservations, 0, len(e.opts.Observers))
	for _, o := range e.opts.Observers {
		var no NodeObservation
		ctx, no = o.ObserveNode(ctx, info)
		obs = append(obs, no)
	}
	return ctx, obs
}

// taskEnd describes a finished task for the observers.
func taskEnd(o *outcome, err error) TaskEnd {
	end := TaskEnd{Status: o.status, Duration: o.duration, Attempts: o.attempts, CaughtBy: o.CatchTo}
	switch {
	case o.err != nil:
		end.Status, end.Err = "error", o.err
	case o.CatchTo != "":
		end.Err = err
	case o.Interrupt == nil:
		end.Update = o.Update
	}
	return end
}
