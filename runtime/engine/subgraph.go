package engine

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

// A subgraph node's task runs its child graph with a child engine, on the
// thread checkpoint.ChildThreadID(thread, ns) in the same checkpointer,
// where ns is the task's namespace (TaskNamespace). As in LangGraph, each
// run of the node starts the child from a fresh state, in a namespace of
// its own, "node:<id>", the id derived from the parent checkpoint the step
// starts from and the task; a node with persist: true (LangGraph's
// checkpointer=True) keeps one namespace per task, "node:task", so that
// each run goes on from the state the previous one left. Every checkpoint
// of the child records the parent checkpoint the task started from
// (parentCheckpointKey), so that a task run again after a crash continues
// the child where it stopped instead of starting it afresh, and a child
// that already finished is not run again.
//
// An interrupt inside the child suspends the parent: the parent's
// checkpoint lists the child's interrupts, namespaced, and keeps the task
// in its next tasks with the child's namespace (Task.Namespace). Resume
// stores the answers in the task (Task.Resume), and the task passes them
// on to the child, in that namespace, when it runs again.

// parentCheckpointKey is the metadata key of a child's checkpoints that
// names the parent checkpoint whose step ran the child.
const parentCheckpointKey = "parent_checkpoint_id"

// childInterrupts is returned by a subgraph task whose child stopped at
// interrupts.
type childInterrupts struct {
	interrupts []checkpoint.Interrupt
}

func (c *childInterrupts) Error() string {
	return fmt.Sprintf("interrupt: the subgraph waits for %d answer(s)", len(c.interrupts))
}

// childError is an error of a subgraph node's child graph. It names the
// root thread and the child's namespace below it, never the id under which
// the child's checkpoints are stored (ChildThreadID), whose separator is a
// control character: that id, wherever the child's error shows it, reads as
// the root thread's.
type childError struct {
	file   string // the child graph's file
	root   string // the root thread's id
	ns     string // the child's namespace below root, nested ones joined by "|"
	thread string // the stored id of the child's checkpoints
	err    error
}

// childError wraps err, returned by the child graph in file running in
// namespace ns below this run's thread.
func (r *run) childError(file, ns string, err error) error {
	thread := checkpoint.ChildThreadID(r.req.ThreadID, ns)
	root, above := checkpoint.SplitThreadID(r.req.ThreadID)
	if above != "" {
		ns = above + "|" + ns
	}
	return &childError{file: file, root: root, ns: ns, thread: thread, err: err}
}

func (c *childError) Error() string {
	msg := strings.NewReplacer(
		strconv.Quote(c.thread), strconv.Quote(c.root),
		c.thread, c.root,
	).Replace(c.err.Error())
	// Ids of deeper children read as the root thread's already, when the
	// child's own subgraph node wrapped them; any other stays readable.
	msg = strings.NewReplacer(checkpoint.NamespaceSep, "|", `\x1f`, "|").Replace(msg)
	return fmt.Sprintf("subgraph %s (thread %q, namespace %s): %s", c.file, c.root, c.ns, msg)
}

func (c *childError) Unwrap() error { return c.err }

// newChildren builds an engine for the child graph of every subgraph node.
func (e *Engine) newChildren() {
	for _, name := range e.graph.NodeOrder {
		sub := e.graph.Nodes[name].Subgraph
		if sub == nil {
			continue
		}
		if e.children == nil {
			e.children = map[string]*Engine{}
		}
		extra := node.GraphFileKey.Bind(e.services.Extra, sub.File)
		e.children[name] = New(sub.Graph, e.cp, Options{
			Store: e.opts.Store, Extra: extra, MaxConcurrency: e.opts.MaxConcurrency,
			Now: e.opts.Now, StateCache: e.opts.StateCache, Observers: e.opts.Observers,
		})
	}
}

// Child returns the engine that runs the subgraph of the named node, or nil
// when the node is not a subgraph node.
func (e *Engine) Child(nodeName string) *Engine { return e.children[nodeName] }

