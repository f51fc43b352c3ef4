package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// inputWriter is the writer name of a run's input in checkpoints and errors.
const inputWriter = "input"

// run is the state of one Run call.
type run struct {
	e    *Engine
	req  Request
	ts   *threadState
	sink event.Sink
	// quiet is set when the caller gave no sink: lifecycle events (node
	// start and end, checkpoints), which only a sink would see, are not
	// built.
	quiet bool
	res   *Result
	limit int
	// skipBefore holds task ids released from an interrupt_before by a resume.
	skipBefore map[string]bool
	// joins tracks wait_for joins across steps.
	joins joinState
	// carry holds changes applied to the state but not yet checkpointed (a
	// turn's input, a command's update), merged into the next commit.
	carry        map[string]*fieldChange
	carryWriters []string
	// errorSaved is set once a failure has been recorded with the thread.
	errorSaved bool
	// stepping is set when the run starts its steps: a failure before is a
	// refused request, which leaves the thread as it was.
	stepping bool
	// forkedFrom is the id of the older checkpoint the run started from
	// (Request.CheckpointID when it is not the newest), else empty.
	forkedFrom string
	// w writes the run's checkpoints behind it (async and exit
	// durability); nil when each is written as it is made.
	w *writer

	// What a step reuses from the one before, so as not to allocate it
	// again (see applyStep, traceWrites and planStep).
	runID     any // the run id as stored in each checkpoint's metadata
	order     []int
	writes    []write
	traced    map[string]tracedWrites
	one       [1]*outcome
	plan      stepPlan
	nextState map[string]any
	nextScope map[string]any
}

// ErrCheckpointNotFound is returned when a request names a checkpoint the
// thread does not have.
var ErrCheckpointNotFound = errors.New("checkpoint not found")

// Run executes the request on its thread and returns when the thread reaches
// END, an interrupt, an error or the recursion limit. Events are delivered to
// sink as they happen, the last being done. The returned error is also in
// Result.Err; a nil Result means the request itself was invalid.
func (e *Engine) Run(ctx context.Context, req Request, sink event.Sink) (*Result, error) {
	// With no sink nobody listens: the run builds no lifecycle events.
	quiet := sink == nil
	if quiet {
		sink = event.Discard
	}
	if req.ThreadID == "" {
		return nil, errors.New("run: a thread id is required")
	}
	if req.RunID == "" {
		req.RunID = "run-" + randomHex(8)
	}
	for _, g := range req.Goto {
		if _, ok := e.graph.Nodes[g.Node]; !ok {
			return nil, fmt.Errorf("run thread %q: goto %q: graph %q has no such node", req.ThreadID, g.Node, e.graph.Spec.Name)
		}
	}
	if err := e.checkRequest(req); err != nil {
		return nil, fmt.Errorf("run thread %q: %w", req.ThreadID, err)
	}
	if !e.life.prepared.Load() {
		if err := e.Preflight(ctx); err != nil {
			return nil, fmt.Errorf("run thread %q: prepare the graph's nodes: %w", req.ThreadID, err)
		}
	}

	ts, err := e.open(ctx, req.ThreadID, req.CheckpointID)
	if err != nil {
		return nil, err
	}
	if req.fresh {
		ts = e.freshState(ts)
	}
	if ts.forkedFrom != "" && req.Input == nil {
		// New input drops the tasks; others go on where they wait.
		if err := e.carryChildren(ctx, req.ThreadID, ts); err != nil {
			return nil, err
		}
	}
	r := &run{
		e: e, req: req, ts: ts, sink: sink, quiet: quiet,
		res:        &Result{ThreadID: req.ThreadID, RunID: req.RunID},
		limit:      e.recursionLimit(req),
		skipBefore: map[string]bool{},
		joins:      loadJoins(ts.cp.Metadata),
		forkedFrom: ts.forkedFrom,
	}
	ts.forkedFrom = ""
	ctx, observed := e.observeRun(ctx, req, ts.values)
	r.w = e.newWriter(ctx, req)
	if r.w != nil {
		e.writers.Store(req.ThreadID, r.w)
	}
	sink(event.Event{Type: event.RunStart, Payload: map[string]any{"thread_id": req.ThreadID, "run_id": req.RunID}})
	err = r.execute(ctx)
	hold := r.w != nil && endWritesHeld(ctx)
	if !hold {
		if werr := r.endWrites(); werr != nil && err == nil {
			err = werr
		}
		if err == nil {
			e.boundChains(ctx, req.ThreadID, r.ts)
		}
	}
	e.remember(req.ThreadID, r.ts, err)
	res := r.finish(ctx, err)
	if hold {
		res.EndWrites = r.heldEndWrites(ctx, err)
	}
	observed.End(res)
	return res, err
}

