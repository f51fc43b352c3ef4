package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
)

// inputWriter is the writer name of a run's input in checkpoints and errors.
const inputWriter = "input"

// run is the state of one Run call.
type run struct {
	e     *Engine
	req   Request
	ts    *threadState
	sink  event.Sink
	res   *Result
	limit int
	// skipBefore holds task ids released from an interrupt_before by a resume.
	skipBefore map[string]bool
	// joins tracks wait_for joins across steps.
	joins joinState
	// carry holds changes applied to the state but not yet checkpointed (a
	// turn's input), merged into the next commit.
	carry        map[string]*fieldChange
	carryWriters []string
}

// Run executes the request on its thread and returns when the thread reaches
// END, an interrupt, an error or the recursion limit. Events are delivered to
// sink as they happen, the last being done. The returned error is also in
// Result.Err; a nil Result means the request itself was invalid.
func (e *Engine) Run(ctx context.Context, req Request, sink event.Sink) (*Result, error) {
	if sink == nil {
		sink = event.Discard
	}
	if req.ThreadID == "" {
		return nil, errors.New("run: a thread id is required")
	}
	if req.RunID == "" {
		req.RunID = "run-" + randomHex(8)
	}
	if err := e.acquire(req.ThreadID); err != nil {
		return nil, err
	}
	defer e.release(req.ThreadID)

	ts, err := e.loadLatest(ctx, req.ThreadID)
	if err != nil {
		return nil, err
	}
	r := &run{
		e: e, req: req, ts: ts, sink: sink,
		res:        &Result{ThreadID: req.ThreadID, RunID: req.RunID},
		limit:      e.recursionLimit(req),
		skipBefore: map[string]bool{},
		joins:      loadJoins(ts.cp.Metadata),
	}
	ctx, observed := e.observeRun(ctx, req, ts.values)
	sink(event.Event{Type: event.RunStart, Payload: map[string]any{"thread_id": req.ThreadID, "run_id": req.RunID}})
	err = r.execute(ctx)
	e.remember(req.ThreadID, r.ts, err)
	res := r.finish(err)
	observed.End(res)
	return res, err
}

func (e *Engine) recursionLimit(req Request) int {
	switch {
	case req.RecursionLimit > 0:
		return req.RecursionLimit
	case e.opts.RecursionLimit > 0:
		return e.opts.RecursionLimit
	case e.graph.Spec.Defaults.RecursionLimit > 0:
		return e.graph.Spec.Defaults.RecursionLimit
	}
	return 25
}

func (r *run) finish(err error) *Result {
	res := r.res
	res.State = copyState(r.ts.values)
	res.CheckpointID = r.ts.cp.ID
	switch {
	case err != nil:
		res.Status = StatusError
		res.Err = err
		r.sink(event.Event{Type: event.Error, Payload: map[string]any{"message": err.Error()}})
	case len(r.ts.cp.Interrupts) > 0:
		res.Status = StatusInterrupted
		res.Interrupts = r.ts.cp.Interrupts
	default:
		res.Status = StatusCompleted
	}
	r.sink(event.Event{Type: event.Done, Payload: map[string]any{
		"thread_id": res.ThreadID, "run_id": res.RunID, "status": res.Status, "checkpoint_id": res.CheckpointID,
	}})
	return res
}

func (r *run) execute(ctx context.Context) error {
	ts := r.ts
	switch {
	case len(ts.cp.Interrupts) > 0:
		if r.req.Resume == nil {
			if r.req.Input != nil {
				return fmt.Errorf("thread %q is waiting on interrupt %s (node %q); resume it instead of sending new input",
					r.req.ThreadID, ts.cp.Interrupts[0].ID, ts.cp.Interrupts[0].Node)
			}
			return nil // still waiting: report the pending interrupts again
		}
		done, err := r.resume(ctx)
		if err != nil || !done {
			return err
		}
	case r.req.Resume != nil:
		return fmt.Errorf("thread %q has no pending interrupt to resume", r.req.ThreadID)
	case r.req.Input != nil || !ts.exists:
		if err := r.startInput(ctx); err != nil {
			return err
		}
	default:
		if _, err := r.recoverInput(); err != nil {
			return err
		}
	}
	steps := 0
	for len(ts.cp.Next) > 0 {
		if steps >= r.limit {
			return fmt.Errorf("recursion limit of %d steps reached without reaching END; the last nodes were %s (raise recursion_limit if the loop is intended)",
				r.limit, r.recentPath())
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run canceled before step %d: %w", ts.cp.Step+1, err)
		}
		stopped, err := r.step(ctx)
		steps++
		r.res.Steps = steps
		if err != nil || stopped {
			return err
		}
	}
	return nil
}

func (r *run) recentPath() string {
	p := r.res.Path
	if len(p) > 8 {
		p = p[len(p)-8:]
	}
	return strings.Join(p, " → ")
}

// inputTask is the pending-write task id under which a turn's input is saved
// when it is carried into the first step's checkpoint.
const inputTask = "__input__"

