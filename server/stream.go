package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
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
	modeChat          = "chat"
	// modeNone builds no frames (runs nobody streams).
	modeNone = "none"
)

var knownModes = map[string]bool{modeValues: true, modeUpdates: true, modeMessages: true, modeMessagesTuple: true,
	modeCustom: true, modeEvents: true, modeDebug: true}

// lifecycle are the engine's own event types; every other type a node emits
// is a domain event (custom mode).
var lifecycle = map[string]bool{event.RunStart: true, event.NodeStart: true, event.NodeEnd: true, event.Checkpoint: true,
	event.Text: true, event.Interrupt: true, event.Error: true, event.Done: true, "retry": true, "usage": true}

// streamer turns a run's engine events into stream frames for the modes the
// run was asked for.
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
	// prev is the state of the previous checkpoint, for updates.
	prev map[string]json.RawMessage
	// wrote lists the fields each node of the current step wrote.
	wrote map[string][]string
	last  map[string]any
	// streamed marks node tasks (node/step) whose text came as deltas.
	streamed map[string]string
	sawHITL  bool
}

func (st *streamer) want(m string) bool { return st.modes[m] }

func (st *streamer) meta(ev event.Event) map[string]any {
	return map[string]any{"langgraph_node": ev.Node, "langgraph_step": ev.Step, "run_id": st.rec.RunID,
		"thread_id": st.rec.ThreadID, "graph_id": st.g.Spec.Name}
}

