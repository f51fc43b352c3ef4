package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/reducer"
	"github.com/graphctl/graphctl/server/graphs"
)

// This file translates between graphctl's threads and LangGraph's shapes:
// inputs with LangChain-style messages, thread states, interrupts.

// roleOf maps LangGraph/LangChain message roles and types to graphctl roles.
var roleOf = map[string]string{
	"user": "user", "human": "user", "humanmessage": "user", "humanmessagechunk": "user",
	"assistant": "assistant", "ai": "assistant", "aimessage": "assistant", "aimessagechunk": "assistant",
	"system": "system", "systemmessage": "system", "developer": "system",
	"tool": "tool", "toolmessage": "tool",
	reducer.RemoveRole: reducer.RemoveRole, "removemessage": reducer.RemoveRole,
}

// typeOf maps graphctl roles to LangChain message types.
var typeOf = map[string]string{"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}

// convertInput normalises a LangGraph input for graph g: messages given to a
// field of type messages (as objects with role or type, or as bare strings)
// become graphctl messages; other keys pass through to their fields.
func convertInput(g *compile.Graph, input map[string]any) (map[string]any, error) {
	if input == nil {
		return nil, nil
	}
	out := make(map[string]any, len(input))
	for k, v := range input {
		f, ok := g.Fields[k]
		if !ok {
			return nil, badRequest("input field %q is not in the state of graph %q (fields: %s)", k, g.Spec.Name, strings.Join(g.FieldOrder, ", "))
		}
		if f.Spec.Type.Kind != graph.Messages {
			out[k] = v
			continue
		}
		msgs, err := convertMessages(k, v)
		if err != nil {
			return nil, err
		}
		out[k] = msgs
	}
	if err := g.CheckValues(out); err != nil {
		return nil, badRequest("input: %v", err)
	}
	return out, nil
}

func convertMessages(field string, v any) ([]any, error) {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any, string:
		items = []any{x}
	case nil:
		return []any{}, nil
	default:
		return nil, badRequest("input %q must be a list of messages", field)
	}
	out := make([]any, 0, len(items))
	for i, it := range items {
		switch m := it.(type) {
		case string:
			out = append(out, map[string]any{"role": "user", "content": m})
		case map[string]any:
			role, _ := m["role"].(string)
			if role == "" {
				role, _ = m["type"].(string)
			}
			mapped, ok := roleOf[strings.ToLower(role)]
			if !ok {
				return nil, badRequest("input %q message %d: role %q is not one of user, human, assistant, ai, system, tool, remove", field, i, role)
			}
			msg := make(map[string]any, len(m))
			for k, val := range m {
				if k == "type" || k == "additional_kwargs" || k == "response_metadata" || k == "example" {
					continue
				}
				msg[k] = val
			}
			msg["role"] = mapped
			switch c := m["content"].(type) {
			case string, []any:
			case nil:
				msg["content"] = ""
			default:
				return nil, badRequest("input %q message %d: content must be a string or a list of content blocks, not %s", field, i, graph.DescribeValue(c))
			}
			if mapped == reducer.RemoveRole {
				if id, _ := msg["id"].(string); id == "" {
					return nil, badRequest("input %q message %d removes a message (type remove) but names no id", field, i)
				}
			}
			if id, isStr := msg["id"].(string); isStr && id == "" {
				delete(msg, "id")
			} else if msg["id"] == nil {
				delete(msg, "id")
			}
			out = append(out, msg)
		default:
			return nil, badRequest("input %q message %d must be an object with role and content", field, i)
		}
	}
	return out, nil
}

// decodeValues turns a snapshot's field values into the state LangGraph
// clients see: messages carry a LangChain type next to their role.
func decodeValues(g *compile.Graph, raw map[string]json.RawMessage) (map[string]any, error) {
	out, err := decodeFields(raw)
	if err != nil {
		return nil, err
	}
	annotateMessages(g, out)
	return out, nil
}

