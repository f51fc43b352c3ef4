package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/store/jsonenc"
	"github.com/graphctl/graphctl/server/runs"
)

// Stream modes a run can be asked for. modeChat is the chat
// format ({"type", "payload"} data frames without event names).
const (
	modeValues        = "values"
	modeUpdates       = "updates"
	modeMessages      = "messages"
	modeMessagesTuple = "messages-tuple"
	modeCustom        = "custom"
	modeEvents        = "events"
	modeDebug         = "debug"
	modeTasks         = "tasks"
	modeCheckpoints   = "checkpoints"
	modeChat          = "chat"
	// modeNone builds no frames (runs nobody streams).
	modeNone = "none"
)

var knownModes = map[string]bool{modeValues: true, modeUpdates: true, modeMessages: true, modeMessagesTuple: true,
	modeCustom: true, modeEvents: true, modeDebug: true, modeTasks: true, modeCheckpoints: true}

// lifecycle are the engine's own event types; every other type a node emits
// is a domain event (custom mode).
var lifecycle = map[string]bool{event.RunStart: true, event.NodeStart: true, event.NodeEnd: true, event.Checkpoint: true,
	event.Text: true, event.Interrupt: true, event.Error: true, event.Done: true, "retry": true, "usage": true}

// streamer turns a run's engine events into stream frames for the modes the
// run was asked for, in LangGraph's shapes.
type streamer struct {
	ctx   context.Context
	cp    checkpoint.Checkpointer
	g     *compile.Graph
	rec   *runs.Record
	modes map[string]bool
	emit  runs.Emit
	// observe is called for every engine event (metrics).
	observe func(event.Event)

	mu sync.Mutex
	// prev is the state of the previous checkpoint, for the updates a
	// resume writes.
	prev map[string]json.RawMessage
	// cpID is the newest checkpoint: the one the running step started from.
	cpID string
	// flush has the run write what it queued of the thread's checkpoints
	// (engine.Engine.Flush) before the streamer reads one.
	flush func(threadID string) error
	last  map[string]any
	// valuesSent is set once the run has emitted a values frame. Until
	// then the run's first step emits the state it reads (firstValues).
	valuesSent bool
	// streamed marks the messages whose text streamed, by id (the values
	// are unused: the text itself is kept in texts, and only when a mode
	// needs it).
	streamed map[string]string
	// texts holds the text streamed so far per message id, for the legacy
	// messages mode (messages/partial carries the whole text so far);
	// chatTexts the same for the chat format. Both are appended to, never
	// copied whole per token.
	texts     map[string][]byte
	chatTexts map[string][]byte
	// completed marks messages sent whole (messages/complete) from their text.
	completed map[string]bool
	// metaJSON holds the encoded metadata of the tasks that streamed text.
	metaJSON map[metaKey][]byte
	sawHITL  bool

	// subgraphs streams the events of subgraphs too, each under its
	// namespace (stream_subgraphs); children holds their streamers by
	// namespace. thread and ns are set on a subgraph's streamer: the stored
	// id of its checkpoints and its namespace.
	subgraphs bool
	children  map[string]*streamer
	thread    string
	ns        string
}

func (st *streamer) want(m string) bool { return st.modes[m] }

func (st *streamer) meta(ev event.Event) map[string]any {
	return map[string]any{"langgraph_node": ev.Node, "langgraph_step": ev.Step, "langgraph_triggers": []any{},
		"langgraph_path": []any{"__pregel_pull", ev.Node}, "langgraph_checkpoint_ns": st.ns, "checkpoint_ns": st.ns,
		"run_id": st.rec.RunID, "thread_id": st.rec.ThreadID, "graph_id": st.g.Spec.Name, "assistant_id": st.rec.AssistantID,
		"tags": []any{}}
}

