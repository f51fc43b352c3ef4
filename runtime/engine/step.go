package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/reducer"
)

// Kinds of pending writes.
const (
	writeUpdate    = "update"
	writeInterrupt = "interrupt"
	writeCaught    = "caught"
	// writeError records a failure (see run.saveError); it is never replayed.
	writeError = "error"
)

// outcome is the result of one task, as saved in its pending write.
type outcome struct {
	Update    node.Update            `json:"update,omitempty"`
	Interrupt *node.InterruptRequest `json:"interrupt,omitempty"`
	// CatchTo is the node a caught failure routes to.
	CatchTo string `json:"catch_to,omitempty"`
	Error   string `json:"error,omitempty"`
	Code    string `json:"code,omitempty"`

	// Child lists the interrupts a subgraph task's child stopped at.
	Child []checkpoint.Interrupt `json:"child_interrupts,omitempty"`

	// Usage sums the numeric fields of the node's usage events.
	Usage map[string]float64 `json:"usage,omitempty"`

	status   string        // ok, interrupted, caught or error, for node_end
	err      error         // an uncaught failure; never saved
	duration time.Duration // zero for a replayed write
	attempts int
	replayed bool
	// messageID is the id of the message the task's text events stream,
	// which the first message it writes gets.
	messageID string
	// boxedID is messageID as the value of a text event's message_id,
	// boxed once for all the task's text events.
	boxedID any
	mu      sync.Mutex
}

// replyID returns the id of the message the task's text events stream.
func (o *outcome) replyID() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.messageID == "" {
		o.messageID = reducer.NewMessageID()
	}
	return o.messageID
}

// replyIDValue is replyID as the message_id of the task's text events,
// boxed once for all of them.
func (o *outcome) replyIDValue() any {
	id := o.replyID()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.boxedID == nil {
		o.boxedID = id
	}
	return o.boxedID
}

func (o *outcome) addUsage(payload map[string]any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, v := range payload {
		var f float64
		switch n := v.(type) {
		case int:
			f = float64(n)
		case int64:
			f = float64(n)
		case float64:
			f = n
		default:
			continue
		}
		if o.Usage == nil {
			o.Usage = map[string]float64{}
		}
		o.Usage[k] += f
	}
}

func (o *outcome) kind() string {
	switch {
	case o.Interrupt != nil || len(o.Child) > 0:
		return writeInterrupt
	case o.CatchTo != "":
		return writeCaught
	}
	return writeUpdate
}

// scope builds the expression environment for a state.
func (e *Engine) scope(values map[string]any) map[string]any {
	vars := e.graph.Spec.Vars
	s := make(map[string]any, len(values)+len(vars)+1)
	for k, v := range vars {
		s[k] = v
	}
	for k, v := range values {
		s[k] = v
	}
	s["state"] = values
	return s
}

// step runs one super-step. It reports whether the run stopped at an interrupt.
// After the interrupts before its tasks, it runs in three phases: planStep
// (the tasks and what they read), executeStep (the nodes) and applyStep
// (reducers, routing and the checkpoint).
//
// A finished task's update is saved as a pending write, so that when another
// task of the step fails or the process dies, resuming does not run it again.
// A step of one task saves it only if the step does not reach its
// checkpoint (an invalid update, a routing error, a failed commit): the
// checkpoint, written right after, holds the update, and writing it twice
// would cost a second transaction per step.
func (r *run) step(ctx context.Context) (stopped bool, err error) {
	ts := r.ts
	var held *checkpoint.PendingWrite
	defer func() {
		if err != nil && held != nil {
			if perr := r.putWrites(context.WithoutCancel(ctx), *held); perr != nil {
				err = fmt.Errorf("%w (and its finished task's update was not saved: %v)", err, perr)
			}
		}
	}()
	tasks := ts.cp.Next
	if b := r.breakpointBefore(tasks); b != nil {
		// The run's first step (a step ends with its breakpoint before the
		// next): the checkpoint holds what the run applied before it.
		r.res.Breakpoint = b
		return true, r.commit(ctx, commitSpec{source: checkpoint.SourceInterrupt, next: tasks, breakpoint: b})
	}
	clear(r.skipBefore)
	r.plan = r.planStep(tasks)
	p := &r.plan
	var outcomes []*outcome
	var heldTask int
	outcomes, heldTask = r.executeStep(ctx, p)
	if heldTask >= 0 {
		// Encoded only when the step fails, which is when it is saved.
		defer func() {
			if err == nil {
				return
			}
			t := p.tasks[heldTask]
			if pw, perr := pendingWrite(t, outcomes[heldTask]); perr == nil {
				held = &pw
			} else {
				err = fmt.Errorf("%w (and its finished task's update was not saved: %v)", err, perr)
			}
		}()
	}
	return r.applyStep(ctx, *p, outcomes)
}