// startInput applies the request's input and schedules the start node.
//
// On an idle thread (its last run ended, nothing pending) the input is saved as
// a pending write against the last checkpoint and its changes are carried into
// the first step's checkpoint, so a turn costs one checkpoint, not two; a crash
// before that step completes finds the input there (see recoverInput). A new
// thread, or one with leftovers of an unfinished run, gets an input checkpoint.
func (r *run) startInput(ctx context.Context) error {
	ts := r.ts
	r.joins = joinState{}
	start := r.e.graph.Start
	next := []checkpoint.Task{{ID: start, Node: start}}
	if ts.exists && len(ts.cp.Next) == 0 && len(ts.pending) == 0 {
		data, err := json.Marshal(r.req.Input)
		if err != nil {
			return fmt.Errorf("input: %w", err)
		}
		if err := r.applyInput(r.req.Input); err != nil {
			return err
		}
		pw := checkpoint.PendingWrite{TaskID: inputTask, Node: inputWriter, Update: data, Kind: inputWriter}
		if err := r.e.cp.PutWrites(ctx, r.req.ThreadID, ts.cp.ID, pw); err != nil {
			return fmt.Errorf("save input: %w", err)
		}
		ts.cp.Next = next
		return nil
	}
	changes, err := r.inputChanges(r.req.Input)
	if err != nil {
		return err
	}
	return r.commit(ctx, "input", changes, next, nil, []string{inputWriter}, nil)
}

// applyInput applies input to the state and keeps its changes for the next commit.
func (r *run) applyInput(input map[string]any) error {
	changes, err := r.inputChanges(input)
	if err != nil {
		return err
	}
	r.carry = changes
	r.carryWriters = []string{inputWriter}
	return nil
}

func (r *run) inputChanges(input map[string]any) (map[string]*fieldChange, error) {
	if len(input) == 0 {
		return nil, nil
	}
	changes, err := applyWrites(r.e.graph, r.ts.values, []write{{taskID: inputWriter, node: inputWriter, update: input}})
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	return changes, nil
}

// recoverInput continues a turn whose input was saved as a pending write but
// whose first step never completed (the process died). It reports whether
// there was such an input.
func (r *run) recoverInput() (bool, error) {
	ts := r.ts
	if len(ts.cp.Next) > 0 || len(ts.cp.Interrupts) > 0 {
		return false, nil
	}
	for _, pw := range ts.pending {
		if pw.TaskID != inputTask {
			continue
		}
		var input map[string]any
		if err := json.Unmarshal(pw.Update, &input); err != nil {
			return false, fmt.Errorf("saved input: %w", err)
		}
		if err := r.applyInput(input); err != nil {
			return false, err
		}
		start := r.e.graph.Start
		ts.cp.Next = []checkpoint.Task{{ID: start, Node: start}}
		return true, nil
	}
	return false, nil
}

// commit writes a checkpoint after ts.values changed by changes.
func (r *run) commit(ctx context.Context, source string, changes map[string]*fieldChange, next []checkpoint.Task,
	interrupts []checkpoint.Interrupt, writers []string, trace []map[string]any) error {
	ts := r.ts
	if r.carry != nil {
		changes = mergeChanges(r.carry, changes)
		writers = append(append([]string(nil), r.carryWriters...), writers...)
		r.carry, r.carryWriters = nil, nil
	}
	versions := make(map[string]int64, len(ts.versions)+len(changes))
	for k, v := range ts.versions {
		versions[k] = v
	}
	blobs, err := blobsFor(ts.values, versions, changes)
	if err != nil {
		return err
	}
	step := ts.cp.Step
	if source == "loop" {
		step++
	}
	meta := map[string]any{"run_id": r.req.RunID}
	if trace != nil {
		meta["tasks"] = trace
	}
	r.joins.store(meta)
	cp := checkpoint.Checkpoint{
		ThreadID:   r.req.ThreadID,
		ID:         checkpoint.NewID(step),
		ParentID:   ts.cp.ID,
		Step:       step,
		Next:       next,
		Interrupts: interrupts,
		GraphName:  r.e.graph.Spec.Name,
		GraphHash:  shortHash(r.e.graph.Spec.Hash),
		Versions:   versions,
		Source:     source,
		Writers:    writers,
		Metadata:   meta,
		CreatedAt:  r.e.opts.Now(),
	}
	if err := r.e.cp.Put(ctx, cp, blobs); err != nil {
		return fmt.Errorf("write checkpoint at step %d: %w", step, err)
	}
	ts.cp = cp
	ts.versions = versions
	ts.pending = nil
	ts.exists = true
	nextNodes := make([]string, len(next))
	for i, t := range next {
		nextNodes[i] = t.ID
	}
	r.sink(event.Event{Type: event.Checkpoint, Step: step, Payload: map[string]any{
		"checkpoint_id": cp.ID, "step": step, "source": source, "next": nextNodes,
	}})
	for _, in := range interrupts {
		r.sink(event.Event{Type: event.Interrupt, Node: in.Node, Step: step, Payload: map[string]any{
			"id": in.ID, "node": in.Node, "field": in.Field, "when": in.When, "payload": in.Payload,
		}})
	}
	return nil
}