func (st *streamer) sink(ev event.Event) {
	if st.observe != nil {
		st.observe(ev)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.want(modeChat) {
		st.chat(ev)
	}
	if st.want(modeDebug) {
		st.debug(ev)
	}
	if st.want(modeEvents) {
		st.events(ev)
	}
	switch ev.Type {
	case event.NodeEnd:
		if st.want(modeUpdates) {
			if upd, ok := ev.Payload["update"].(map[string]any); ok {
				keys := make([]string, 0, len(upd))
				for k := range upd {
					keys = append(keys, k)
				}
				st.wrote[ev.Node] = keys
			}
		}
	case event.Checkpoint:
		if st.want(modeValues) || st.want(modeUpdates) {
			id, _ := ev.Payload["checkpoint_id"].(string)
			st.checkpoint(id)
		}
	case event.Interrupt:
		if st.want(modeUpdates) {
			in := checkpoint.Interrupt{ID: str(ev.Payload["id"]), Node: str(ev.Payload["node"])}
			in.Payload, _ = ev.Payload["payload"].(map[string]any)
			st.emit(modeUpdates, "updates", map[string]any{"__interrupt__": lgInterrupts([]checkpoint.Interrupt{in})})
		}
	case event.Text:
		st.text(ev)
	default:
		if !lifecycle[ev.Type] && st.want(modeCustom) {
			st.emit(modeCustom, "custom", map[string]any{"type": ev.Type, "payload": ev.Payload})
		}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func (st *streamer) checkpoint(id string) {
	snap, err := st.cp.Get(st.ctx, st.rec.ThreadID, id)
	if err != nil {
		return
	}
	if st.want(modeValues) {
		if vals, err := decodeValues(st.g, snap.Values); err == nil {
			st.last = vals
			st.emit(modeValues, "values", vals)
		}
	}
	if st.want(modeUpdates) {
		for _, w := range snap.Writers {
			if w == "input" {
				continue
			}
			keys, known := st.wrote[w]
			upd := map[string]any{}
			for k, raw := range snap.Values {
				if bytes.Equal(raw, st.prev[k]) {
					continue
				}
				if known && !contains(keys, k) {
					continue
				}
				upd[k] = st.delta(k, raw, st.prev[k])
			}
			st.emit(modeUpdates, "updates", map[string]any{w: upd})
		}
		st.wrote = map[string][]string{}
	}
	st.prev = snap.Values
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (st *streamer) msgID(ev event.Event) string {
	return "run-" + st.rec.RunID + "-" + ev.Node + "-" + strconv.Itoa(ev.Step)
}

func (st *streamer) text(ev event.Event) {
	if !st.want(modeMessages) && !st.want(modeMessagesTuple) {
		return
	}
	id := st.msgID(ev)
	delta, isDelta := ev.Payload["delta"].(string)
	content, _ := ev.Payload["content"].(string)
	acc, streamed := st.streamed[id]
	if !isDelta && streamed {
		// The complete text of a streamed message: already sent as deltas.
		if st.want(modeMessages) {
			st.emit(modeMessages, "messages/complete", []any{aiMessage(id, content)})
		}
		delete(st.streamed, id)
		return
	}
	piece := content
	if isDelta {
		piece = delta
		st.streamed[id] = acc + delta
	}
	meta := st.meta(ev)
	if st.want(modeMessagesTuple) {
		st.emit(modeMessagesTuple, "messages", []any{map[string]any{"type": "AIMessageChunk", "id": id, "content": piece}, meta})
	}
	if st.want(modeMessages) {
		if !streamed {
			st.emit(modeMessages, "messages/metadata", map[string]any{id: map[string]any{"metadata": meta}})
		}
		if isDelta {
			st.emit(modeMessages, "messages/partial", []any{aiMessage(id, acc+delta)})
		} else {
			st.emit(modeMessages, "messages/complete", []any{aiMessage(id, content)})
		}
	}
}

func aiMessage(id, content string) map[string]any {
	return map[string]any{"type": "ai", "id": id, "content": content}
}

func (st *streamer) debug(ev event.Event) {
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	switch ev.Type {
	case event.NodeStart:
		st.emit(modeDebug, "debug", map[string]any{"type": "task", "timestamp": ts, "step": ev.Step,
			"payload": map[string]any{"id": ev.Payload["task"], "name": ev.Node, "triggers": []any{}}})
	case event.NodeEnd:
		st.emit(modeDebug, "debug", map[string]any{"type": "task_result", "timestamp": ts, "step": ev.Step,
			"payload": map[string]any{"id": ev.Payload["task"], "name": ev.Node, "result": ev.Payload["update"],
				"status": ev.Payload["status"], "duration_ms": ev.Payload["duration_ms"], "interrupts": []any{}}})
	case event.Checkpoint:
		st.emit(modeDebug, "debug", map[string]any{"type": "checkpoint", "timestamp": ts, "step": ev.Payload["step"],
			"payload": map[string]any{"config": cpConfig(st.rec.ThreadID, str(ev.Payload["checkpoint_id"])),
				"next": ev.Payload["next"], "metadata": map[string]any{"source": ev.Payload["source"], "step": ev.Payload["step"]}}})
	}
}

func (st *streamer) events(ev event.Event) {
	name := ""
	data := map[string]any{}
	switch ev.Type {
	case event.NodeStart:
		name = "on_chain_start"
	case event.NodeEnd:
		name = "on_chain_end"
		data["output"] = ev.Payload["update"]
	case event.Text:
		name = "on_chat_model_stream"
		piece, isDelta := ev.Payload["delta"].(string)
		if !isDelta {
			piece, _ = ev.Payload["content"].(string)
		}
		data["chunk"] = map[string]any{"type": "AIMessageChunk", "content": piece, "id": st.msgID(ev)}
	case event.RunStart, event.Done, event.Checkpoint, event.Interrupt, "usage":
		return
	default:
		name = "on_custom_event"
		data = map[string]any{"type": ev.Type, "payload": ev.Payload}
	}
	st.emit(modeEvents, "events", map[string]any{"event": name, "name": ev.Node, "run_id": st.rec.RunID,
		"data": data, "metadata": st.meta(ev), "tags": []any{}})
}

// chat renders the chat endpoints' format: text, emotion, hitl, tool_result, done, error.
func (st *streamer) chat(ev event.Event) {
	out := func(typ string, payload map[string]any) {
		st.emit(modeChat, "", map[string]any{"type": typ, "payload": payload})
	}
	switch ev.Type {
	case event.Text:
		id := st.msgID(ev)
		if delta, ok := ev.Payload["delta"].(string); ok {
			st.streamed[id] += delta
			out("text", map[string]any{"content": delta, "delta": true})
			return
		}
		if _, streamed := st.streamed[id]; streamed {
			delete(st.streamed, id)
			return
		}
		content, _ := ev.Payload["content"].(string)
		out("text", map[string]any{"content": content})
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

// finish emits what a run's end adds: the final values with pending
// interrupts as "__interrupt__".
func (st *streamer) finish(res *engine.Result) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if res == nil || res.Status != engine.StatusInterrupted || !st.want(modeValues) {
		return
	}
	vals := map[string]any{}
	for k, v := range st.last {
		vals[k] = v
	}
	if st.last == nil {
		for k, v := range res.State {
			vals[k] = v
		}
		annotateMessages(st.g, vals)
	}
	vals["__interrupt__"] = lgInterrupts(res.Interrupts)
	st.emit(modeValues, "values", vals)
}