// stepPlan is what a super-step runs: its tasks, the updates an earlier
// attempt of the step saved for some of them, and the state they read.
type stepPlan struct {
	// no is the number of the step.
	no    int
	tasks []checkpoint.Task
	// saved holds the saved updates by task id; those tasks do not run again.
	saved map[string]checkpoint.PendingWrite
	// state and scope are what the tasks read: a copy of the values before
	// the step, and the expression scope over it.
	state, scope map[string]any
}

// planStep prepares the super-step that runs tasks from the current checkpoint.
func (r *run) planStep(tasks []checkpoint.Task) stepPlan {
	ts := r.ts
	var saved map[string]checkpoint.PendingWrite
	if len(ts.pending) > 0 {
		saved = make(map[string]checkpoint.PendingWrite, len(ts.pending))
	}
	for _, pw := range ts.pending {
		if pw.Kind != writeError {
			saved[pw.TaskID] = pw
		}
	}
	state, scope := r.nextState, r.nextScope
	r.nextState, r.nextScope = nil, nil
	if scope == nil {
		state = copyState(ts.values)
		scope = r.e.scope(state)
	}
	return stepPlan{no: ts.cp.Step + 1, tasks: tasks, saved: saved, state: state, scope: scope}
}

// prepareNext builds, from the values after a step's updates, the state
// copy and the expression scope the next step reads: routing reads the same
// scope, so it is built once for both.
func (r *run) prepareNext() map[string]any {
	if r.nextScope == nil {
		r.nextState = copyState(r.ts.values)
		r.nextScope = r.e.scope(r.nextState)
	}
	return r.nextScope
}

// executeStep runs the plan's tasks, concurrently up to the engine's limit, and
// returns their outcomes in task order. A task with a saved update is not
// run again: its outcome is read from the update. A finished task's update
// is saved as a pending write, except in a step of one task, where the
// task's index is returned as held (else -1) for the step to save its
// update only if it does not reach its checkpoint.
func (r *run) executeStep(ctx context.Context, p *stepPlan) (outcomes []*outcome, held int) {
	if len(p.tasks) == 1 {
		outcomes = r.one[:]
		if r.runOne(ctx, p, 0, outcomes) {
			return outcomes, 0
		}
		return outcomes, -1
	}
	return r.executeConcurrently(ctx, p), -1
}

// executeConcurrently runs the plan's tasks concurrently, up to the
// engine's limit, and returns their outcomes in task order.
func (r *run) executeConcurrently(ctx context.Context, p *stepPlan) []*outcome {
	outcomes := make([]*outcome, len(p.tasks))
	sem := make(chan struct{}, r.e.maxConcurrency())
	var wg sync.WaitGroup
	for i := range p.tasks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r.runOne(ctx, p, i, outcomes)
		}()
	}
	wg.Wait()
	return outcomes
}

// runOne runs the plan's task i, or replays its saved update, into
// outcomes[i]. It reports whether the task's update is held: a step of one
// task does not save it (see executeStep).
func (r *run) runOne(ctx context.Context, p *stepPlan, i int, outcomes []*outcome) (held bool) {
	t := p.tasks[i]
	if pw, ok := p.saved[t.ID]; ok {
		var o outcome
		if err := json.Unmarshal(pw.Update, &o); err == nil {
			o.replayed = true
			outcomes[i] = &o
			return false
		}
	}
	o := r.runTask(ctx, t, p.no, p.state, p.scope)
	outcomes[i] = o
	defer r.nodeEnd(t, p.no, o)
	if o.err != nil {
		return false
	}
	o.Update = r.e.stampMessages(o.Update, o.replyID)
	if o.Interrupt != nil && len(o.Interrupt.Update) > 0 {
		o.Interrupt.Update = r.e.stampMessages(o.Interrupt.Update, o.replyID)
	}
	if len(p.tasks) == 1 {
		return true
	}
	pw, err := pendingWrite(t, o)
	if err != nil {
		o.err = err
		return false
	}
	if err := r.putWrites(ctx, pw); err != nil {
		o.err = fmt.Errorf("node %q: save its update: %w", t.Node, err)
	}
	return false
}