// decodeFields decodes stored field values, messages as they are stored.
func decodeFields(raw map[string]json.RawMessage) (map[string]any, error) {
	out := make(map[string]any, len(raw))
	for k, r := range raw {
		v, err := checkpoint.DecodeValue(r)
		if err != nil {
			return nil, fmt.Errorf("decode field %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// annotateMessages adds LangChain's "type" to every message of every
// messages field (in place).
func annotateMessages(g *compile.Graph, values map[string]any) {
	if g == nil {
		return
	}
	for k, v := range values {
		f, ok := g.Fields[k]
		if !ok || f.Spec.Type.Kind != graph.Messages {
			continue
		}
		list, _ := v.([]any)
		cp := make([]any, len(list))
		for i, it := range list {
			m, ok := it.(map[string]any)
			if !ok {
				cp[i] = it
				continue
			}
			mm := make(map[string]any, len(m)+1)
			for kk, vv := range m {
				mm[kk] = vv
			}
			role, _ := m["role"].(string)
			if t, ok := typeOf[role]; ok {
				mm["type"] = t
			}
			cp[i] = mm
		}
		values[k] = cp
	}
}

// lgInterrupts lists a checkpoint's interrupts as LangGraph shows them.
func lgInterrupts(ins []checkpoint.Interrupt) []map[string]any {
	out := make([]map[string]any, 0, len(ins))
	for _, in := range ins {
		var value any = in.Payload
		if in.Payload == nil {
			value = map[string]any{"node": in.Node, "when": in.When}
		}
		ns := []string{in.Node}
		if in.Namespace != "" {
			ns = strings.Split(in.Namespace, "|")
		}
		out = append(out, map[string]any{"value": value, "id": in.ID, "when": "during", "resumable": true, "ns": ns})
	}
	return out
}

func cpConfig(thread, id string) any {
	if id == "" {
		return nil
	}
	root, ns := checkpoint.SplitThreadID(thread)
	return map[string]any{"thread_id": root, "checkpoint_ns": ns, "checkpoint_id": id, "checkpoint_map": nil}
}

// taskUUID is the id a task shows to LangGraph clients: a UUID (version 5
// form) derived from the checkpoint its step starts from and graphctl's task
// id, so it is the same in the stream and in the state, and a subgraph
// task's checkpoint_ns is "node:" and the id its task has at the checkpoint
// it started from (engine.TaskNamespace).
func taskUUID(checkpointID, taskID string) string { return engine.TaskUUID(checkpointID, taskID) }

// lcMessage renders a graphctl message as a serialised LangChain message:
// its type, the fields LangChain clients read, and the message's own.
func lcMessage(m map[string]any) map[string]any {
	out := map[string]any{"content": "", "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"name": nil, "id": nil, "example": false}
	for k, v := range m {
		if k != "role" {
			out[k] = v
		}
	}
	if _, typed := m["type"]; !typed {
		if t, ok := typeOf[str(m["role"])]; ok {
			out["type"] = t
		}
	}
	switch out["type"] {
	case "ai", "AIMessageChunk":
		for k, v := range map[string]any{"tool_calls": []any{}, "invalid_tool_calls": []any{}, "usage_metadata": nil} {
			if _, has := out[k]; !has {
				out[k] = v
			}
		}
	case "tool":
		if _, has := out["status"]; !has {
			out["status"] = "success"
		}
	}
	return out
}

// taskErrors maps the task ids of a checkpoint's recorded failures to their
// messages (engine.ErrorTask for a failure of no task).
func taskErrors(snap *checkpoint.Snapshot) map[string]string {
	var out map[string]string
	for _, pw := range snap.Pending {
		if pw.Kind != "error" {
			continue
		}
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(pw.Update, &e)
		if out == nil {
			out = map[string]string{}
		}
		out[pw.TaskID] = e.Error
	}
	return out
}

// threadStatus is LangGraph's status of a thread whose newest checkpoint is
// snap (busy aside): interrupted while interrupts are pending or when its
// last run stopped at a breakpoint with tasks left, error when its last run
// failed, else idle — a cancelled run leaves the thread idle.
func threadStatus(snap *checkpoint.Snapshot) string {
	switch {
	case len(taskInterrupts(snap)) > 0:
		return "interrupted"
	case len(taskErrors(snap)) > 0:
		return "error"
	case engine.StoppedAt(&snap.Checkpoint) != nil:
		return "interrupted"
	}
	return "idle"
}

// startNode is LangGraph's name of the task that writes a turn's input.
const startNode = "__start__"

// pendingInput is the input an input checkpoint carries, not yet applied
// (rendered as state values are), or nil for another checkpoint.
func pendingInput(g *compile.Graph, snap *checkpoint.Snapshot) map[string]any {
	if snap.Source != checkpoint.SourceInput || len(snap.Input) == 0 || len(snap.Interrupts) > 0 {
		return nil
	}
	var input map[string]any
	if json.Unmarshal(snap.Input, &input) != nil || input == nil {
		return nil
	}
	annotateMessages(g, input)
	return input
}

// writersOf lists a checkpoint's writers, never null.
func writersOf(snap *checkpoint.Snapshot) []string {
	if snap.Writers == nil {
		return []string{}
	}
	return snap.Writers
}

// threadState renders a snapshot as LangGraph's ThreadState.
func threadState(g *compile.Graph, snap *checkpoint.Snapshot) (map[string]any, error) {
	values, err := decodeValues(g, snap.Values)
	if err != nil {
		root, ns := checkpoint.SplitThreadID(snap.ThreadID)
		return nil, fmt.Errorf("%s: %w", checkpointName(snap.ID, root, ns), err)
	}
	errs := taskErrors(snap)
	next := []string{}
	seen := map[string]bool{}
	tasks := []map[string]any{}
	task := func(id, node string, interrupts any) map[string]any {
		var taskErr any
		if e, ok := errs[id]; ok {
			taskErr = e
			delete(errs, id)
		}
		return map[string]any{"id": taskUUID(snap.ID, id), "name": node, "path": []any{"__pregel_pull", node}, "error": taskErr,
			"interrupts": interrupts, "checkpoint": nil, "state": nil, "result": nil}
	}
	// A breakpoint is no interrupt: the tasks the thread stopped before
	// are among the next ones, with none.
	waiting := taskInterrupts(snap)
	for _, in := range waiting {
		if !seen[in.Node] {
			seen[in.Node] = true
			next = append(next, in.Node)
		}
		if in.Namespace != "" {
			continue // its task is among the next ones
		}
		tasks = append(tasks, task(in.TaskID, in.Node, lgInterrupts([]checkpoint.Interrupt{in})))
	}
	if input := pendingInput(g, snap); input != nil {
		// An input checkpoint: LangGraph's next task is __start__, which
		// writes the pending input; graphctl applies it with the start
		// node, whose task stays an engine detail.
		next = append(next, startNode)
		t := task(startNode, startNode, []any{})
		t["result"] = input
		// A first step that failed failed with its start node's task.
		for _, n := range snap.Next {
			if e, ok := errs[n.ID]; ok && t["error"] == nil {
				t["error"] = e
				delete(errs, n.ID)
			}
		}
		tasks = append(tasks, t)
	} else {
		for _, t := range snap.Next {
			if !seen[t.Node] {
				seen[t.Node] = true
				next = append(next, t.Node)
			}
			var ins []checkpoint.Interrupt
			for _, in := range waiting {
				if in.Namespace != "" && in.TaskID == t.ID {
					ins = append(ins, in)
				}
			}
			tasks = append(tasks, task(t.ID, t.Node, lgInterrupts(ins)))
		}
	}
	if e, ok := errs[engine.ErrorTask]; ok && len(tasks) > 0 && tasks[len(tasks)-1]["error"] == nil {
		tasks[len(tasks)-1]["error"] = e
	}
	meta := map[string]any{}
	for k, v := range snap.Metadata {
		if k == "tasks" || k == "joins" || engine.IsBreakpointMetadata(k) {
			continue
		}
		meta[k] = v
	}
	meta["step"] = snap.Step
	meta["source"] = string(snap.Source)
	meta["writes"] = nil
	// writers (graphctl's) names what wrote the checkpoint: the nodes of
	// its step, "input" and "command" for a turn's input and a command's
	// update, the as_node of a state update.
	meta["writers"] = writersOf(snap)
	meta["graph_id"] = snap.GraphName
	meta["thread_id"], _ = checkpoint.SplitThreadID(snap.ThreadID)
	meta["graph_hash"] = snap.GraphHash
	meta["parents"] = map[string]any{}
	return map[string]any{
		"values": values, "next": next, "tasks": tasks, "metadata": meta,
		"created_at": snap.CreatedAt.UTC().Format(time.RFC3339Nano),
		"checkpoint": cpConfig(snap.ThreadID, snap.ID), "parent_checkpoint": cpConfig(snap.ThreadID, snap.ParentID),
		"checkpoint_id": snap.ID, "parent_checkpoint_id": nilIfEmpty(snap.ParentID),
		"interrupts": lgInterrupts(waiting),
	}, nil
}

// taskInterrupts are the interrupts of a checkpoint that wait for an
// answer: no breakpoint is one, as in LangGraph (see engine.StoppedAt).
func taskInterrupts(snap *checkpoint.Snapshot) []checkpoint.Interrupt {
	return engine.WaitingInterrupts(&snap.Checkpoint)
}

func emptyState() map[string]any {
	return map[string]any{"values": map[string]any{}, "next": []string{}, "tasks": []any{}, "metadata": map[string]any{},
		"created_at": nil, "checkpoint": nil, "parent_checkpoint": nil, "checkpoint_id": nil, "parent_checkpoint_id": nil, "interrupts": []any{}}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// versionFor returns the graph version a thread runs on: the one pinned in
// memory, else the one its latest checkpoint names, else the assistant's
// current version (assistant may be empty when the thread has checkpoints).
func (s *Server) versionFor(ctx context.Context, thread, assistant string) (*graphs.Version, *checkpoint.Snapshot, error) {
	assistant = s.graphOf(ctx, assistant)
	if v, ok := s.pinned.Load(thread); ok {
		ver := v.(*graphs.Version)
		if assistant == "" || assistant == ver.Name {
			return ver, nil, nil
		}
	}
	snap, err := s.cp.Latest(ctx, thread)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil, fmt.Errorf("thread %q: %w", thread, err)
	}
	if snap != nil && (assistant == "" || assistant == snap.GraphName) {
		if v, ok := s.reg.ForThread(snap.GraphName, snap.GraphHash); ok {
			s.pinned.Store(thread, v)
			return v, snap, nil
		}
		return nil, snap, notFound("thread %q belongs to graph %q, which is not loaded", thread, snap.GraphName)
	}
	if assistant == "" {
		if meta, err := s.loadThread(ctx, thread); err == nil {
			if gid, _ := meta["metadata"].(map[string]any)["graph_id"].(string); gid != "" {
				assistant = gid
			}
		}
	}
	if assistant == "" {
		if list := s.reg.List(); len(list) == 1 {
			assistant = list[0].Name
		} else {
			return nil, snap, badRequest("thread %q has no state yet; name the assistant (graph) to use", thread)
		}
	}
	v, ok := s.reg.Get(assistant)
	if !ok {
		return nil, snap, notFound("assistant %q not found (each graph is an assistant named after it)", assistant)
	}
	if snap == nil {
		s.pinned.Store(thread, v)
	}
	return v, snap, nil
}

// joinText flattens LangChain content parts to their text.
func joinText(parts []any) string {
	var b strings.Builder
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			b.WriteString(x)
		case map[string]any:
			if t, ok := x["text"].(string); ok {
				b.WriteString(t)
			}
		}
	}
	return b.String()
}

// checkpointAssistants finds the assistant_id of checkpoints for their
// metadata, as LangGraph records it in each checkpoint's metadata: the
// assistant of the run that wrote the checkpoint, read from the run's record
// (which the store keeps per run) rather than stored with every checkpoint.
// A checkpoint that no run wrote (a state update), or whose run's record is
// gone, shows the assistant of the thread's latest run (the thread's
// metadata assistant_id), or none. It remembers what it read, for the
// checkpoints of one request.
type checkpointAssistants struct {
	s      *Server
	thread string
	// runs maps a run id to its assistant ("" when it has none).
	runs map[string]string
	// ofThread is the thread's assistant, once read.
	ofThread *string
}

func (s *Server) checkpointAssistants(thread string) *checkpointAssistants {
	return &checkpointAssistants{s: s, thread: thread, runs: map[string]string{}}
}

// add sets the assistant_id of a state's metadata (see threadState).
func (ca *checkpointAssistants) add(ctx context.Context, state map[string]any) {
	meta, _ := state["metadata"].(map[string]any)
	if meta == nil {
		return
	}
	runID, _ := meta["run_id"].(string)
	id, ok := ca.runs[runID]
	if !ok {
		if runID != "" {
			if rec, err := ca.s.runs.Load(ctx, ca.thread, runID); err == nil {
				id = rec.AssistantID
			}
		}
		if id == "" {
			id = ca.threadAssistant(ctx)
		}
		ca.runs[runID] = id
	}
	if id != "" {
		meta["assistant_id"] = id
	}
}

func (ca *checkpointAssistants) threadAssistant(ctx context.Context) string {
	if ca.ofThread == nil {
		id := ""
		if rec, err := ca.s.loadThread(ctx, ca.thread); err == nil {
			meta, _ := rec["metadata"].(map[string]any)
			id, _ = meta["assistant_id"].(string)
		}
		ca.ofThread = &id
	}
	return *ca.ofThread
}