func (st *streamer) sink(ev event.Event) {
	if st.observe != nil {
		st.observe(ev)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if ev.Namespace != "" {
		st.subgraphEvent(ev)
		return
	}
	st.handle(ev)
}

// handle renders one event of the streamer's own graph.
func (st *streamer) handle(ev event.Event) {
	if st.want(modeChat) {
		st.chat(ev)
	}
	if st.want(modeEvents) {
		st.events(ev)
	}
	switch ev.Type {
	case event.NodeStart:
		st.firstValues(ev)
		st.taskStart(ev)
	case event.NodeEnd:
		st.taskEnd(ev)
	case event.Checkpoint:
		st.checkpoint(ev)
	case event.Interrupt:
		if st.want(modeUpdates) {
			st.emit(modeUpdates, "updates", map[string]any{"__interrupt__": lgInterrupts([]checkpoint.Interrupt{interruptOf(ev)})})
		}
	case event.Text:
		st.text(ev)
	default:
		if !lifecycle[ev.Type] && st.want(modeCustom) {
			st.emit(modeCustom, "custom", map[string]any{"type": ev.Type, "payload": ev.Payload})
		}
	}
}

func interruptOf(ev event.Event) checkpoint.Interrupt {
	in := checkpoint.Interrupt{ID: str(ev.Payload["id"]), Node: str(ev.Payload["node"]), When: str(ev.Payload["when"]), Namespace: str(ev.Payload["ns"])}
	in.Payload, _ = ev.Payload["payload"].(map[string]any)
	return in
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// taskStart emits LangGraph's task event (tasks and debug modes).
func (st *streamer) taskStart(ev event.Event) {
	if !st.want(modeTasks) && !st.want(modeDebug) {
		return
	}
	input := map[string]any{}
	for k, v := range ev.Detail {
		input[k] = v
	}
	annotateMessages(st.g, input)
	payload := map[string]any{"id": taskUUID(st.cpID, str(ev.Payload["task"])), "name": ev.Node, "input": input,
		"triggers": []any{"branch:to:" + ev.Node}, "interrupts": []any{}}
	st.task(ev.Step, "task", payload)
}

// taskEnd emits a node's update (updates mode), its result (tasks and
// debug), and its messages that were not streamed as text (messages modes).
func (st *streamer) taskEnd(ev event.Event) {
	status := str(ev.Payload["status"])
	update := st.lgUpdate(ev.Detail)
	if st.want(modeUpdates) && (status == "ok" || status == "caught") {
		st.emit(modeUpdates, "updates", map[string]any{ev.Node: update})
	}
	if st.want(modeTasks) || st.want(modeDebug) {
		payload := map[string]any{"id": taskUUID(st.cpID, str(ev.Payload["task"])), "name": ev.Node, "error": nil,
			"result": update, "interrupts": []any{}, "duration_ms": ev.Payload["duration_ms"]}
		if status == "error" {
			payload["error"] = "node " + ev.Node + " failed"
			payload["result"] = map[string]any{}
		}
		st.task(ev.Step, "task_result", payload)
	}
	if st.want(modeMessages) || st.want(modeMessagesTuple) {
		st.nodeMessages(ev, update)
	}
}

// lgUpdate renders a node's update as LangGraph shows it: messages as lists
// of LangChain-typed messages.
func (st *streamer) lgUpdate(upd map[string]any) map[string]any {
	out := make(map[string]any, len(upd))
	for k, v := range upd {
		if f, ok := st.g.Fields[k]; ok && f.Spec.Type.Kind == graph.Messages {
			if _, isList := v.([]any); !isList && v != nil {
				v = []any{v}
			}
		}
		out[k] = v
	}
	annotateMessages(st.g, out)
	return out
}

func (st *streamer) task(step int, typ string, payload map[string]any) {
	if st.want(modeTasks) {
		st.emit(modeTasks, "tasks", payload)
	}
	if st.want(modeDebug) {
		st.emit(modeDebug, "debug", map[string]any{"type": typ, "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
			"step": step, "payload": payload})
	}
}

// checkpoint emits what a new checkpoint shows: the state (values), the
// checkpoint itself (checkpoints, debug), and the update of a node answered
// by a resume (updates).
func (st *streamer) checkpoint(ev event.Event) {
	id := str(ev.Payload["checkpoint_id"])
	st.cpID = id
	// The events mode ends with the final values.
	wantValues, wantUpdates := st.want(modeValues) || st.want(modeEvents), st.want(modeUpdates) && ev.Payload["source"] == "resume"
	if ev.Payload["source"] == string(checkpoint.SourceInput) {
		// The state before the input is no values frame of the run: its
		// first step's state, the input applied, is (firstValues).
		wantValues = false
	}
	wantCP := st.want(modeCheckpoints) || st.want(modeDebug)
	if !wantValues && !wantUpdates && !wantCP {
		return
	}
	if wantValues && !wantUpdates && !wantCP && ev.Detail != nil {
		// The state the event carries, as it is stored: the run may not
		// have written the checkpoint yet (its durability).
		if vals, err := storedForm(ev.Detail); err == nil {
			st.values(vals)
		}
		return
	}
	if st.flush != nil {
		// The run may write its checkpoints behind it (async durability).
		if err := st.flush(st.threadID()); err != nil {
			return
		}
	}
	snap, err := st.cp.Get(st.ctx, st.threadID(), id)
	if err != nil {
		return
	}
	if wantValues {
		if vals, err := decodeFields(snap.Values); err == nil {
			st.values(vals)
		}
	}
	if wantCP {
		if state, err := threadState(st.g, snap); err == nil {
			// checkpoint and parent_checkpoint beside the configs, as the
			// Agent Server adds them (the history's checkpoints).
			payload := map[string]any{"config": runnableConfig(state["checkpoint"]), "parent_config": runnableConfig(state["parent_checkpoint"]),
				"checkpoint": state["checkpoint"], "parent_checkpoint": state["parent_checkpoint"],
				"values": state["values"], "metadata": state["metadata"], "next": state["next"], "tasks": state["tasks"]}
			if st.want(modeCheckpoints) {
				st.emit(modeCheckpoints, "checkpoints", payload)
			}
			if st.want(modeDebug) {
				st.emit(modeDebug, "debug", map[string]any{"type": "checkpoint", "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
					"step": snap.Step, "payload": payload})
			}
		}
	}
	if wantUpdates {
		if st.prev == nil && snap.ParentID != "" {
			// A subgraph's streamer starts with the checkpoint an answer wrote.
			if parent, err := st.cp.Get(st.ctx, st.threadID(), snap.ParentID); err == nil {
				st.prev = parent.Values
			}
		}
		for _, w := range snap.Writers {
			upd := map[string]any{}
			for k, raw := range snap.Values {
				if !bytes.Equal(raw, st.prev[k]) {
					upd[k] = st.delta(k, raw, st.prev[k])
				}
			}
			st.emit(modeUpdates, "updates", map[string]any{w: upd})
		}
	}
	st.prev = snap.Values
}

// firstValues emits, when a run's first step starts and no values frame
// was sent yet, the state that step reads: the run's input applied, or the
// state of the checkpoint the run goes on from. LangGraph's values stream
// starts so, which useStream relies on: the message a user sent shows
// while the model answers, and a run from an earlier checkpoint (a
// regenerated answer) replaces the answers after it at once.
func (st *streamer) firstValues(ev event.Event) {
	if st.valuesSent || ev.Detail == nil || (!st.want(modeValues) && !st.want(modeEvents)) {
		return
	}
	vals, err := storedForm(ev.Detail)
	if err != nil {
		return
	}
	// Fields never written hold their type's empty value in the step's
	// state; a checkpoint leaves them out, and so does this frame.
	maps.DeleteFunc(vals, func(_ string, v any) bool { return unwrittenValue(v) })
	st.values(vals)
	st.valuesSent = true
}

// unwrittenValue reports whether v is a type's empty value, which a state
// field holds until a node or an input writes it.
func unwrittenValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// values takes a checkpoint's state as the run's latest and emits it in
// values mode.
func (st *streamer) values(vals map[string]any) {
	st.last = vals
	if st.want(modeValues) {
		// Encoded with the messages typed, without copying them.
		if b, err := appendValues(nil, st.g, vals); err == nil {
			st.emit(modeValues, "values", runs.Encoded(b))
			st.valuesSent = true
		}
	}
}

// storedForm returns state values as a checkpoint stores and returns them:
// each field encoded as JSON and decoded again.
func storedForm(state map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(state))
	var buf []byte
	for k, v := range state {
		var err error
		if buf, err = jsonenc.Append(buf[:0], v); err != nil {
			return nil, fmt.Errorf("encode field %q: %w", k, err)
		}
		if out[k], err = checkpoint.DecodeValue(buf); err != nil {
			return nil, fmt.Errorf("decode field %q: %w", k, err)
		}
	}
	return out, nil
}

// runnableConfig wraps a checkpoint config as a RunnableConfig.
func runnableConfig(conf any) any {
	if conf == nil {
		return nil
	}
	return map[string]any{"configurable": conf}
}

// delta is a field's new value for an update; for messages, only the
// messages that are new or changed.
func (st *streamer) delta(field string, raw, old json.RawMessage) any {
	var v any
	json.Unmarshal(raw, &v)
	f, ok := st.g.Fields[field]
	if !ok || f.Spec.Type.Kind != graph.Messages {
		return v
	}
	var before []any
	json.Unmarshal(old, &before)
	seen := map[string]string{}
	for _, m := range before {
		if mm, ok := m.(map[string]any); ok {
			b, _ := json.Marshal(mm)
			seen[str(mm["id"])] = string(b)
		}
	}
	list, _ := v.([]any)
	out := []any{}
	for _, m := range list {
		mm, ok := m.(map[string]any)
		if !ok {
			continue
		}
		b, _ := json.Marshal(mm)
		if prev, had := seen[str(mm["id"])]; had && prev == string(b) {
			continue
		}
		out = append(out, mm)
	}
	vals := map[string]any{field: out}
	annotateMessages(st.g, vals)
	return vals[field]
}

// textOf reads a text event: its piece of text and whether it is a delta
// (nodes send {"content": piece, "delta": true} or {"delta": piece}).
func textOf(ev event.Event) (string, bool) {
	if d, ok := ev.Payload["delta"].(string); ok {
		return d, true
	}
	content, _ := ev.Payload["content"].(string)
	isDelta, _ := ev.Payload["delta"].(bool)
	return content, isDelta
}

// messageID is the id of the message a text event streams: the id the
// engine gives that message in state.
func (st *streamer) messageID(ev event.Event) string {
	if id := str(ev.Payload["message_id"]); id != "" {
		return id
	}
	return "run-" + st.rec.RunID + "-" + ev.Node
}

func (st *streamer) text(ev event.Event) {
	if !st.want(modeMessages) && !st.want(modeMessagesTuple) {
		return
	}
	id := st.messageID(ev)
	piece, isDelta := textOf(ev)
	_, streamed := st.streamed[id]
	if !isDelta && streamed {
		// The complete text of a streamed message: already sent as deltas.
		return
	}
	if !streamed {
		st.streamed[id] = ""
	}
	if st.want(modeMessagesTuple) {
		st.emit(modeMessagesTuple, "messages", st.tokenTuple(ev, id, piece))
	}
	if st.want(modeMessages) {
		if st.texts == nil {
			st.texts = map[string][]byte{}
		}
		text := append(st.texts[id], piece...)
		st.texts[id] = text
		st.partial(ev, id, string(text), isDelta, streamed)
	}
}

// partial emits a piece of streamed text in the legacy messages mode: the
// message's metadata first, then the text so far (messages/partial), or the
// whole message at once when the piece is the complete text.
func (st *streamer) partial(ev event.Event, id, text string, isDelta, streamed bool) {
	meta := st.meta(ev)
	if !streamed {
		st.emit(modeMessages, "messages/metadata", map[string]any{id: map[string]any{"metadata": meta}})
	}
	msg := lcMessage(map[string]any{"type": "ai", "id": id, "content": text})
	if !isDelta {
		// A whole reply: complete at once.
		st.emit(modeMessages, "messages/complete", []any{msg})
		st.completed[id] = true
		return
	}
	st.emit(modeMessages, "messages/partial", []any{msg})
}

// tokenTuple is the messages-tuple frame of a piece of streamed text:
// [AIMessageChunk, metadata], as LangGraph sends it, encoded here without
// building maps for every token: the chunk's members are fixed but for the
// text and the id, and the metadata is the same for every token of a task
// (encoded once).
func (st *streamer) tokenTuple(ev event.Event, id, piece string) runs.Encoded {
	key := metaKey{node: ev.Node, step: ev.Step}
	meta, ok := st.metaJSON[key]
	if !ok {
		meta = mustJSONBytes(st.meta(ev))
		if st.metaJSON == nil {
			st.metaJSON = map[metaKey][]byte{}
		}
		st.metaJSON[key] = meta
	}
	// Room for the quotes and a few escapes; append grows it for more.
	b := make([]byte, 0, len(chunkHead)+len(piece)+len(chunkID)+len(id)+len(chunkTail)+len(meta)+16)
	b = append(b, '[')
	b = append(b, chunkHead...)
	b = jsonenc.AppendString(b, piece)
	b = append(b, chunkID...)
	b = jsonenc.AppendString(b, id)
	b = append(b, chunkTail...)
	b = append(b, ',')
	b = append(b, meta...)
	return append(b, ']')
}

// The members of a streamed AIMessageChunk around its content and id, in the
// order encoding/json writes a map's keys (sorted).
const (
	chunkHead = `{"additional_kwargs":{},"content":`
	chunkID   = `,"example":false,"id":`
	chunkTail = `,"invalid_tool_calls":[],"name":null,"response_metadata":{},"tool_call_chunks":[],"tool_calls":[],"type":"AIMessageChunk","usage_metadata":null}`
)

// metaKey names the task whose metadata a streamer has encoded.
type metaKey struct {
	node string
	step int
}

// nodeMessages emits, when a node ends, the messages it wrote: whole when
// they were not streamed as text (tool results, set replies), and as
// messages/complete in the legacy messages mode.
func (st *streamer) nodeMessages(ev event.Event, update map[string]any) {
	meta := st.meta(ev)
	for field, v := range update {
		if f, ok := st.g.Fields[field]; !ok || f.Spec.Type.Kind != graph.Messages {
			continue
		}
		list, _ := v.([]any)
		for _, it := range list {
			m, ok := it.(map[string]any)
			if !ok || m["type"] == "human" || m["role"] == "remove" {
				continue
			}
			id := str(m["id"])
			msg := lcMessage(m)
			_, streamed := st.streamed[id]
			if st.want(modeMessagesTuple) {
				if chunk := toolCallChunk(msg, streamed); chunk != nil {
					st.emit(modeMessagesTuple, "messages", []any{chunk, meta})
				} else if !streamed {
					st.emit(modeMessagesTuple, "messages", []any{msg, meta})
				}
			}
			if st.want(modeMessages) && !st.completed[id] {
				if !streamed {
					st.emit(modeMessages, "messages/metadata", map[string]any{id: map[string]any{"metadata": meta}})
				}
				st.emit(modeMessages, "messages/complete", []any{msg})
			}
			delete(st.streamed, id)
			delete(st.texts, id)
			delete(st.completed, id)
		}
	}
}

// toolCallChunk is the messages-tuple chunk of an AI message that calls
// tools, as a streaming chat model's last chunk shows it: an AIMessageChunk
// with tool_call_chunks (arguments as JSON text, by index) and the parsed
// tool_calls, so clients that merge chunks (useStream) keep the calls.
// After streamed text it carries no content (the deltas spelled it out).
// It is nil for a message without tool calls.
func toolCallChunk(msg map[string]any, streamed bool) map[string]any {
	calls, _ := msg["tool_calls"].([]any)
	if msg["type"] != "ai" || len(calls) == 0 {
		return nil
	}
	chunks := make([]any, 0, len(calls))
	for i, c := range calls {
		call, _ := c.(map[string]any)
		args, _ := json.Marshal(call["args"])
		if string(args) == "null" {
			args = []byte("{}")
		}
		chunks = append(chunks, map[string]any{"type": "tool_call_chunk", "index": i, "id": call["id"],
			"name": call["name"], "args": string(args)})
	}
	chunk := make(map[string]any, len(msg)+1)
	for k, v := range msg {
		chunk[k] = v
	}
	chunk["type"] = "AIMessageChunk"
	chunk["tool_call_chunks"] = chunks
	if streamed {
		chunk["content"] = ""
	}
	return chunk
}

// events renders LangChain's astream_events (v2) records.
func (st *streamer) events(ev event.Event) {
	name := ""
	data := map[string]any{}
	runID := st.rec.RunID
	switch ev.Type {
	case event.RunStart:
		st.emit(modeEvents, "events", map[string]any{"event": "on_chain_start", "name": st.g.Spec.Name, "run_id": runID,
			"data": map[string]any{"input": st.rec.Kwargs["input"]}, "metadata": map[string]any{"run_id": runID, "thread_id": st.rec.ThreadID, "graph_id": st.g.Spec.Name},
			"tags": []any{}, "parent_ids": []any{}})
		return
	case event.Done:
		st.emit(modeEvents, "events", map[string]any{"event": "on_chain_end", "name": st.g.Spec.Name, "run_id": runID,
			"data": map[string]any{"output": st.annotated(st.last)}, "metadata": map[string]any{"run_id": runID, "thread_id": st.rec.ThreadID, "graph_id": st.g.Spec.Name},
			"tags": []any{}, "parent_ids": []any{}})
		return
	case event.NodeStart:
		name = "on_chain_start"
		input := map[string]any{}
		for k, v := range ev.Detail {
			input[k] = v
		}
		annotateMessages(st.g, input)
		data["input"] = input
		runID = taskUUID(st.cpID, str(ev.Payload["task"]))
	case event.NodeEnd:
		name = "on_chain_end"
		data["output"] = st.lgUpdate(ev.Detail)
		runID = taskUUID(st.cpID, str(ev.Payload["task"]))
	case event.Text:
		name = "on_chat_model_stream"
		piece, _ := textOf(ev)
		data["chunk"] = lcMessage(map[string]any{"type": "AIMessageChunk", "content": piece, "id": st.messageID(ev)})
	case event.Checkpoint, event.Interrupt, "usage":
		return
	default:
		name = "on_custom_event"
		data = map[string]any{"type": ev.Type, "payload": ev.Payload}
	}
	st.emit(modeEvents, "events", map[string]any{"event": name, "name": ev.Node, "run_id": runID,
		"data": data, "metadata": st.meta(ev), "tags": []any{}, "parent_ids": []any{st.rec.RunID}})
}

// chat renders the chat endpoints' format: text, emotion, hitl, tool_result, done, error.
func (st *streamer) chat(ev event.Event) {
	out := func(typ string, payload map[string]any) {
		st.emit(modeChat, "", map[string]any{"type": typ, "payload": payload})
	}
	switch ev.Type {
	case event.Text:
		id := st.messageID(ev)
		piece, isDelta := textOf(ev)
		if isDelta {
			if st.chatTexts == nil {
				st.chatTexts = map[string][]byte{}
			}
			st.chatTexts[id] = append(st.chatTexts[id], piece...)
			out("text", map[string]any{"content": piece, "delta": true})
			return
		}
		if acc, streamed := st.chatTexts[id]; streamed {
			delete(st.chatTexts, id)
			if string(acc) != piece {
				// The whole text is not what streamed (a reply the model was
				// asked to repair): it replaces the streamed deltas.
				out("text", map[string]any{"content": piece, "replace": true})
			}
			return
		}
		out("text", map[string]any{"content": piece})
	case "hitl":
		st.sawHITL = true
		out("hitl", ev.Payload)
	case event.Interrupt:
		if st.sawHITL {
			return
		}
		payload := map[string]any{}
		if p, ok := ev.Payload["payload"].(map[string]any); ok {
			for k, v := range p {
				payload[k] = v
			}
		}
		payload["interrupt_id"] = ev.Payload["id"]
		payload["node"] = ev.Payload["node"]
		out("hitl", payload)
	case event.Error:
		if _, caught := ev.Payload["caught_by"]; caught {
			return
		}
		out("error", map[string]any{"message": ev.Payload["message"]})
	case event.Done:
		payload := map[string]any{"session_id": st.rec.ThreadID}
		for k, v := range ev.Payload {
			payload[k] = v
		}
		out("done", payload)
	case event.RunStart, event.NodeStart, event.NodeEnd, event.Checkpoint, "retry", "usage":
	default:
		out(ev.Type, ev.Payload)
	}
}

// finish emits what a run's end adds: an update of "__interrupt__" with
// no interrupt when the run stopped at a breakpoint, as LangGraph's does;
// the final values with pending interrupts as "__interrupt__"; and the
// thread's values when the run completed without a checkpoint of its own (a
// run resumed after its replica died once every step was done), so that
// every run's values stream shows the state it ended with.
func (st *streamer) finish(res *engine.Result) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if res != nil && res.Breakpoint != nil && st.want(modeUpdates) {
		st.emit(modeUpdates, "updates", map[string]any{"__interrupt__": []any{}})
	}
	if res == nil || !st.want(modeValues) {
		return
	}
	if res.Status == engine.StatusCompleted && !st.valuesSent && res.State != nil {
		if b, err := appendValues(nil, st.g, res.State); err == nil {
			st.emit(modeValues, "values", runs.Encoded(b))
		}
		return
	}
	if len(res.Interrupts) == 0 {
		// A breakpoint is no interrupt: the values stream ends with the
		// state's last values, as in LangGraph.
		return
	}
	last := st.last
	if last == nil {
		last = res.State
	}
	vals := st.annotated(last)
	if vals == nil {
		vals = map[string]any{}
	}
	vals["__interrupt__"] = lgInterrupts(res.Interrupts)
	st.emit(modeValues, "values", vals)
}

// annotated returns a copy of state values with their messages typed as
// LangGraph shows them (nil for nil); st.last is kept untyped.
func (st *streamer) annotated(vals map[string]any) map[string]any {
	if vals == nil {
		return nil
	}
	out := maps.Clone(vals)
	annotateMessages(st.g, out)
	return out
}