// pendingWrite is the pending write that saves a finished task's outcome.
func pendingWrite(t checkpoint.Task, o *outcome) (checkpoint.PendingWrite, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return checkpoint.PendingWrite{}, fmt.Errorf("node %q: encode update: %w", t.Node, err)
	}
	return checkpoint.PendingWrite{TaskID: t.ID, Node: t.Node, Update: data, Kind: o.kind()}, nil
}

// applyStep applies what the plan's tasks finished, in task id order, through
// the fields' reducers, routes each task to its successors or to an
// interrupt, and commits the step's checkpoint. The first failed task ends
// the run with the finished tasks' writes saved against the current
// checkpoint. It reports whether the run stopped at an interrupt.
func (r *run) applyStep(ctx context.Context, p stepPlan, outcomes []*outcome) (stopped bool, err error) {
	ts, tasks := r.ts, p.tasks
	order := r.order[:0]
	for i := range tasks {
		order = append(order, i)
	}
	r.order = order
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(tasks[a].ID, tasks[b].ID) })
	writes := r.writes[:0]
	defer func() {
		clear(writes) // the buffer is kept for the next step, not the updates
		r.writes = writes[:0]
	}()
	trace := make([]map[string]any, 0, len(tasks))
	for _, i := range order {
		t, o := tasks[i], outcomes[i]
		if o.err != nil {
			err := fmt.Errorf("step %d: node %q failed: %w", p.no, t.Node, o.err)
			r.saveError(ctx, t.ID, t.Node, err)
			return false, err
		}
		r.res.Path = append(r.res.Path, t.Node)
		if len(o.Update) > 0 {
			writes = append(writes, write{taskID: t.ID, node: t.Node, update: o.Update})
		}
		if o.Interrupt != nil && len(o.Interrupt.Update) > 0 {
			writes = append(writes, write{taskID: t.ID, node: t.Node, update: o.Interrupt.Update})
		}
		trace = append(trace, r.traceEntry(t, o))
	}
	changes, err := applyWrites(r.e.graph, ts.values, writes)
	if err != nil {
		return false, fmt.Errorf("step %d: %w", p.no, err)
	}
	next, interrupts, writers, after, err := r.route(p, order, outcomes)
	if err != nil {
		return false, err
	}
	// The step stops at the breakpoints after its nodes, else at those
	// before the next step's tasks: as in LangGraph, its checkpoint is
	// where the thread stops.
	b := r.breakpointBefore(next)
	if len(after) > 0 {
		b = &Breakpoint{When: BreakpointAfter, Nodes: after}
	}
	if err := r.commit(ctx, commitSpec{source: checkpoint.SourceLoop, changes: changes, next: next, interrupts: interrupts, writers: writers, trace: trace, breakpoint: b}); err != nil {
		return false, err
	}
	if b != nil {
		r.res.Breakpoint = b
	}
	return len(interrupts) > 0 || b != nil, nil
}

// route decides, from the values after the step's updates, what follows each
// of the plan's tasks (taken in order): the tasks of the next step, and the
// interrupts the thread then waits for. writers names the tasks' nodes, after
// those of them the request stops after (interrupt_after).
func (r *run) route(p stepPlan, order []int, outcomes []*outcome) (next []checkpoint.Task, interrupts []checkpoint.Interrupt, writers, after []string, err error) {
	var newScope map[string]any // built for the first node whose edges read the state
	if len(order) == 1 {
		writers = r.e.writerOf[p.tasks[order[0]].Node]
	}
	for _, i := range order {
		t, o := p.tasks[i], outcomes[i]
		if len(order) > 1 || writers == nil {
			writers = append(writers, t.Node)
		}
		if len(o.Child) > 0 {
			// The task runs again on resume, to go on inside its subgraph.
			interrupts = append(interrupts, o.Child...)
			next = append(next, waitInChild(t, o.Child))
			continue
		}
		if o.Interrupt != nil {
			interrupts = append(interrupts, checkpoint.Interrupt{
				ID: t.Node + "-" + randomHex(6), Node: t.Node, TaskID: t.ID,
				Field: o.Interrupt.Field, Payload: o.Interrupt.Payload, When: "during",
			})
			continue
		}
		r.joins.arrive(r.e, t.Node)
		var succ []checkpoint.Task
		if o.CatchTo != "" {
			succ = []checkpoint.Task{{ID: o.CatchTo, Node: o.CatchTo}}
		} else {
			if newScope == nil && r.e.edgesReadState(t.Node) {
				newScope = r.prepareNext()
			}
			succ, err = r.successors(t.Node, newScope)
		}
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("step %d: %w", p.no, err)
		}
		next = r.schedule(next, succ)
		if matchesAny(r.req.InterruptAfter, t.Node) && !slices.Contains(after, t.Node) {
			after = append(after, t.Node)
		}
	}
	return next, interrupts, writers, after, nil
}