// TaskNamespace returns the namespace of the child checkpoints of task t of
// a subgraph node, in the step that starts from the parent checkpoint
// checkpointID: the namespace the task waits in when its child stopped at
// an interrupt; else, when the node persists its child's state,
// "node:task"; else "node:<id>", with the id TaskUUID(checkpointID, task),
// new for each run of the node and the same when a step is run again.
func TaskNamespace(t checkpoint.Task, checkpointID string, persist bool) string {
	switch {
	case t.Namespace != "":
		return t.Namespace
	case persist:
		return t.Node + ":" + t.ID
	}
	return t.Node + ":" + TaskUUID(checkpointID, t.ID)
}

// TaskUUID returns the id, shaped as a UUID (version 5), of task taskID in
// the step that starts from checkpoint checkpointID: the same for the same
// two, different for another checkpoint or task.
func TaskUUID(checkpointID, taskID string) string {
	h := sha1.Sum([]byte(checkpointID + "\x00" + taskID))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// waitInChild returns task t as the next step keeps it after its child
// stopped at interrupts: it runs again, in the child's namespace, once
// they are answered.
func waitInChild(t checkpoint.Task, interrupts []checkpoint.Interrupt) checkpoint.Task {
	t.Resume = nil
	if len(interrupts) > 0 {
		t.Namespace, _, _ = strings.Cut(interrupts[0].Namespace, "|")
	}
	return t
}

// subgraphTask returns the implementation that runs task t of a subgraph
// node.
func (r *run) subgraphTask(n *compile.Node, t checkpoint.Task) node.Node {
	return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
		return r.runSubgraph(ctx, n, t, in)
	})
}

func (r *run) runSubgraph(ctx context.Context, n *compile.Node, t checkpoint.Task, in *node.Input) (node.Update, error) {
	sub := n.Subgraph
	child := r.e.children[n.Name]
	if child == nil {
		return nil, fmt.Errorf("node %q: no engine for its subgraph %s", n.Name, sub.File)
	}
	ns := TaskNamespace(t, r.ts.cp.ID, sub.Persist)
	if t.Namespace == "" && len(t.Resume) > 0 {
		// Answers for a child that stopped before tasks recorded their
		// namespace: it waits in the namespace each task had then.
		ns = t.Node + ":" + t.ID
	}
	// A replay of an older checkpoint runs the child afresh, as LangGraph
	// does, not where the step's earlier run of it stopped: in a namespace
	// of this run's own or, for a child that keeps its state across runs,
	// from its state before that checkpoint.
	replay := t.Namespace == "" && len(t.Resume) == 0 && r.forkedFrom != "" && r.ts.cp.ID == r.forkedFrom
	if replay && !sub.Persist {
		ns = t.Node + ":" + TaskUUID(r.ts.cp.ID+"\x00"+r.req.RunID, t.ID)
	}
	thread := checkpoint.ChildThreadID(r.req.ThreadID, ns)
	req := Request{
		ThreadID: thread, RunID: r.req.RunID, Durability: r.req.Durability,
		Metadata: map[string]any{parentCheckpointKey: r.ts.cp.ID},
	}
	latest, err := child.loadLatest(ctx, thread)
	if err != nil {
		return nil, r.childError(sub.File, ns, err)
	}
	if replay && sub.Persist && latest.exists {
		before, err := r.e.cp.History(ctx, thread, checkpoint.ListOptions{Before: r.ts.cp.ID, Limit: 1})
		if err != nil {
			return nil, r.childError(sub.File, ns, err)
		}
		if len(before) > 0 {
			req.CheckpointID = before[0].ID
		} else {
			req.fresh = true // the child had no state yet
		}
	}
	switch {
	case latest.exists && latest.cp.Metadata[parentCheckpointKey] == r.ts.cp.ID && !(replay && sub.Persist):
		// This step already ran the child: go on where it stopped.
	case len(t.Resume) > 0:
		req.Resume = &Resume{Values: t.Resume}
	case t.Namespace != "":
		// The child waits for answers given to other tasks so far: it
		// reports its interrupts again.
	default:
		input := map[string]any{}
		for _, m := range sub.Input {
			if m.Expr == nil {
				input[m.Field] = in.State[m.Field]
				continue
			}
			v, err := m.Expr.Eval(in.Scope)
			if err != nil {
				return nil, node.Errorf("subgraph_input", "node %q: input %s: %w", n.Name, m.Field, err)
			}
			input[m.Field] = v
		}
		req.Input = input
	}
	sink := func(ev event.Event) {
		if ev.Type == event.RunStart || ev.Type == event.Done || (ev.Type == event.Error && ev.Node == "") {
			return // the parent reports how the run ends
		}
		if ev.Namespace == "" {
			ev.Namespace = ns
		} else {
			ev.Namespace = ns + "|" + ev.Namespace
		}
		r.sink(ev)
	}
	if r.quiet {
		sink = nil // nobody listens to the parent either
	}
	// The child writes its checkpoints itself before it returns: only the
	// run its caller started may leave them to the caller.
	res, err := child.Run(context.WithValue(ctx, holdEndWritesKey{}, false), req, sink)
	if err != nil {
		cerr := r.childError(sub.File, ns, err)
		var ne *node.Error
		if errors.As(err, &ne) {
			return nil, &node.Error{Code: ne.Code, Retryable: ne.Retryable, Err: cerr}
		}
		return nil, cerr
	}
	if res.Status == StatusInterrupted {
		out := make([]checkpoint.Interrupt, len(res.Interrupts))
		for i, ci := range res.Interrupts {
			ci.Node, ci.TaskID = t.Node, t.ID
			if ci.Namespace == "" {
				ci.Namespace = ns
			} else {
				ci.Namespace = ns + "|" + ci.Namespace
			}
			out[i] = ci
		}
		return nil, &childInterrupts{interrupts: out}
	}
	return r.subgraphOutput(n, child, in.State, res.State)
}

