package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

// Preflight prepares every node that needs run-time configuration (a model, a
// tool server), so that a missing setting is reported before a run starts
// rather than in the middle of one.
func (e *Engine) Preflight(ctx context.Context) error {
	for _, name := range e.graph.NodeOrder {
		if p, ok := e.impl(e.graph.Nodes[name]).(node.Preparer); ok {
			if err := p.Prepare(ctx, e.services); err != nil {
				return fmt.Errorf("node %q: %w", name, err)
			}
		}
	}
	return nil
}

// UpdateState writes values to a thread's state as if node asNode had written
// them: through the reducers, checked against the schema, in a new checkpoint
// (source "update"). With asNode set, the thread continues along that node's
// routes and an interrupt pending on that node counts as answered; with asNode
// empty, the thread's next nodes and interrupts are kept. It returns the new
// checkpoint.
func (e *Engine) UpdateState(ctx context.Context, threadID, asNode string, values map[string]any) (*checkpoint.Checkpoint, error) {
	if threadID == "" {
		return nil, errors.New("update state: a thread id is required")
	}
	if asNode != "" {
		if _, ok := e.graph.Nodes[asNode]; !ok {
			return nil, fmt.Errorf("update state of thread %q: graph %q has no node %q", threadID, e.graph.Spec.Name, asNode)
		}
	}
	if err := e.acquire(threadID); err != nil {
		return nil, err
	}
	defer e.release(threadID)
	snap, err := e.cp.Latest(ctx, threadID)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		snap = nil
	case err != nil:
		return nil, fmt.Errorf("update state of thread %q: %w", threadID, err)
	}
	ts, err := e.loadThread(snap)
	if err != nil {
		return nil, err
	}
	writer := asNode
	if writer == "" {
		writer = "update"
	}
	r := &run{e: e, ts: ts, sink: event.Discard, req: Request{ThreadID: threadID, RunID: "update-" + randomHex(6)},
		res: &Result{ThreadID: threadID}, joins: loadJoins(ts.cp.Metadata)}
	changes, err := applyWrites(e.graph, ts.values, []write{{taskID: writer, node: writer, update: values}})
	if err != nil {
		return nil, fmt.Errorf("update state of thread %q: %w", threadID, err)
	}
	next, interrupts := ts.cp.Next, ts.cp.Interrupts
	if asNode != "" {
		interrupts = nil
		for _, in := range ts.cp.Interrupts {
			if in.Node != asNode {
				interrupts = append(interrupts, in)
			}
		}
		succ, err := r.successors(asNode, e.scope(ts.values))
		if err != nil {
			return nil, fmt.Errorf("update state of thread %q: %w", threadID, err)
		}
		r.joins.arrive(e, asNode)
		next = r.schedule(append([]checkpoint.Task(nil), next...), succ)
	}
	if err := r.commit(ctx, "update", changes, next, interrupts, []string{writer}, nil); err != nil {
		return nil, err
	}
	cp := ts.cp
	return &cp, nil
}