// open loads the thread at checkpointID, or at its newest checkpoint when
// checkpointID is empty or names the newest. Opened at an older checkpoint,
// the thread gets a version floor above every blob version of the thread,
// so that the new branch never overwrites another branch's values.
func (e *Engine) open(ctx context.Context, threadID, checkpointID string) (*threadState, error) {
	ts, err := e.loadLatest(ctx, threadID)
	if err != nil {
		return nil, err
	}
	if checkpointID == "" || (ts.exists && ts.cp.ID == checkpointID) {
		return ts, nil
	}
	base, err := e.cp.Get(ctx, threadID, checkpointID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, fmt.Errorf("thread %q: %w: the thread has no checkpoint %q", threadID, ErrCheckpointNotFound, checkpointID)
	}
	if err != nil {
		return nil, fmt.Errorf("thread %q: load checkpoint %s: %w", threadID, checkpointID, err)
	}
	fork, err := e.loadThread(base)
	if err != nil {
		return nil, err
	}
	fork.floor = max(fork.floor, highestVersion(ts.cp), highestVersion(base.Checkpoint))
	// The pending writes of the old checkpoint belong to the step that
	// followed it in its branch; the fork runs its own.
	fork.pending = nil
	fork.forkedFrom = base.ID
	return fork, nil
}

func highestVersion(cp checkpoint.Checkpoint) int64 {
	h := cp.VersionFloor
	for _, v := range cp.Versions {
		h = max(h, v)
	}
	return h
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

func (r *run) finish(ctx context.Context, err error) *Result {
	res := r.res
	res.State = copyState(r.ts.values)
	res.CheckpointID = r.ts.cp.ID
	switch {
	case err != nil:
		res.Status = StatusError
		res.Err = err
		r.saveError(ctx, "", "", err)
		r.sink(event.Event{Type: event.Error, Payload: map[string]any{"message": err.Error()}})
	case len(r.ts.cp.Interrupts) > 0 || r.ts.breakpoint != nil && res.Breakpoint != nil:
		res.Status = StatusInterrupted
		res.Interrupts = r.ts.cp.Interrupts
	default:
		res.Status = StatusCompleted
	}
	done := map[string]any{
		"thread_id": res.ThreadID, "run_id": res.RunID, "status": res.Status, "checkpoint_id": res.CheckpointID,
	}
	if b := res.Breakpoint; b != nil && res.Status == StatusInterrupted {
		// Where the thread stopped, for a client to say.
		done["breakpoint"] = map[string]any{"when": b.When, "nodes": b.Nodes}
	}
	r.sink(event.Event{Type: event.Done, Payload: done})
	return res
}

// ErrorTask is the task id under which a failure that no task caused (an
// invalid update, the recursion limit) is recorded with the thread.
const ErrorTask = "__error__"

// saveError records a failure with the thread, as a pending write of kind
// "error" against its checkpoint (LangGraph's ERROR write): the thread then
// shows that its last run failed, and where. A cancelled run is not a
// failure and records nothing.
func (r *run) saveError(ctx context.Context, taskID, node string, err error) {
	if r.errorSaved || !r.stepping || !r.ts.exists || ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return
	}
	if taskID == "" {
		taskID = ErrorTask
	}
	data, _ := json.Marshal(map[string]any{"error": err.Error()})
	pw := checkpoint.PendingWrite{TaskID: taskID, Node: node, Update: data, Kind: writeError}
	if perr := r.putWrites(context.WithoutCancel(ctx), pw); perr == nil {
		r.errorSaved = true
	}
}