// subgraphOutput maps the child's final state to the parent's update. A
// shared key is written only when the child changed it; to a field whose
// reducer appends, only the items the child appended are written.
func (r *run) subgraphOutput(n *compile.Node, child *Engine, parentState, childState map[string]any) (node.Update, error) {
	upd := node.Update{}
	var scope map[string]any
	for _, m := range n.Subgraph.Output {
		if m.Expr != nil {
			if scope == nil {
				scope = child.scope(childState)
			}
			v, err := m.Expr.Eval(scope)
			if err != nil {
				return nil, node.Errorf("subgraph_output", "node %q: output %s: %w", n.Name, m.Field, err)
			}
			upd[m.Field] = v
			continue
		}
		old, v := parentState[m.Field], childState[m.Field]
		if reflect.DeepEqual(old, v) {
			continue
		}
		if f := r.e.graph.Fields[m.Field]; f != nil && f.Reducer.Appends {
			ol, okOld := old.([]any)
			nl, okNew := v.([]any)
			if okOld && okNew && len(nl) >= len(ol) && reflect.DeepEqual(ol, nl[:len(ol)]) {
				v = append([]any(nil), nl[len(ol):]...)
			}
		}
		upd[m.Field] = v
	}
	return upd, nil
}

// withChildAnswers returns a copy of next in which each subgraph task
// answered in answers (by task id, then interrupt id) carries its answers.
func withChildAnswers(next []checkpoint.Task, answers map[string]map[string]any) []checkpoint.Task {
	out := append([]checkpoint.Task(nil), next...)
	for i, t := range out {
		a := answers[t.ID]
		if len(a) == 0 {
			continue
		}
		merged := make(map[string]any, len(t.Resume)+len(a))
		for k, v := range t.Resume {
			merged[k] = v
		}
		for k, v := range a {
			merged[k] = v
		}
		t.Resume = merged
		out[i] = t
	}
	return out
}