// traceEntry is the entry of a finished task in its step's trace (the
// checkpoint's "tasks" metadata).
func (r *run) traceEntry(t checkpoint.Task, o *outcome) map[string]any {
	name, ok := r.e.names[t.Node]
	if !ok {
		name = t.Node
	}
	task := name
	if t.ID != t.Node {
		task = t.ID
	}
	entry := map[string]any{
		"task": task, "node": name, "duration_ms": float64(o.duration.Microseconds()) / 1000,
		"writes": r.traceWrites(t.Node, o.Update),
	}
	if o.replayed {
		entry["replayed"] = true
	}
	if o.attempts > 1 {
		entry["attempts"] = o.attempts
	}
	if o.Error != "" {
		entry["error"] = o.Error
	}
	if len(o.Usage) > 0 {
		entry["usage"] = o.Usage
	}
	return entry
}

// tracedWrites is the list of fields a node wrote, as its last trace
// entry in the run has it.
type tracedWrites struct {
	keys  []string
	boxed any
}

// traceWrites returns the sorted names of the fields update writes, for a
// trace entry of node: the list of the node's previous entry in the run
// when it wrote the same fields (a loop's node writes the same fields every
// step), so that an entry costs no new list. Trace lists are never
// modified.
func (r *run) traceWrites(nodeName string, update node.Update) any {
	if prev, ok := r.traced[nodeName]; ok && len(prev.keys) == len(update) {
		same := true
		for _, k := range prev.keys {
			if _, ok := update[k]; !ok {
				same = false
				break
			}
		}
		if same {
			return prev.boxed
		}
	}
	keys := sortedKeys(update)
	if r.traced == nil {
		r.traced = map[string]tracedWrites{}
	}
	var boxed any = keys
	r.traced[nodeName] = tracedWrites{keys: keys, boxed: boxed}
	return boxed
}

func (e *Engine) maxConcurrency() int {
	switch {
	case e.opts.MaxConcurrency > 0:
		return e.opts.MaxConcurrency
	case e.graph.Spec.Defaults.MaxConcurrency > 0:
		return e.graph.Spec.Defaults.MaxConcurrency
	}
	return 8
}