// resume answers pending interrupts. It reports whether the thread can go on.
func (r *run) resume(ctx context.Context) (bool, error) {
	ts := r.ts
	pending := ts.cp.Interrupts
	values, err := resumeValues(r.req.ThreadID, r.req.Resume, pending)
	if err != nil {
		return false, err
	}
	var writes []write
	var remaining []checkpoint.Interrupt
	var answered []checkpoint.Interrupt
	for _, in := range pending {
		v, ok := values[in.ID]
		if !ok {
			remaining = append(remaining, in)
			continue
		}
		answered = append(answered, in)
		switch in.When {
		case "before":
			r.skipBefore[in.TaskID] = true
		case "during":
			writes = append(writes, write{taskID: in.TaskID, node: in.Node, update: map[string]any{in.Field: v}})
		}
	}
	changes, err := applyWrites(r.e.graph, ts.values, writes)
	if err != nil {
		return false, fmt.Errorf("resume: %w", err)
	}
	next := append([]checkpoint.Task(nil), ts.cp.Next...)
	scope := r.e.scope(ts.values)
	var writers []string
	for _, in := range answered {
		writers = append(writers, in.Node)
		if in.When != "during" {
			continue
		}
		r.res.Path = append(r.res.Path, in.Node)
		r.joins.arrive(r.e, in.Node)
		succ, err := r.successors(in.Node, scope)
		if err != nil {
			return false, err
		}
		next = r.schedule(next, succ)
	}
	if err := r.commit(ctx, "resume", changes, next, remaining, writers, nil); err != nil {
		return false, err
	}
	return len(remaining) == 0, nil
}

func resumeValues(thread string, res *Resume, pending []checkpoint.Interrupt) (map[string]any, error) {
	known := map[string]bool{}
	ids := make([]string, len(pending))
	for i, in := range pending {
		known[in.ID] = true
		ids[i] = in.ID
	}
	values := map[string]any{}
	switch {
	case res.Values != nil:
		for id, v := range res.Values {
			values[id] = v
		}
	case res.InterruptID != "":
		values[res.InterruptID] = res.Value
	case len(pending) == 1:
		values[pending[0].ID] = res.Value
	default:
		return nil, fmt.Errorf("thread %q has %d pending interrupts (%s): name the one to resume", thread, len(pending), strings.Join(ids, ", "))
	}
	for id := range values {
		if !known[id] {
			return nil, fmt.Errorf("thread %q has no pending interrupt %q (pending: %s)", thread, id, strings.Join(ids, ", "))
		}
	}
	return values, nil
}

// schedule adds successor tasks to next: plain node tasks once each, joins
// only when every node they wait for has completed, map tasks as they come.
func (r *run) schedule(next []checkpoint.Task, succ []checkpoint.Task) []checkpoint.Task {
	have := make(map[string]bool, len(next))
	for _, t := range next {
		have[t.ID] = true
	}
	for _, t := range succ {
		if t.Node == graph.End || have[t.ID] {
			continue
		}
		if n := r.e.graph.Nodes[t.Node]; n != nil && len(n.WaitFor) > 0 && !t.HasItem {
			if !r.joins.trigger(n) {
				continue
			}
		}
		have[t.ID] = true
		next = append(next, t)
	}
	return next
}

func matchesAny(list []string, name string) bool {
	for _, s := range list {
		if s == name || s == "*" {
			return true
		}
	}
	return false
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return fmt.Sprintf("%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b)
}

// joinState remembers, for each join node, which of the nodes it waits for
// have completed, and whether an edge has led to it.
type joinState map[string]map[string]bool

const triggeredKey = "\x00triggered"

func loadJoins(meta map[string]any) joinState {
	js := joinState{}
	raw, _ := meta["joins"].(map[string]any)
	for join, v := range raw {
		list, _ := v.([]any)
		set := map[string]bool{}
		for _, item := range list {
			if s, ok := item.(string); ok {
				set[s] = true
			}
		}
		js[join] = set
	}
	return js
}

func (js joinState) store(meta map[string]any) {
	if len(js) == 0 {
		return
	}
	out := make(map[string]any, len(js))
	for join, set := range js {
		out[join] = sortedKeys(set)
	}
	meta["joins"] = out
}

// arrive records that node completed, for every join waiting for it.
func (js joinState) arrive(e *Engine, node string) {
	for _, join := range e.joinsOf[node] {
		if js[join] == nil {
			js[join] = map[string]bool{}
		}
		js[join][node] = true
	}
}

// trigger records that an edge led to the join n and reports whether it can
// run now, that is whether every node it waits for has completed. A join that
// runs starts waiting afresh.
func (js joinState) trigger(n *compile.Node) bool {
	set := js[n.Name]
	if set == nil {
		set = map[string]bool{}
		js[n.Name] = set
	}
	set[triggeredKey] = true
	for _, w := range n.WaitFor {
		if !set[w] {
			return false
		}
	}
	delete(js, n.Name)
	return true
}