// answersOnlyChildren reports whether a resume answers only interrupts
// raised inside subgraphs and leaves none pending.
func answersOnlyChildren(answered, remaining []checkpoint.Interrupt) bool {
	if len(remaining) > 0 || len(answered) == 0 {
		return false
	}
	for _, in := range answered {
		if in.Namespace == "" {
			return false
		}
	}
	return true
}

// A thread opened at an older checkpoint (a replay or a fork) whose tasks
// wait inside subgraphs goes on with the subgraphs' state as it was at
// that checkpoint, not as the thread's newer branch left it: the
// checkpoints of each such subgraph are carried over, as they stood then,
// into a namespace of the fork's own (with those of the subgraphs it waits
// in in turn), and the fork's tasks and interrupts name that namespace.
// Answers given to the fork then go on in the copy, and the branch it came
// from keeps its own.

// carryChildren carries the subgraph checkpoints that the tasks of fork,
// the state of threadID at an older checkpoint, wait in.
func (e *Engine) carryChildren(ctx context.Context, threadID string, fork *threadState) error {
	if err := e.carryTasks(ctx, threadID, fork); err != nil {
		return fmt.Errorf("thread %q: fork at checkpoint %s: %w", threadID, fork.cp.ID, err)
	}
	return nil
}

func (e *Engine) carryTasks(ctx context.Context, threadID string, fork *threadState) error {
	moved := map[string]string{}
	var next []checkpoint.Task
	for i, t := range fork.cp.Next {
		if t.Namespace == "" {
			continue
		}
		ns, ok := moved[t.Namespace]
		if !ok {
			ns = t.Node + ":" + TaskUUID(fork.cp.ID+"\x00fork\x00"+randomHex(8), t.ID)
			src, dst := checkpoint.ChildThreadID(threadID, t.Namespace), checkpoint.ChildThreadID(threadID, ns)
			if err := e.carryChild(ctx, src, dst, fork.cp.ID); err != nil {
				return fmt.Errorf("task %s waits in subgraph namespace %q: %w", t.ID, t.Namespace, err)
			}
			moved[t.Namespace] = ns
		}
		if next == nil {
			next = append([]checkpoint.Task(nil), fork.cp.Next...)
		}
		next[i].Namespace = ns
	}
	if next == nil {
		return nil
	}
	interrupts := append([]checkpoint.Interrupt(nil), fork.cp.Interrupts...)
	for i, in := range interrupts {
		head, rest, nested := strings.Cut(in.Namespace, "|")
		if ns, ok := moved[head]; ok {
			interrupts[i].Namespace = ns
			if nested {
				interrupts[i].Namespace += "|" + rest
			}
		}
	}
	fork.cp.Next, fork.cp.Interrupts = next, interrupts
	return nil
}

// carryChild copies into thread dst the newest checkpoint of the subgraph
// checkpoints in thread src written before checkpoint at of the thread
// above (the child's state when that checkpoint was written), and, in
// turn, the subgraphs its own tasks wait in.
func (e *Engine) carryChild(ctx context.Context, src, dst, at string) error {
	list, err := e.cp.History(ctx, src, checkpoint.ListOptions{Before: at, Limit: 1})
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return fmt.Errorf("list the subgraph's checkpoints: %w", err)
	}
	if len(list) == 0 {
		return errors.New("the subgraph has no checkpoint from before it")
	}
	c := list[0]
	if _, err := e.cp.Fork(ctx, src, c.ID, dst); err != nil {
		return fmt.Errorf("copy the subgraph's checkpoint %s: %w", c.ID, err)
	}
	done := map[string]bool{}
	for _, t := range c.Next {
		if t.Namespace == "" || done[t.Namespace] {
			continue
		}
		done[t.Namespace] = true
		if err := e.carryChild(ctx, checkpoint.ChildThreadID(src, t.Namespace), checkpoint.ChildThreadID(dst, t.Namespace), c.ID); err != nil {
			return fmt.Errorf("subgraph namespace %q: %w", t.Namespace, err)
		}
	}
	return nil
}