// runTask runs one task with its node's timeout, retry and catch policies.
func (r *run) runTask(ctx context.Context, t checkpoint.Task, step int, state, scope map[string]any) *outcome {
	n := r.e.graph.Nodes[t.Node]
	if n == nil {
		return &outcome{err: fmt.Errorf("node %q is not in the graph", t.Node)}
	}
	if t.HasItem {
		itemScope := make(map[string]any, len(scope)+1)
		for k, v := range scope {
			itemScope[k] = v
		}
		itemScope[r.e.itemName[t.Node]] = t.Item
		scope = itemScope
	}
	o := &outcome{}
	ctx, observed := r.e.observeNode(ctx, r, t, step, state)
	emit := func(ev event.Event) {
		ev.Node, ev.Step = t.Node, step
		switch ev.Type {
		case node.UsageEvent:
			o.addUsage(ev.Payload)
		case event.Text:
			// Text streams the task's reply: it carries the id the message
			// will have in state.
			p := make(map[string]any, len(ev.Payload)+1)
			for k, v := range ev.Payload {
				p[k] = v
			}
			p["message_id"] = o.replyIDValue()
			ev.Payload = p
		}
		observed.Event(ev)
		r.sink(ev)
	}
	in := &node.Input{
		Node: t.Node, ThreadID: r.req.ThreadID, RunID: r.req.RunID, Step: step,
		State: state, Scope: scope, Item: t.Item, Emit: emit, Services: r.e.services,
		CallRetry: n.Spec.CallRetry, Cache: r.e.nodeCache(n, emit),
	}
	if in.CallRetry == nil {
		in.CallRetry = r.e.graph.Spec.Defaults.CallRetry
	}
	if !r.quiet {
		r.sink(event.Event{Type: event.NodeStart, Node: t.Node, Step: step, Payload: map[string]any{
			"node": t.Node, "task": t.ID, "step": step,
		}, Detail: state})
	}
	impl := r.e.impl(n)
	if _, mocked := r.e.opts.Overrides[n.Name]; n.Subgraph != nil && !mocked {
		impl = r.subgraphTask(n, t)
	}
	start := time.Now()
	var err error
	for attempt := 1; ; attempt++ {
		in.Attempt = attempt
		o.attempts = attempt
		var upd node.Update
		upd, err = r.e.runNodeCached(ctx, n, impl, in)
		if err == nil {
			o.Update = upd
			break
		}
		var ci *childInterrupts
		if errors.As(err, &ci) {
			o.Child = ci.interrupts
			err = nil
			break
		}
		var ir *node.InterruptRequest
		if errors.As(err, &ir) {
			o.Interrupt = ir
			err = nil
			break
		}
		wait, again := retryDelay(n.Spec.Retry, err, attempt)
		if !again || ctx.Err() != nil {
			break
		}
		r.sink(event.Event{Type: "retry", Node: t.Node, Step: step, Payload: map[string]any{
			"node": t.Node, "attempt": attempt, "error": err.Error(), "wait_ms": wait.Milliseconds(),
		}})
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w; retry canceled after attempt %d: %w", err, attempt, ctx.Err())
			break
		}
	}
	o.duration = time.Since(start)
	status := "ok"
	switch {
	case o.Interrupt != nil || len(o.Child) > 0:
		status = "interrupted"
	case err != nil:
		code := node.CodeOf(err)
		if to := catchTarget(n.Spec.Catch, code); to != "" && ctx.Err() == nil {
			o.CatchTo, o.Error, o.Code = to, err.Error(), code
			status = "caught"
			r.sink(event.Event{Type: event.Error, Node: t.Node, Step: step, Payload: map[string]any{
				"node": t.Node, "code": code, "message": err.Error(), "caught_by": to,
			}})
		} else {
			o.err = err
			status = "error"
		}
	}
	o.status = status
	observed.End(taskEnd(o, err))
	return o
}

// nodeEnd reports a finished task. It is sent after the task's update is
// saved, so a client that sees node_end knows the node will not run again.
func (r *run) nodeEnd(t checkpoint.Task, step int, o *outcome) {
	if r.quiet {
		return
	}
	status := o.status
	if o.err != nil {
		status = "error"
	}
	r.sink(event.Event{Type: event.NodeEnd, Node: t.Node, Step: step, Payload: map[string]any{
		"node": t.Node, "task": t.ID, "step": step, "status": status,
		"duration_ms": float64(o.duration.Microseconds()) / 1000, "update": summarize(o.Update),
	}, Detail: o.Update})
}

// runNode calls the node with its timeout, turning a panic into an error.
func runNode(ctx context.Context, n *compile.Node, impl node.Node, in *node.Input) (upd node.Update, err error) {
	if n.Spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, n.Spec.Timeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("node %q panicked: %v", n.Name, p)
		}
	}()
	upd, err = impl.Run(node.ContextWithInput(ctx, in), in)
	if err == nil && ctx.Err() != nil && n.Spec.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = &node.Error{Code: "timeout", Retryable: true, Err: fmt.Errorf("node %q exceeded its timeout of %s", n.Name, n.Spec.Timeout)}
	}
	return upd, err
}