// putWrites saves a pending write against the run's current checkpoint:
// in exit mode behind the run, with its checkpoints (see writer); else now,
// once the checkpoints queued before it are written, so that a finished
// task's update is saved before the task's end is reported and a resume
// does not run it again.
func (r *run) putWrites(ctx context.Context, pw checkpoint.PendingWrite) error {
	if r.w != nil {
		if !r.w.async {
			return r.w.putWrites(r.req.ThreadID, r.ts.cp.ID, pw)
		}
		if err := r.w.flush(); err != nil {
			return err
		}
	}
	return r.e.cp.PutWrites(ctx, r.req.ThreadID, r.ts.cp.ID, pw)
}

// endWrites writes what the run's writer holds, before anyone is told the
// run ended; later writes of the run (its failure) are written at once.
func (r *run) endWrites() error {
	if r.w == nil {
		return nil
	}
	err := r.w.close()
	r.e.writers.CompareAndDelete(r.req.ThreadID, r.w)
	r.w = nil
	if err != nil {
		return fmt.Errorf("write the run's checkpoints: %w", err)
	}
	return nil
}

func (r *run) execute(ctx context.Context) error {
	ts := r.ts
	switch {
	case r.req.Resume != nil && len(ts.cp.Interrupts) == 0 && ts.breakpoint != nil:
		// A breakpoint asks nothing: as in LangGraph, a resume goes on from
		// it as a run with no input does.
		if err := r.command(); err != nil {
			return err
		}
		r.passBreakpoints()
	case r.req.Resume != nil:
		if len(ts.cp.Interrupts) == 0 {
			return fmt.Errorf("thread %q has no pending interrupt to resume", r.req.ThreadID)
		}
		if err := r.command(); err != nil {
			return err
		}
		done, err := r.resume(ctx)
		if err != nil || !done {
			return err
		}
	case r.req.Input != nil || !ts.exists:
		input := r.req.Input
		if input == nil {
			input = map[string]any{}
		}
		if err := r.startInput(ctx, input); err != nil {
			return err
		}
		if err := r.command(); err != nil {
			return err
		}
		if stopped, err := r.startTurn(ctx); err != nil || stopped {
			return err
		}
	default:
		started, err := r.proceed()
		if err != nil {
			return err
		}
		if err := r.command(); err != nil {
			return err
		}
		if started {
			if stopped, err := r.startTurn(ctx); err != nil || stopped {
				return err
			}
		} else {
			r.passBreakpoints()
		}
		if len(ts.cp.Interrupts) > 0 {
			// Still waiting: report the pending interrupts again. A replay
			// of an older checkpoint makes its copy the thread's newest, so
			// that the answers go to the branch replayed.
			return r.replayWaiting(ctx)
		}
	}
	steps := 0
	r.stepping = true
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
	if r.carry != nil {
		// A command's update with nothing left to run.
		return r.commit(ctx, commitSpec{source: checkpoint.SourceUpdate})
	}
	return nil
}

// proceed prepares a run with no input and no resume to go on from the
// thread's checkpoint. It reports whether the run starts a turn: an input
// checkpoint's input, or a turn's input an earlier version saved, is applied,
// to be written with the turn's start checkpoint (see startTurn).
func (r *run) proceed() (started bool, err error) {
	ts := r.ts
	if len(ts.cp.Input) > 0 {
		var input map[string]any
		if err := json.Unmarshal(ts.cp.Input, &input); err != nil {
			return false, fmt.Errorf("the input saved in checkpoint %s: %w", ts.cp.ID, err)
		}
		return true, r.applyInput(input)
	}
	return r.recoverInput()
}

// passBreakpoints has a run that goes on from the thread's checkpoint not
// stop before the tasks it starts with, as in LangGraph: the thread may
// have stopped before them (interrupt_before), and a run that goes on from
// a breakpoint passes it. Later steps stop at the request's breakpoints.
func (r *run) passBreakpoints() {
	for _, t := range r.ts.cp.Next {
		r.skipBefore[t.ID] = true
	}
}

