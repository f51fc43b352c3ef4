package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/event"
)

// UpdateState writes values to a thread's state as if node asNode had written
// them: through the reducers, checked against the schema, in a new checkpoint
// (source "update"). With asNode set, the thread continues along that node's
// routes (its own pending task and interrupt count as done); with asNode
// empty, the thread's next nodes and interrupts are kept. It returns the new
// checkpoint.
func (e *Engine) UpdateState(ctx context.Context, threadID, asNode string, values map[string]any) (*checkpoint.Checkpoint, error) {
	return e.BulkUpdateState(ctx, threadID, "", [][]StateUpdate{{{Values: values, AsNode: asNode}}})
}

// UpdateStateAt is UpdateState from a given checkpoint of the thread; from
// an older one, it forks the thread there (see Request.CheckpointID).
func (e *Engine) UpdateStateAt(ctx context.Context, threadID, checkpointID, asNode string, values map[string]any) (*checkpoint.Checkpoint, error) {
	return e.BulkUpdateState(ctx, threadID, checkpointID, [][]StateUpdate{{{Values: values, AsNode: asNode}}})
}

// StateUpdate is one write of a bulk update: Values as if node AsNode had
// written them. Three AsNode values are special, as in LangGraph: AsInput
// writes an input checkpoint (Values become the pending input, the start node
// next); AsEnd with no Values clears the thread's next tasks and interrupts;
// AsCopy writes a copy of the checkpoint beside it.
type StateUpdate struct {
	Values map[string]any
	AsNode string
}

// The special StateUpdate.AsNode values.
const (
	AsInput = "__input__"
	AsEnd   = "__end__"
	AsCopy  = "__copy__"
)

// BulkUpdateState applies supersteps of updates to a thread, from
// checkpointID (empty for the newest): each superstep's updates are applied
// together, as the writes of one step, and make one checkpoint. It returns
// the last checkpoint.
func (e *Engine) BulkUpdateState(ctx context.Context, threadID, checkpointID string, supersteps [][]StateUpdate) (*checkpoint.Checkpoint, error) {
	if threadID == "" {
		return nil, errors.New("update state: a thread id is required")
	}
	if len(supersteps) == 0 {
		return nil, fmt.Errorf("update state of thread %q: no supersteps", threadID)
	}
	for i, step := range supersteps {
		if len(step) == 0 {
			return nil, fmt.Errorf("update state of thread %q: superstep %d has no updates", threadID, i)
		}
		for _, u := range step {
			switch u.AsNode {
			case "", AsInput, AsEnd, AsCopy:
				if u.AsNode != "" && len(step) > 1 {
					return nil, fmt.Errorf("update state of thread %q: superstep %d: as_node %q must be the superstep's only update", threadID, i, u.AsNode)
				}
			default:
				if _, ok := e.graph.Nodes[u.AsNode]; !ok {
					return nil, fmt.Errorf("update state of thread %q: graph %q has no node %q", threadID, e.graph.Spec.Name, u.AsNode)
				}
			}
		}
	}
	ts, err := e.open(ctx, threadID, checkpointID)
	if err != nil {
		return nil, fmt.Errorf("update state of thread %q: %w", threadID, err)
	}
	if first := supersteps[0][0].AsNode; ts.forkedFrom != "" && first != AsInput && first != AsEnd {
		if err := e.carryChildren(ctx, threadID, ts); err != nil {
			return nil, fmt.Errorf("update state of thread %q: %w", threadID, err)
		}
	}
	r := &run{e: e, ts: ts, sink: event.Discard, req: Request{ThreadID: threadID, RunID: "update-" + randomHex(6)},
		res: &Result{ThreadID: threadID}, joins: loadJoins(ts.cp.Metadata), forkedFrom: ts.forkedFrom}
	ts.forkedFrom = ""
	for i, step := range supersteps {
		if err := r.superstep(ctx, step); err != nil {
			if len(supersteps) > 1 {
				return nil, fmt.Errorf("update state of thread %q: superstep %d: %w", threadID, i, err)
			}
			return nil, fmt.Errorf("update state of thread %q: %w", threadID, err)
		}
	}
	cp := ts.cp
	return &cp, nil
}

// superstep applies one superstep of updates and writes its checkpoint.
func (r *run) superstep(ctx context.Context, updates []StateUpdate) error {
	ts := r.ts
	switch u := updates[0]; u.AsNode {
	case AsInput:
		input := r.e.stampMessages(u.Values, nil)
		if _, err := applyWrites(r.e.graph, copyState(ts.values), []write{{taskID: inputWriter, node: inputWriter, update: input}}); err != nil {
			return fmt.Errorf("input: %w", err)
		}
		data, err := json.Marshal(input)
		if err != nil {
			return fmt.Errorf("input: %w", err)
		}
		r.joins = joinState{}
		start := r.e.graph.Start
		return r.commit(ctx, commitSpec{source: checkpoint.SourceInput, next: []checkpoint.Task{{ID: start, Node: start}}, input: data})
	case AsEnd:
		if len(u.Values) > 0 {
			return fmt.Errorf("as_node %q clears the thread's tasks and takes no values", AsEnd)
		}
		r.joins = joinState{}
		return r.commit(ctx, commitSpec{source: checkpoint.SourceUpdate, writers: []string{AsEnd}})
	case AsCopy:
		if !ts.exists {
			return errors.New("the thread has no checkpoint to copy")
		}
		if err := r.commit(ctx, commitSpec{source: checkpoint.SourceFork, next: ts.cp.Next, interrupts: ts.cp.Interrupts, input: ts.cp.Input, sibling: true}); err != nil {
			return err
		}
		if len(u.Values) == 0 {
			return nil
		}
		updates = []StateUpdate{{Values: u.Values}}
	}
	writes := make([]write, 0, len(updates))
	for i, u := range updates {
		writer := u.AsNode
		if writer == "" {
			writer = "update"
		}
		id := writer
		if i > 0 {
			id = fmt.Sprintf("%s#%d", writer, i)
		}
		writes = append(writes, write{taskID: id, node: writer, update: r.e.stampMessages(u.Values, nil)})
	}
	changes, err := applyWrites(r.e.graph, ts.values, writes)
	if err != nil {
		return err
	}
	next, interrupts := ts.cp.Next, ts.cp.Interrupts
	input := ts.cp.Input
	var writers []string
	scope := r.e.scope(ts.values)
	for _, w := range writes {
		writers = append(writers, w.node)
		if w.node == "update" {
			continue
		}
		// The node counts as having run: its pending task and interrupts go,
		// its successors are next.
		input = nil
		var keep []checkpoint.Interrupt
		for _, in := range interrupts {
			if in.Node != w.node {
				keep = append(keep, in)
			}
		}
		interrupts = keep
		var rest []checkpoint.Task
		for _, t := range next {
			if t.Node != w.node {
				rest = append(rest, t)
			}
		}
		succ, err := r.successors(w.node, scope)
		if err != nil {
			return err
		}
		r.joins.arrive(r.e, w.node)
		next = r.schedule(rest, succ)
	}
	return r.commit(ctx, commitSpec{source: checkpoint.SourceUpdate, changes: changes, next: next, interrupts: interrupts, writers: writers, input: input})
}