// retryDelay says whether a failed attempt is retried and after how long.
func retryDelay(p *graph.RetryPolicy, err error, attempt int) (time.Duration, bool) {
	if p == nil || attempt >= p.MaxAttempts {
		return 0, false
	}
	code := node.CodeOf(err)
	if code == "canceled" {
		return 0, false
	}
	if len(p.On) > 0 {
		if !matchesAny(p.On, code) {
			return 0, false
		}
	} else {
		var ne *node.Error
		if errors.As(err, &ne) && !ne.Retryable {
			return 0, false
		}
	}
	initial := p.InitialInterval
	if initial <= 0 {
		initial = 500 * time.Millisecond
	}
	backoff := p.Backoff
	if backoff < 1 {
		backoff = 2
	}
	wait := float64(initial)
	for i := 1; i < attempt; i++ {
		wait *= backoff
	}
	if p.MaxInterval > 0 && wait > float64(p.MaxInterval) {
		wait = float64(p.MaxInterval)
	}
	if p.Jitter {
		wait *= 0.5 + rand.Float64()
	}
	return time.Duration(wait), true
}

func catchTarget(catches []graph.Catch, code string) string {
	for _, c := range catches {
		if len(c.On) == 0 || matchesAny(c.On, code) {
			return c.To
		}
	}
	return ""
}

// edgesReadState reports whether choosing a node's successors evaluates
// expressions (routes or a map), which read the state.
func (e *Engine) edgesReadState(name string) bool {
	n := e.graph.Nodes[name]
	return n != nil && (len(n.Routes) > 0 || n.Map != nil)
}

// successors evaluates a node's edges on the state after its step.
// The list it returns may be shared (see Engine.fixed): callers append to
// it (its capacity is its length, so appending copies) but never change
// its tasks in place.
func (e *Engine) successors(name string, scope map[string]any) ([]checkpoint.Task, error) {
	n := e.graph.Nodes[name]
	if fixed, ok := e.fixed[name]; ok {
		return fixed, nil
	}
	if len(n.Next) == 0 && n.Map == nil {
		to, err := e.chooseRoute(name, n, scope)
		switch {
		case err != nil || to == "":
			return nil, err
		case e.taskOf[to] != nil:
			return e.taskOf[to], nil
		}
		return []checkpoint.Task{{ID: to, Node: to}}, nil
	}
	var out []checkpoint.Task
	add := func(to string) {
		out = append(out, checkpoint.Task{ID: to, Node: to})
	}
	for _, to := range n.Next {
		add(to)
	}
	if len(n.Routes) > 0 || n.Default != "" {
		chosen, err := e.chooseRoute(name, n, scope)
		if err != nil {
			return nil, err
		}
		if chosen != "" {
			add(chosen)
		}
	}
	if n.Map != nil {
		v, err := n.Map.Over.Eval(scope)
		if err != nil {
			return nil, fmt.Errorf("node %q: map over: %w", name, err)
		}
		items, ok := v.([]any)
		if !ok && v != nil {
			if s, isStrings := v.([]string); isStrings {
				for _, x := range s {
					items = append(items, x)
				}
			} else {
				return nil, fmt.Errorf("node %q: map over %q yielded %s, not a list", name, n.Map.Over.Source(), graph.DescribeValue(v))
			}
		}
		for i, item := range items {
			out = append(out, checkpoint.Task{ID: fmt.Sprintf("%s#%04d", n.Map.To, i), Node: n.Map.To, Item: item, HasItem: true})
		}
	}
	return out, nil
}

// chooseRoute returns the target of a node's first route whose condition
// holds, else its default ("" when it has none).
func (e *Engine) chooseRoute(name string, n *compile.Node, scope map[string]any) (string, error) {
	for _, rt := range n.Routes {
		v, err := rt.When.Eval(scope)
		if err != nil {
			return "", fmt.Errorf("node %q: route to %q: %w", name, rt.To, err)
		}
		if b, _ := v.(bool); b {
			return rt.To, nil
		}
	}
	return n.Default, nil
}

// summarize describes an update briefly for node_end events.
func summarize(u node.Update) map[string]any {
	if len(u) == 0 {
		return nil
	}
	out := make(map[string]any, len(u))
	for k, v := range u {
		switch x := v.(type) {
		case string:
			out[k] = truncate(x, 80)
		case []any:
			out[k] = fmt.Sprintf("%d item(s)", len(x))
		case map[string]any:
			out[k] = fmt.Sprintf("object with %d key(s)", len(x))
		default:
			out[k] = v
		}
	}
	return out
}

// truncate shortens s to at most limit bytes, ending in "..." when cut, without
// splitting a UTF-8 sequence.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