// command applies the request's update and goto.
func (r *run) command() error {
	ts := r.ts
	if len(r.req.Update) > 0 {
		update := r.e.stampMessages(r.req.Update, nil)
		changes, err := applyWrites(r.e.graph, ts.values, []write{{taskID: commandWriter, node: commandWriter, update: update}})
		if err != nil {
			return fmt.Errorf("command update: %w", err)
		}
		r.carry = mergeChanges(r.carry, changes)
		r.carryWriters = append(r.carryWriters, commandWriter)
	}
	if len(r.req.Goto) == 0 {
		return nil
	}
	var tasks []checkpoint.Task
	if r.req.Resume == nil {
		// Interrupts not answered are dropped: the thread goes where it is sent.
		ts.cp.Interrupts = nil
	}
	for i, g := range r.req.Goto {
		t := checkpoint.Task{ID: g.Node, Node: g.Node}
		if g.HasInput {
			t = checkpoint.Task{ID: fmt.Sprintf("%s#goto%d", g.Node, i), Node: g.Node, Item: g.Input, HasItem: true}
		}
		tasks = append(tasks, t)
	}
	ts.cp.Next = r.schedule(append([]checkpoint.Task(nil), ts.cp.Next...), tasks)
	return nil
}

// commandWriter is the writer name of a command's update.
const commandWriter = "command"

func (r *run) recentPath() string {
	p := r.res.Path
	if len(p) > 8 {
		p = p[len(p)-8:]
	}
	return strings.Join(p, " → ")
}

// inputTask is the pending-write task id under which earlier versions saved
// a turn's input before its first step.
const inputTask = "__input__"

// startInput begins a turn as LangGraph does: it writes the input
// checkpoint (the state before the input, the input pending, the start
// node next) and applies the input to the state, to be written with the
// turn's start checkpoint (see startTurn). Pending interrupts and next
// tasks of the thread are dropped.
func (r *run) startInput(ctx context.Context, input map[string]any) error {
	r.joins = joinState{}
	r.skipBefore = map[string]bool{}
	input = r.e.stampMessages(input, nil)
	data, err := jsonenc.Append(nil, input)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	start := r.e.graph.Start
	next := []checkpoint.Task{{ID: start, Node: start}}
	if err := r.commit(ctx, commitSpec{source: checkpoint.SourceInput, next: next, input: data}); err != nil {
		return err
	}
	return r.applyInput(input)
}

// startTurn writes a turn's start checkpoint (LangGraph's step 0, source
// "loop"): the turn's input, and a command's update, applied; the start
// node, and a command's goto, next. It is written before those tasks run,
// so that while they run (a slow model call) the thread shows the input,
// and a run cancelled or a process dying then leaves it there; going on
// from the start checkpoint runs them with the input applied once. It
// reports whether the run stops there, at a breakpoint before the tasks.
func (r *run) startTurn(ctx context.Context) (stopped bool, err error) {
	next := r.ts.cp.Next
	b := r.breakpointBefore(next)
	if err := r.commit(ctx, commitSpec{source: checkpoint.SourceLoop, next: next, breakpoint: b}); err != nil {
		return false, err
	}
	r.res.Breakpoint = b
	return b != nil, nil
}

