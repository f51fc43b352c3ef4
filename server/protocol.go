package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/sse"
)

// This file serves the thread-centric streaming protocol of LangGraph's
// Agent Server (the SDKs' threads.stream: Python's AsyncThreadStream, the
// JS client's ThreadStream) over its SSE transport: commands are POSTed to
// /threads/{thread}/commands, each answered with a success or error
// envelope, and events are read from /threads/{thread}/stream/events, one
// filtered SSE stream per subscription. A thread's events are numbered by
// seq across its runs; a stream asks for those after since. The WebSocket
// transport (GET /threads/{thread}/stream/events) is not served.

// protocolChannels are the channels of the protocol's events that a
// subscription may name (custom:NAME names one custom channel).
var protocolChannels = []string{"values", "updates", "checkpoints", "messages", "tools", "custom", "lifecycle", "input", "tasks"}

// protocolRunModes are the stream modes of the runs started through the
// protocol, whose frames become its values, updates, messages and custom
// events.
var protocolRunModes = []any{modeValues, modeUpdates, modeMessages, "custom"}

// maxProtocolEvents bounds the events a thread keeps for streams that
// subscribe late or reconnect (since).
const maxProtocolEvents = 2048

// maxProtocolThreads bounds the threads whose protocol state is kept; past
// it, threads with no open stream and no run streaming are forgotten.
const maxProtocolThreads = 1024

// protocolEvent is one event of the protocol, as its streams send it.
type protocolEvent struct {
	Type    string              `json:"type"`
	EventID string              `json:"event_id"`
	Seq     int                 `json:"seq"`
	Method  string              `json:"method"`
	Params  protocolEventParams `json:"params"`
}

type protocolEventParams struct {
	Namespace []string `json:"namespace"`
	Timestamp int64    `json:"timestamp"`
	Node      string   `json:"node,omitempty"`
	Data      any      `json:"data"`
}

// channel is the channel a subscription names to receive the event.
func (e *protocolEvent) channel() string {
	switch e.Method {
	case "input.requested":
		return "input"
	case "custom":
		if m, ok := e.Params.Data.(map[string]any); ok {
			if name, ok := m["name"].(string); ok && name != "" {
				return "custom:" + name
			}
		}
	}
	return e.Method
}

// protocolThread is the protocol state of one thread: its events and the
// assistant its runs started with.
type protocolThread struct {
	mu        sync.Mutex
	seq       int
	events    []protocolEvent
	wake      chan struct{} // closed (and replaced) when an event is added
	assistant string
	// streams counts the open event streams; pumping the runs whose
	// frames are being turned into events.
	streams, pumping int
}