// replayWaiting ends a run with no input and no resume whose thread waits
// for answers. Started from an older checkpoint, it writes a copy of that
// checkpoint (source "fork", as LangGraph's replay writes one) as the
// thread's newest, so that the answers resume the branch replayed.
func (r *run) replayWaiting(ctx context.Context) error {
	if r.forkedFrom == "" || r.ts.cp.ID != r.forkedFrom {
		return nil
	}
	ts := r.ts
	return r.commit(ctx, commitSpec{source: checkpoint.SourceFork, next: ts.cp.Next, interrupts: ts.cp.Interrupts, input: ts.cp.Input})
}

// ErrNotWaitingInSubgraph is returned by UpdateSubgraphState when no task
// of the thread waits in the subgraph namespace it names.
var ErrNotWaitingInSubgraph = errors.New("no task waits in the subgraph")

// subgraphLevel is one thread on the way from a root thread down to a
// subgraph's checkpoints: the engine of its graph, its stored id, and the
// namespace below it, one level down, that a task of its newest checkpoint
// waits in.
type subgraphLevel struct {
	e      *Engine
	thread string
	ns     string // the namespace below this thread the task waits in
}

// UpdateSubgraphState writes updates to the state of the subgraph whose
// checkpoints are at namespace ns below threadID (nested namespaces joined
// by "|", as checkpoint_ns), as BulkUpdateState does to a thread, from the
// subgraph's checkpoint checkpointID (empty for its newest). As LangGraph's
// update_state with a subgraph's checkpoint config, it is how a client
// changes a subgraph that waits for an answer: a task of the thread (of
// every thread above, for a nested one) must wait in that namespace, and
// when the thread runs on, the task goes on from the updated state. So that
// the thread waits for what the subgraph now waits for, each thread above
// gets a checkpoint (source "update") whose interrupts of that task are the
// subgraph's. It returns the subgraph's new checkpoint.
func (e *Engine) UpdateSubgraphState(ctx context.Context, threadID, ns, checkpointID string, supersteps [][]StateUpdate) (*checkpoint.Checkpoint, error) {
	if ns == "" {
		return e.BulkUpdateState(ctx, threadID, checkpointID, supersteps)
	}
	var levels []subgraphLevel
	eng, thread := e, threadID
	for _, part := range strings.Split(ns, "|") {
		name, _, _ := strings.Cut(part, ":")
		child := eng.children[name]
		if child == nil {
			return nil, fmt.Errorf("subgraph namespace %q: graph %q has no subgraph node %q", ns, eng.graph.Spec.Name, name)
		}
		ts, err := eng.loadLatest(ctx, thread)
		if err != nil {
			return nil, fmt.Errorf("subgraph namespace %q: %w", ns, err)
		}
		waits := slices.ContainsFunc(ts.cp.Next, func(t checkpoint.Task) bool { return t.Namespace == part })
		if !waits {
			return nil, fmt.Errorf("subgraph namespace %q: %w (no task of the newest checkpoint of graph %q waits in %q); a subgraph's state can be updated while a task waits in it for an answer",
				ns, ErrNotWaitingInSubgraph, eng.graph.Spec.Name, part)
		}
		levels = append(levels, subgraphLevel{e: eng, thread: thread, ns: part})
		eng, thread = child, checkpoint.ChildThreadID(thread, part)
	}
	updated, err := eng.BulkUpdateState(ctx, thread, checkpointID, supersteps)
	if err != nil {
		// Named by the root thread and the namespace, not by the id the
		// subgraph's checkpoints are stored under.
		root, above := checkpoint.SplitThreadID(threadID)
		if above != "" {
			ns = above + "|" + ns
		}
		return nil, &subgraphUpdateError{root: root, ns: ns, thread: thread, err: err}
	}
	below := *updated
	for i := len(levels) - 1; i >= 0; i-- {
		l := levels[i]
		cp, err := l.e.waitAsChild(ctx, l.thread, l.ns, below, ns)
		if err != nil {
			return nil, fmt.Errorf("subgraph namespace %q: the thread above it: %w", ns, err)
		}
		below = *cp
	}
	return updated, nil
}