// applyInput applies input to the state and keeps its changes for the next commit.
func (r *run) applyInput(input map[string]any) error {
	changes, err := r.inputChanges(input)
	if err != nil {
		return err
	}
	r.carry = mergeChanges(r.carry, changes)
	r.carryWriters = append(r.carryWriters, inputWriter)
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

// recoverInput continues a turn whose input an earlier version saved as a
// pending write, the process dying before the first step completed. It
// reports whether there was such an input.
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

// commitSpec describes a checkpoint to write.
type commitSpec struct {
	source     checkpoint.Source
	changes    map[string]*fieldChange
	next       []checkpoint.Task
	interrupts []checkpoint.Interrupt
	writers    []string
	trace      []map[string]any
	// input is the pending input of an input checkpoint.
	input json.RawMessage
	// sibling writes the checkpoint next to the current one (same parent),
	// as a copy of it.
	sibling bool
	// breakpoint is the breakpoint the run stops at with this checkpoint,
	// which records it when tasks are left. An update or a copy of a
	// thread stopped at one, with tasks left, stays stopped there.
	breakpoint *Breakpoint
}

// commit writes a checkpoint after ts.values changed by c.changes.
func (r *run) commit(ctx context.Context, c commitSpec) error {
	ts := r.ts
	changes, writers := c.changes, c.writers
	if r.carry != nil {
		changes = mergeChanges(r.carry, changes)
		writers = append(append([]string(nil), r.carryWriters...), writers...)
		r.carry, r.carryWriters = nil, nil
	}
	blobs, versions, floor, err := blobsFor(ts.values, ts.versions, changes, ts.floor)
	if err != nil {
		return err
	}
	step := ts.cp.Step
	switch c.source {
	case checkpoint.SourceLoop:
		step++
	case checkpoint.SourceUpdate, checkpoint.SourceFork:
		// As LangGraph numbers an update_state (0 on a new thread).
		step++
		if !ts.exists {
			step = 0
		}
	case checkpoint.SourceInput:
		step = -1
		if ts.exists {
			step = ts.cp.Step + 1
		}
	}
	meta := make(map[string]any, len(r.req.Metadata)+3)
	for k, v := range r.req.Metadata {
		meta[k] = v
	}
	if r.runID == nil {
		r.runID = r.req.RunID
	}
	meta["run_id"] = r.runID
	if c.trace != nil {
		meta["tasks"] = c.trace
	}
	bp := c.breakpoint
	if bp == nil && (c.source == checkpoint.SourceUpdate || c.source == checkpoint.SourceFork) {
		bp = ts.breakpoint
	}
	if len(c.next) == 0 {
		bp = nil // with no task left, the thread is stopped at nothing
	}
	if bp != nil {
		meta[breakpointKey] = bp.metadata()
	}
	r.joins.store(meta)
	parent := ts.cp.ID
	if c.sibling {
		parent = ts.cp.ParentID
	}
	cp := checkpoint.Checkpoint{
		ThreadID:     r.req.ThreadID,
		ID:           checkpoint.NewID(),
		ParentID:     parent,
		Step:         step,
		Next:         c.next,
		Interrupts:   c.interrupts,
		GraphName:    r.e.graph.Spec.Name,
		GraphHash:    shortHash(r.e.graph.Spec.Hash),
		Versions:     versions,
		Source:       c.source,
		Writers:      writers,
		Metadata:     meta,
		CreatedAt:    r.e.opts.Now(),
		Input:        c.input,
		VersionFloor: floor,
	}
	if r.w != nil {
		if err := r.w.put(cp, blobs); err != nil {
			return fmt.Errorf("write the checkpoints before step %d: %w", step, err)
		}
	} else if err := r.e.cp.Put(ctx, cp, blobs); err != nil {
		return fmt.Errorf("write checkpoint at step %d: %w", step, err)
	}
	ts.cp = cp
	ts.breakpoint = bp
	ts.versions = versions
	ts.floor = floor
	for _, b := range blobs {
		switch {
		case b.Base == 0:
			delete(ts.deltas, b.Field)
		case ts.deltas == nil:
			ts.deltas = map[string]int{b.Field: 1}
		default:
			ts.deltas[b.Field]++
		}
	}
	ts.pending = nil
	ts.exists = true
	if r.quiet {
		return nil
	}
	nextNodes := make([]string, len(c.next))
	for i, t := range c.next {
		nextNodes[i] = t.ID
	}
	r.sink(event.Event{Type: event.Checkpoint, Step: step, Payload: map[string]any{
		"checkpoint_id": cp.ID, "step": step, "source": string(c.source), "next": nextNodes,
	}, Detail: storedValues(ts.values, cp.Versions)})
	for _, in := range c.interrupts {
		payload := map[string]any{"id": in.ID, "node": in.Node, "field": in.Field, "when": in.When, "payload": in.Payload}
		if in.Namespace != "" {
			payload["ns"] = in.Namespace
		}
		r.sink(event.Event{Type: event.Interrupt, Node: in.Node, Step: step, Payload: payload})
	}
	return nil
}

// storedValues returns the values of the fields a checkpoint stores (those
// it has versions of), as a state copy (see copyState).
func storedValues(values map[string]any, versions map[string]int64) map[string]any {
	out := make(map[string]any, len(versions))
	for k := range versions {
		v := values[k]
		if l, ok := v.([]any); ok {
			v = l[:len(l):len(l)]
		}
		out[k] = v
	}
	return out
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
	childAnswers := map[string]map[string]any{}
	for _, in := range pending {
		v, ok := values[in.ID]
		if !ok {
			remaining = append(remaining, in)
			continue
		}
		answered = append(answered, in)
		if in.Namespace != "" {
			if childAnswers[in.TaskID] == nil {
				childAnswers[in.TaskID] = map[string]any{}
			}
			childAnswers[in.TaskID][in.ID] = v
			continue
		}
		writes = append(writes, write{taskID: in.TaskID, node: in.Node, update: map[string]any{in.Field: v}})
	}
	changes, err := applyWrites(r.e.graph, ts.values, writes)
	if err != nil {
		return false, fmt.Errorf("resume: %w", err)
	}
	next := withChildAnswers(ts.cp.Next, childAnswers)
	scope := r.e.scope(ts.values)
	var writers []string
	for _, in := range answered {
		writers = append(writers, in.Node)
		if in.Namespace != "" {
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
	if len(r.req.Goto) > 0 {
		// The goto tasks are in the next step; interrupts left unanswered are dropped.
		remaining = nil
	}
	if answersOnlyChildren(answered, remaining) && len(r.req.Goto) == 0 {
		// The answers go to the subgraphs in the step that runs their tasks
		// again; no checkpoint is written before it, so that an answer a
		// subgraph refuses leaves its interrupt pending here too.
		ts.cp.Next, ts.cp.Interrupts = next, nil
		return true, nil
	}
	// The answered nodes count as having run: a breakpoint before what
	// follows them stops the run at this checkpoint.
	var b *Breakpoint
	if len(remaining) == 0 {
		b = r.breakpointBefore(next)
	}
	if err := r.commit(ctx, commitSpec{source: checkpoint.SourceResume, changes: changes, next: next, interrupts: remaining, writers: writers, breakpoint: b}); err != nil {
		return false, err
	}
	if b != nil {
		r.res.Breakpoint = b
		return false, nil
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
	if m, ok := res.Value.(map[string]any); ok && res.Values == nil && res.InterruptID == "" && len(m) > 0 {
		byID := true
		for id := range m {
			byID = byID && known[id]
		}
		if byID {
			res = &Resume{Values: m}
		}
	}
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
	if len(next) == 0 && len(succ) == 1 {
		// The common step: one node follows. Its list is returned as it
		// is (clipped, so that appending to it copies).
		t := succ[0]
		if t.Node == graph.End {
			return nil
		}
		if n := r.e.graph.Nodes[t.Node]; n == nil || len(n.WaitFor) == 0 || t.HasItem {
			return succ[:1:1]
		}
	}
	// Lists of a few tasks are searched; a map is built only for long ones.
	var have map[string]bool
	if len(next)+len(succ) > 16 {
		have = make(map[string]bool, len(next)+len(succ))
		for _, t := range next {
			have[t.ID] = true
		}
	}
	scheduled := func(id string) bool {
		if have != nil {
			return have[id]
		}
		return slices.ContainsFunc(next, func(t checkpoint.Task) bool { return t.ID == id })
	}
	for _, t := range succ {
		if t.Node == graph.End || scheduled(t.ID) {
			continue
		}
		if n := r.e.graph.Nodes[t.Node]; n != nil && len(n.WaitFor) > 0 && !t.HasItem {
			if !r.joins.trigger(n) {
				continue
			}
		}
		if have != nil {
			have[t.ID] = true
		}
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