// add numbers an event of method in namespace and keeps it.
func (t *protocolThread) add(method string, namespace []string, node string, data any) {
	if namespace == nil {
		namespace = []string{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	t.events = append(t.events, protocolEvent{Type: "event", EventID: strconv.Itoa(t.seq), Seq: t.seq, Method: method,
		Params: protocolEventParams{Namespace: namespace, Timestamp: time.Now().UnixMilli(), Node: node, Data: data}})
	if len(t.events) > maxProtocolEvents {
		t.events = slices.Delete(t.events, 0, len(t.events)-maxProtocolEvents)
	}
	close(t.wake)
	t.wake = make(chan struct{})
}

// since returns the events after seq after and a channel closed when
// another is added.
func (t *protocolThread) since(after int) ([]protocolEvent, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, _ := slices.BinarySearchFunc(t.events, after+1, func(e protocolEvent, seq int) int { return e.Seq - seq })
	return slices.Clone(t.events[i:]), t.wake
}

// protocolThreads holds the protocol state of the threads driven through it.
type protocolThreads struct {
	mu sync.Mutex
	m  map[string]*protocolThread
}

// get returns the protocol state of thread, made on first use.
func (p *protocolThreads) get(thread string) *protocolThread {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.m[thread]; ok {
		return t
	}
	if p.m == nil {
		p.m = map[string]*protocolThread{}
	}
	if len(p.m) >= maxProtocolThreads {
		for id, t := range p.m {
			t.mu.Lock()
			idle := t.streams == 0 && t.pumping == 0
			t.mu.Unlock()
			if idle {
				delete(p.m, id)
			}
		}
	}
	t := &protocolThread{wake: make(chan struct{})}
	p.m[thread] = t
	return t
}

// forget drops the protocol state of a deleted thread.
func (p *protocolThreads) forget(thread string) {
	p.mu.Lock()
	delete(p.m, thread)
	p.mu.Unlock()
}

// protocolCommand is a command of the protocol.
type protocolCommand struct {
	ID     int64          `json:"id"`
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// protocolError is the error envelope of a command the protocol refuses;
// it is answered with 200, as LangGraph's Agent Server answers it (the SDKs
// raise it with its code and message).
type protocolError struct {
	code, message string
}

func (e *protocolError) Error() string { return e.code + ": " + e.message }

func protocolErrorf(code, format string, args ...any) *protocolError {
	return &protocolError{code: code, message: fmt.Sprintf(format, args...)}
}

// readProtocolCommand reads a command: an object with an integer id (0 or
// more), a string method and, when present, object params.
func readProtocolCommand(c *gin.Context) (protocolCommand, error) {
	var raw map[string]json.RawMessage
	if err := bindJSON(c, &raw); err != nil {
		return protocolCommand{}, err
	}
	if raw == nil {
		return protocolCommand{}, invalid("a protocol command is a JSON object with an integer id and a string method")
	}
	var cmd protocolCommand
	if err := json.Unmarshal(raw["id"], &cmd.ID); err != nil || raw["id"] == nil || cmd.ID < 0 {
		return cmd, invalid("protocol command id must be an integer of 0 or more, got %s", orNothing(raw["id"]))
	}
	if err := json.Unmarshal(raw["method"], &cmd.Method); err != nil || cmd.Method == "" {
		return cmd, invalid("protocol command method must be a non-empty string, got %s", orNothing(raw["method"]))
	}
	if p, ok := raw["params"]; ok && string(p) != "null" {
		if err := json.Unmarshal(p, &cmd.Params); err != nil {
			return cmd, invalid("protocol command params must be an object, got %s", p)
		}
	}
	return cmd, nil
}

// orNothing shows a JSON member for a message ("nothing" when absent).
func orNothing(raw json.RawMessage) string {
	if raw == nil {
		return "nothing"
	}
	return string(raw)
}

// protocolCommands serves POST /threads/{thread}/commands: run.start,
// input.respond, state.get and agent.getTree; other commands of the
// protocol answer not_supported, unknown ones unknown_command.
func (s *Server) protocolCommands(c *gin.Context) {
	thread := c.Param("thread")
	c.Set(ctxThreadID, thread)
	if err := validID("thread", thread); err != nil {
		s.fail(c, err)
		return
	}
	cmd, err := readProtocolCommand(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	t := s.protocol.get(thread)
	var result map[string]any
	switch cmd.Method {
	case "run.start":
		result, err = s.protocolRunStart(c, t, cmd.Params)
	case "input.respond":
		result, err = s.protocolInputRespond(c, t, cmd.Params)
	case "state.get":
		result, err = s.protocolStateGet(c, thread, cmd.Params)
	case "agent.getTree":
		result = map[string]any{"tree": s.protocolTree(t)}
	case "subscription.subscribe", "subscription.unsubscribe", "subscription.reconnect":
		err = protocolErrorf("not_supported", "%s is a command of the WebSocket transport, which graphctl does not serve; subscribe with POST /threads/{thread_id}/stream/events", cmd.Method)
	case "state.listCheckpoints", "state.fork":
		err = protocolErrorf("not_supported", "%s is not served by graphctl; read the history with POST /threads/{thread_id}/history, fork with run.start and config.configurable.checkpoint_id", cmd.Method)
	default:
		err = protocolErrorf("unknown_command", "unknown protocol command %q", cmd.Method)
	}
	t.mu.Lock()
	meta := map[string]any{"thread_id": thread, "applied_through_seq": t.seq}
	t.mu.Unlock()
	var pe *protocolError
	var ae *apiError
	switch {
	case errors.As(err, &pe):
		c.JSON(http.StatusOK, gin.H{"type": "error", "id": cmd.ID, "error": pe.code, "message": pe.message})
	case errors.As(err, &ae) && ae.status < 500:
		// A request the run endpoints refuse (an unknown assistant, an
		// input that does not fit the graph) is the command's error.
		c.JSON(http.StatusOK, gin.H{"type": "error", "id": cmd.ID, "error": "invalid_argument", "message": ae.message})
	case err != nil:
		s.fail(c, err)
	default:
		c.JSON(http.StatusOK, gin.H{"type": "success", "id": cmd.ID, "result": result, "meta": meta})
	}
}

// protocolRunStart starts a run on the thread (creating the thread when it
// does not exist), or, when the thread waits at interrupts and the command
// has input, resumes it with that input as the answers.
func (s *Server) protocolRunStart(c *gin.Context, t *protocolThread, params map[string]any) (map[string]any, error) {
	assistant, _ := params["assistant_id"].(string)
	if assistant == "" {
		return nil, protocolErrorf("invalid_argument", "run.start requires an assistant_id")
	}
	t.mu.Lock()
	bound := t.assistant
	t.mu.Unlock()
	if bound != "" && bound != assistant {
		return nil, protocolErrorf("invalid_argument", "thread %s is bound to assistant %s; cannot run %s", c.Param("thread"), bound, assistant)
	}
	body := runBody{AssistantID: assistant, IfNotExists: "create", MultitaskStrategy: "enqueue"}
	if v, ok := params["multitaskStrategy"].(string); ok && v != "" && runs.ValidStrategy(v) {
		body.MultitaskStrategy = v
	}
	body.Config, _ = params["config"].(map[string]any)
	body.Metadata, _ = params["metadata"].(map[string]any)
	if in := params["input"]; in != nil {
		pending, err := s.pendingInterruptIDs(c, c.Param("thread"))
		if err != nil {
			return nil, err
		}
		if len(pending) > 0 {
			body.Command = &commandBody{Resume: in}
		} else if m, ok := in.(map[string]any); ok {
			body.Input = m
		} else {
			return nil, protocolErrorf("invalid_argument", "run.start input must be an object of state values")
		}
	}
	runID, err := s.protocolRun(c, t, &body)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.assistant = assistant
	t.mu.Unlock()
	return map[string]any{"run_id": runID}, nil
}

// protocolInputRespond resumes the thread's run that waits at interrupts
// with the answers: interrupt_id and response, or responses (a list of
// both).
func (s *Server) protocolInputRespond(c *gin.Context, t *protocolThread, params map[string]any) (map[string]any, error) {
	answers := map[string]any{}
	if list, ok := params["responses"].([]any); ok {
		for _, r := range list {
			m, _ := r.(map[string]any)
			id, ok := m["interrupt_id"].(string)
			if !ok {
				return nil, protocolErrorf("invalid_argument", "input.respond responses entries require an interrupt_id")
			}
			answers[id] = m["response"]
		}
		if len(answers) == 0 {
			return nil, protocolErrorf("invalid_argument", "input.respond requires at least one response")
		}
	} else if id, ok := params["interrupt_id"].(string); ok {
		answers[id] = params["response"]
	} else {
		return nil, protocolErrorf("invalid_argument", "input.respond requires an interrupt_id")
	}
	t.mu.Lock()
	assistant := t.assistant
	t.mu.Unlock()
	if assistant == "" {
		return nil, protocolErrorf("no_such_run", "thread %s has no active assistant; call run.start first", c.Param("thread"))
	}
	pending, err := s.pendingInterruptIDs(c, c.Param("thread"))
	if err != nil {
		return nil, err
	}
	if len(pending) == 0 {
		return nil, protocolErrorf("invalid_argument", "input.respond can only be used while the run is interrupted")
	}
	for id := range answers {
		if !slices.Contains(pending, id) {
			return nil, protocolErrorf("invalid_argument", "interrupt %q is not pending on thread %s (pending: %s)", id, c.Param("thread"), strings.Join(pending, ", "))
		}
	}
	body := runBody{AssistantID: assistant, MultitaskStrategy: "enqueue", Command: &commandBody{Resume: answers}}
	body.Config, _ = params["config"].(map[string]any)
	body.Metadata, _ = params["metadata"].(map[string]any)
	if u, ok := params["update"]; ok {
		body.Command.Update = u
	}
	if g, ok := params["goto"]; ok {
		body.Command.Goto = g
	}
	if _, err := s.protocolRun(c, t, &body); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// pendingInterruptIDs are the ids of the interrupts the thread waits at.
func (s *Server) pendingInterruptIDs(ctx context.Context, thread string) ([]string, error) {
	snap, err := s.cp.Latest(ctx, thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread %q: %w", thread, err)
	}
	var ids []string
	for _, in := range taskInterrupts(snap) {
		ids = append(ids, in.ID)
	}
	return ids, nil
}

// protocolRun submits a run of body on the thread in the path, streaming
// the protocol's modes, and turns its frames into the thread's events.
func (s *Server) protocolRun(c *gin.Context, t *protocolThread, body *runBody) (string, error) {
	body.StreamMode = protocolRunModes
	body.StreamSubgraphs = true
	p, err := s.prepare(c, body)
	if err != nil {
		return "", err
	}
	a, err := s.submit(c, p)
	if err != nil {
		return "", err
	}
	rec := a.Record()
	graph := rec.AssistantID
	if asst, err := s.runAssistant(c, rec.AssistantID); err == nil {
		graph = asst.GraphID
	}
	t.mu.Lock()
	t.pumping++
	t.mu.Unlock()
	t.add("lifecycle", nil, "", map[string]any{"event": "running", "graph_name": graph})
	go s.pumpProtocolRun(t, a, graph)
	return rec.RunID, nil
}

// pumpProtocolRun turns a run's frames into the thread's protocol events
// until the run ends, then adds its pending interrupts (input.requested)
// and the lifecycle event of its end: completed, interrupted or failed.
func (s *Server) pumpProtocolRun(t *protocolThread, a *runs.Active, graph string) {
	defer func() {
		t.mu.Lock()
		t.pumping--
		t.mu.Unlock()
	}()
	after, failed := 0, ""
	msgs := protocolMessages{t: t, runID: a.Record().RunID}
	for {
		entries, closed, wake := a.Buf.Since(after)
		for _, e := range entries {
			after = e.Seq
			method, ns, _ := strings.Cut(e.Frame.Event, "|")
			var namespace []string
			if ns != "" {
				namespace = strings.Split(ns, "|")
			}
			var data any
			if err := json.Unmarshal(e.Frame.Data, &data); err != nil {
				continue
			}
			switch method {
			case modeValues:
				// As on the Agent Server, interrupts are input.requested
				// events, and an empty state is no values event.
				if m, ok := data.(map[string]any); ok {
					delete(m, "__interrupt__")
					if len(m) == 0 {
						continue
					}
				}
				t.add("values", namespace, "", data)
			case modeUpdates:
				m, _ := data.(map[string]any)
				for _, node := range slices.Sorted(maps.Keys(m)) {
					if node != "__interrupt__" {
						t.add("updates", namespace, node, m[node])
					}
				}
			case "custom":
				t.add("custom", namespace, "", map[string]any{"payload": data})
			case "messages/metadata", "messages/partial", "messages/complete":
				msgs.frame(method, namespace, data)
			case "error":
				failed = errorMessage(data)
			}
		}
		if closed {
			break
		}
		<-wake
	}
	pending := s.endInterrupts(a)
	rec := a.Record()
	status := "completed"
	switch {
	case failed != "" || rec.Status == runs.StatusError:
		if failed == "" {
			failed = rec.Error
		}
		t.add("lifecycle", nil, "", map[string]any{"event": "failed", "graph_name": graph, "error": failed})
		return
	case rec.Status == runs.StatusInterrupted:
		status = "interrupted"
	}
	for _, in := range lgInterrupts(pending) {
		status = "interrupted"
		ns, _ := in["ns"].([]string)
		// The JS SDK reads the interrupt's value as payload, the Python
		// SDK as value.
		t.add("input.requested", ns, "", map[string]any{"interrupt_id": in["id"], "payload": in["value"], "value": in["value"]})
	}
	t.add("lifecycle", nil, "", map[string]any{"event": status, "graph_name": graph})
}

// endInterrupts waits for a run's end and returns the interrupts it left
// pending: those of its result, or, for a run another replica ran, those of
// its thread's newest checkpoint.
func (s *Server) endInterrupts(a *runs.Active) []checkpoint.Interrupt {
	<-a.Done()
	if res, _ := a.Result(); res != nil {
		return res.Interrupts
	}
	snap, err := s.cp.Latest(context.Background(), a.Record().ThreadID)
	if err != nil {
		return nil
	}
	return taskInterrupts(snap)
}

// protocolMessages turns a run's frames of the messages mode into the
// protocol's messages events: for each AI message, message-start (with
// the metadata of the node that wrote it) and the start of its text block,
// a content-block-delta for each piece of text streamed, then
// content-block-finish with the whole text and message-finish; and into
// its tools events: tool-started for each tool call of an AI message,
// tool-finished (or tool-error) for each tool message answering one.
type protocolMessages struct {
	t     *protocolThread
	runID string
	// meta holds the metadata of messages not yet started; sent, the
	// length of the text sent of each message started.
	meta map[string]map[string]any
	sent map[string]int
}

func (m *protocolMessages) frame(method string, namespace []string, data any) {
	if m.sent == nil {
		m.meta, m.sent = map[string]map[string]any{}, map[string]int{}
	}
	if method == "messages/metadata" {
		byID, _ := data.(map[string]any)
		for id, v := range byID {
			entry, _ := v.(map[string]any)
			meta, _ := entry["metadata"].(map[string]any)
			m.meta[id] = meta
		}
		return
	}
	list, _ := data.([]any)
	for _, it := range list {
		msg, _ := it.(map[string]any)
		id, _ := msg["id"].(string)
		text, _ := msg["content"].(string)
		if msg["type"] == "tool" && method == "messages/complete" {
			m.toolResult(namespace, msg, text)
			continue
		}
		if id == "" || msg["type"] != "ai" {
			continue
		}
		sent, started := m.sent[id]
		if !started {
			meta := map[string]any{"run_id": m.runID}
			for k, v := range m.meta[id] {
				meta[k] = v
			}
			delete(m.meta, id)
			m.t.add("messages", namespace, "", map[string]any{"event": "message-start", "id": id, "role": "ai", "metadata": meta})
			m.t.add("messages", namespace, "", map[string]any{"event": "content-block-start", "id": id, "index": 0, "content": map[string]any{"type": "text", "text": ""}})
		}
		if len(text) > sent {
			m.t.add("messages", namespace, "", map[string]any{"event": "content-block-delta", "id": id, "index": 0, "delta": map[string]any{"type": "text-delta", "text": text[sent:]}})
		}
		m.sent[id] = len(text)
		if method == "messages/complete" {
			m.t.add("messages", namespace, "", map[string]any{"event": "content-block-finish", "id": id, "index": 0, "content": map[string]any{"type": "text", "text": text}})
			m.t.add("messages", namespace, "", map[string]any{"event": "message-finish", "id": id})
			delete(m.sent, id)
			m.toolCalls(namespace, msg)
		}
	}
}

// toolCalls adds a tools channel's tool-started event for each tool call of
// a finished AI message.
func (m *protocolMessages) toolCalls(namespace []string, msg map[string]any) {
	calls, _ := msg["tool_calls"].([]any)
	for _, c := range calls {
		call, _ := c.(map[string]any)
		if id, _ := call["id"].(string); id != "" {
			m.t.add("tools", namespace, "", map[string]any{"event": "tool-started", "tool_call_id": id, "tool_name": call["name"], "input": call["args"]})
		}
	}
}

// toolResult adds a tools channel's tool-finished event for a tool
// message (tool-error when its status says the tool failed).
func (m *protocolMessages) toolResult(namespace []string, msg map[string]any, text string) {
	id, _ := msg["tool_call_id"].(string)
	if id == "" {
		return
	}
	var content any = text
	if text == "" {
		content = msg["content"]
	}
	if msg["status"] == "error" {
		m.t.add("tools", namespace, "", map[string]any{"event": "tool-error", "tool_call_id": id, "message": fmt.Sprint(content)})
		return
	}
	m.t.add("tools", namespace, "", map[string]any{"event": "tool-finished", "tool_call_id": id, "output": content})
}

// errorMessage is the message of a run's error frame.
func errorMessage(data any) string {
	if m, ok := data.(map[string]any); ok {
		if msg, ok := m["message"].(string); ok {
			return msg
		}
	}
	return fmt.Sprint(data)
}

// protocolStateGet answers state.get: the thread's values (only keys, when
// given) and its newest checkpoint.
func (s *Server) protocolStateGet(ctx context.Context, thread string, params map[string]any) (map[string]any, error) {
	snap, err := s.cp.Latest(ctx, thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return map[string]any{"values": map[string]any{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread %q: %w", thread, err)
	}
	st, err := s.stateOf(snap)
	if err != nil {
		return nil, err
	}
	values, _ := st["values"].(map[string]any)
	if keys, ok := params["keys"].([]any); ok {
		kept := map[string]any{}
		for _, k := range keys {
			if name, ok := k.(string); ok {
				if v, ok := values[name]; ok {
					kept[name] = v
				}
			}
		}
		values = kept
	}
	return map[string]any{"values": values, "checkpoint": map[string]any{"id": snap.ID}}, nil
}

// protocolTree answers agent.getTree: the thread's root graph and the
// status its last lifecycle event gave it.
func (s *Server) protocolTree(t *protocolThread) map[string]any {
	status, graph := "started", ""
	t.mu.Lock()
	for i := len(t.events) - 1; i >= 0; i-- {
		e := t.events[i]
		if d, ok := e.Params.Data.(map[string]any); ok && e.Method == "lifecycle" && len(e.Params.Namespace) == 0 {
			status, _ = d["event"].(string)
			graph, _ = d["graph_name"].(string)
			break
		}
	}
	t.mu.Unlock()
	return map[string]any{"namespace": []string{}, "status": status, "graph_name": graph}
}

// eventsFilter is the body of POST /threads/{thread}/stream/events: the
// channels of the events to send, the namespaces (prefixes) and depth
// below them, and since, the seq after which to start.
type eventsFilter struct {
	Channels   []string   `json:"channels"`
	Namespaces [][]string `json:"namespaces"`
	Depth      *int       `json:"depth"`
	Since      *int       `json:"since"`
}

var eventsFilterMembers = []string{"channels", "namespaces", "depth", "since"}

// readEventsFilter reads and checks a stream's filter; members other than
// its own are refused, as the Agent Server refuses them.
func readEventsFilter(c *gin.Context) (eventsFilter, error) {
	var f eventsFilter
	var raw map[string]json.RawMessage
	if err := bindJSON(c, &raw); err != nil {
		return f, err
	}
	for k := range raw {
		if !slices.Contains(eventsFilterMembers, k) {
			return f, invalid("%q is not a member of an event stream's filter (%s)", k, strings.Join(eventsFilterMembers, ", "))
		}
	}
	for _, k := range eventsFilterMembers {
		if v, ok := raw[k]; ok && string(v) != "null" {
			var err error
			switch k {
			case "channels":
				err = json.Unmarshal(v, &f.Channels)
			case "namespaces":
				err = json.Unmarshal(v, &f.Namespaces)
			case "depth":
				err = json.Unmarshal(v, &f.Depth)
			case "since":
				err = json.Unmarshal(v, &f.Since)
			}
			if err != nil {
				return f, invalid("%s of an event stream's filter: %s does not fit (channels: a list of strings, namespaces: a list of lists of strings, depth and since: integers of 0 or more)", k, v)
			}
		}
	}
	if len(f.Channels) == 0 {
		return f, invalid("channels is required: a non-empty list of %s (or custom:NAME)", strings.Join(protocolChannels, ", "))
	}
	for _, ch := range f.Channels {
		if !slices.Contains(protocolChannels, ch) && !(strings.HasPrefix(ch, "custom:") && len(ch) > len("custom:")) {
			return f, invalid("channel %q is not one of %s (or custom:NAME)", ch, strings.Join(protocolChannels, ", "))
		}
	}
	if f.Depth != nil && *f.Depth < 0 {
		return f, invalid("depth must be 0 or more, got %d", *f.Depth)
	}
	if f.Since != nil && *f.Since < 0 {
		return f, invalid("since must be 0 or more, got %d", *f.Since)
	}
	return f, nil
}

// matches reports whether the filter asks for the event.
func (f *eventsFilter) matches(e *protocolEvent) bool {
	ch := e.channel()
	if !slices.Contains(f.Channels, ch) && !(strings.HasPrefix(ch, "custom:") && slices.Contains(f.Channels, "custom")) {
		return false
	}
	if len(f.Namespaces) == 0 {
		return true
	}
	for _, prefix := range f.Namespaces {
		ns := e.Params.Namespace
		if len(ns) >= len(prefix) && slices.Equal(ns[:len(prefix)], prefix) && (f.Depth == nil || len(ns)-len(prefix) <= *f.Depth) {
			return true
		}
	}
	return false
}

// protocolEvents serves POST /threads/{thread}/stream/events: the thread's
// protocol events that the filter asks for, those after since first, then
// each as it comes, until the client closes the stream. The thread need
// not exist yet: the SDKs open their streams before run.start creates it.
func (s *Server) protocolEvents(c *gin.Context) {
	thread := c.Param("thread")
	c.Set(ctxThreadID, thread)
	if err := validID("thread", thread); err != nil {
		s.fail(c, err)
		return
	}
	f, err := readEventsFilter(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	t := s.protocol.get(thread)
	t.mu.Lock()
	t.streams++
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.streams--
		t.mu.Unlock()
	}()
	w := sse.Prepare(c.Writer)
	s.metrics.StreamOpened()
	defer s.metrics.StreamClosed()
	after := 0
	if f.Since != nil {
		after = *f.Since
	}
	keepAlive := time.NewTicker(s.cfg.KeepAlive)
	defer keepAlive.Stop()
	ctx := c.Request.Context()
	for {
		events, wake := t.since(after)
		for i := range events {
			e := &events[i]
			after = e.Seq
			if f.matches(e) && w.Write(sse.Frame{ID: e.EventID, Event: e.Method, Data: mustJSONBytes(e)}) != nil {
				return
			}
		}
		select {
		case <-wake:
		case <-keepAlive.C:
			if w.Comment("keep-alive") != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// protocolWebSocket answers GET /threads/{thread}/stream/events, the
// protocol's WebSocket transport, which graphctl does not serve.
func (s *Server) protocolWebSocket(c *gin.Context) {
	s.fail(c, errorf(http.StatusNotImplemented, "not_implemented",
		"the WebSocket transport of the thread protocol (GET /threads/{thread_id}/stream/events) is not served; use its SSE transport: POST /threads/{thread_id}/commands and POST /threads/{thread_id}/stream/events (transport \"sse\", the SDKs' default)"))
}

// uiComponents answers POST /ui/{assistant_id}, the JS SDK's loader of a
// graph's generative UI components, which graphctl graphs do not have.
func (s *Server) uiComponents(c *gin.Context) {
	s.fail(c, errorf(http.StatusNotImplemented, "not_implemented",
		"generative UI components (POST /ui/%s) are not served: graphctl graphs declare no UI components", c.Param("assistant")))
}