// subgraphUpdateError is an error of an update of a subgraph's state. It
// names the root thread and the namespace, never the id under which the
// subgraph's checkpoints are stored (see childError).
type subgraphUpdateError struct {
	root, ns, thread string
	err              error
}

func (u *subgraphUpdateError) Error() string {
	msg := strings.TrimPrefix(u.err.Error(), "update state of thread "+strconv.Quote(u.thread)+": ")
	msg = strings.NewReplacer(strconv.Quote(u.thread), strconv.Quote(u.root), u.thread, u.root).Replace(msg)
	msg = strings.NewReplacer(checkpoint.NamespaceSep, "|", `\x1f`, "|").Replace(msg)
	return fmt.Sprintf("update state of subgraph namespace %q of thread %q: %s", u.ns, u.root, msg)
}

func (u *subgraphUpdateError) Unwrap() error { return u.err }

// waitAsChild writes a checkpoint of thread (source "update") whose
// interrupts of the task that waits in namespace ns are those of child,
// that namespace's newest checkpoint: the thread then waits for what the
// child waits for. updated is the namespace, below the root thread, of the
// update that changed the child.
func (e *Engine) waitAsChild(ctx context.Context, thread, ns string, child checkpoint.Checkpoint, updated string) (*checkpoint.Checkpoint, error) {
	ts, err := e.loadLatest(ctx, thread)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(ts.cp.Next, func(t checkpoint.Task) bool { return t.Namespace == ns })
	if i < 0 {
		return nil, fmt.Errorf("%w (namespace %q)", ErrNotWaitingInSubgraph, ns)
	}
	next := append([]checkpoint.Task(nil), ts.cp.Next...)
	task := next[i]
	var interrupts []checkpoint.Interrupt
	for _, in := range ts.cp.Interrupts {
		if in.TaskID != task.ID {
			interrupts = append(interrupts, in)
		}
	}
	pending := map[string]bool{}
	for _, ci := range child.Interrupts {
		pending[ci.ID] = true
		ci.Node, ci.TaskID = task.Node, task.ID
		if ci.Namespace == "" {
			ci.Namespace = ns
		} else {
			ci.Namespace = ns + "|" + ci.Namespace
		}
		interrupts = append(interrupts, ci)
	}
	// Answers the task holds for interrupts the child no longer waits for
	// are dropped.
	if len(task.Resume) > 0 {
		kept := map[string]any{}
		for id, v := range task.Resume {
			if pending[id] {
				kept[id] = v
			}
		}
		task.Resume = kept
		if len(kept) == 0 {
			task.Resume = nil
		}
		next[i] = task
	}
	r := &run{e: e, ts: ts, sink: event.Discard, quiet: true, res: &Result{ThreadID: thread},
		req: Request{ThreadID: thread, RunID: "update-" + randomHex(6), Metadata: map[string]any{
			"subgraph_update": map[string]any{"checkpoint_ns": updated, "checkpoint_id": child.ID},
		}},
		joins: loadJoins(ts.cp.Metadata)}
	if err := r.commit(ctx, commitSpec{source: checkpoint.SourceUpdate, next: next, interrupts: interrupts, input: ts.cp.Input}); err != nil {
		return nil, err
	}
	cp := ts.cp
	return &cp, nil
}

// freshState returns the initial state of the graph for a run on a thread
// whose newest state is latest, started as on a new thread: its first
// checkpoint is a root of its own beside the thread's others, its blobs
// numbered above theirs.
func (e *Engine) freshState(latest *threadState) *threadState {
	ts, _ := e.loadThread(nil) // no snapshot: nothing to fail
	ts.floor = max(latest.floor, highestVersion(latest.cp))
	return ts
}
