package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/server/sse"
)

// The Python SDK's thread stream (langgraph_sdk AsyncThreadStream over its
// SSE transport, ProtocolSseTransport) sends these requests; the tests send
// them as it builds them: commands as {"id", "method", "params"} to
// /threads/{id}/commands, event streams as {"channels", "namespaces",
// "depth", "since"} to /threads/{id}/stream/events with the headers below.

// protocolEventStream is an open event stream of the thread protocol.
type protocolEventStream struct {
	events chan protocolEvent
	cancel func()
}

// openEvents opens an event stream as the SDK's open_event_stream does.
func openEvents(t *testing.T, f *fixture, thread string, filter map[string]any) *protocolEventStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	b, _ := json.Marshal(filter)
	req, _ := http.NewRequestWithContext(ctx, "POST", f.http.URL+"/threads/"+thread+"/stream/events", bytes.NewReader(b))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("accept", "text/event-stream")
	req.Header.Set("cache-control", "no-store")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("event stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &protocolEventStream{events: make(chan protocolEvent, 256), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.events)
		sse.Parse(resp.Body, func(fr sse.Frame) error {
			var e protocolEvent
			if err := json.Unmarshal(fr.Data, &e); err != nil {
				t.Errorf("event %s: %v", fr.Data, err)
				return err
			}
			if fr.ID != e.EventID || fr.Event != e.Method || e.Type != "event" || e.EventID == "" {
				t.Errorf("SSE frame id %q event %q carries event %s", fr.ID, fr.Event, fr.Data)
			}
			s.events <- e
			return nil
		})
	}()
	t.Cleanup(cancel)
	return s
}

// until reads events until one satisfies done, and returns them all.
func (s *protocolEventStream) until(t *testing.T, done func(protocolEvent) bool) []protocolEvent {
	t.Helper()
	var got []protocolEvent
	for e := range s.events {
		got = append(got, e)
		if done(e) {
			return got
		}
	}
	t.Fatalf("the event stream ended after %d events without the one awaited: %+v", len(got), got)
	return nil
}

// rootLifecycle is the predicate of a root lifecycle event.
func rootLifecycle(phase string) func(protocolEvent) bool {
	return func(e protocolEvent) bool {
		d, _ := e.Params.Data.(map[string]any)
		return e.Method == "lifecycle" && len(e.Params.Namespace) == 0 && d["event"] == phase
	}
}

// command sends a protocol command as the SDK's send_command does and
// returns the envelope.
func command(t *testing.T, f *fixture, thread string, id int, method string, params map[string]any) map[string]any {
	t.Helper()
	code, body := f.do("POST", "/threads/"+thread+"/commands", map[string]any{"id": id, "method": method, "params": params})
	env, _ := body.(map[string]any)
	if code != 200 || env == nil || env["id"] != float64(id) {
		t.Fatalf("%s: %d %v", method, code, body)
	}
	return env
}

func result(t *testing.T, env map[string]any) map[string]any {
	t.Helper()
	if env["type"] != "success" {
		t.Fatalf("command answered %v, want success", env)
	}
	r, _ := env["result"].(map[string]any)
	return r
}

func eventData(e protocolEvent) map[string]any {
	d, _ := e.Params.Data.(map[string]any)
	return d
}

// A run started with run.start on a thread the client named (which does
// not exist yet) streams its lifecycle, values and updates as protocol
// events, numbered across the thread; streams opened later replay them
// after since; state.get and agent.getTree describe the thread.
func TestProtocolRunStartStreamsEvents(t *testing.T) {
	f := newFixture(t, nil)
	thread := "7897c728-0000-4000-8000-000000000001"
	watcher := openEvents(t, f, thread, map[string]any{"channels": []string{"lifecycle", "input"}})
	env := command(t, f, thread, 1, "run.start", map[string]any{"assistant_id": "echo",
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}})
	runID, _ := result(t, env)["run_id"].(string)
	meta, _ := env["meta"].(map[string]any)
	if runID == "" || meta["thread_id"] != thread {
		t.Fatalf("run.start answered %v", env)
	}
	life := watcher.until(t, rootLifecycle("completed"))
	if len(life) != 2 || !rootLifecycle("running")(life[0]) || eventData(life[0])["graph_name"] != "echo" {
		t.Fatalf("lifecycle events %+v, want running then completed", life)
	}
	if life[1].Seq <= life[0].Seq {
		t.Errorf("seqs %d then %d: events are numbered in order", life[0].Seq, life[1].Seq)
	}

	all := openEvents(t, f, thread, map[string]any{"channels": []string{"values", "updates", "lifecycle"}})
	events := all.until(t, rootLifecycle("completed"))
	var last map[string]any
	updates := 0
	for i, e := range events {
		if i > 0 && e.Seq <= events[i-1].Seq {
			t.Errorf("replayed seqs out of order: %+v", events)
		}
		switch e.Method {
		case "values":
			last = eventData(e)
		case "updates":
			updates++
			if e.Params.Node != "answer" {
				t.Errorf("an updates event of node %q, want answer", e.Params.Node)
			}
		}
	}
	msgs, _ := last["messages"].([]any)
	if len(msgs) == 0 || msgs[len(msgs)-1].(map[string]any)["content"] != "You said: hi" || updates == 0 {
		t.Fatalf("events %+v: want the answer in the last values and an update", events)
	}

	// since: only what follows that seq.
	valuesSeq := 0
	for _, e := range events {
		if e.Method == "values" {
			valuesSeq = e.Seq
		}
	}
	later := openEvents(t, f, thread, map[string]any{"channels": []string{"values", "lifecycle"}, "since": valuesSeq})
	if e := later.until(t, rootLifecycle("completed")); len(e) != 1 {
		t.Errorf("a stream since the last values event replayed %+v, want the completed lifecycle only", e)
	}

	state := result(t, command(t, f, thread, 2, "state.get", map[string]any{"keys": []string{"messages"}}))
	_, rest := f.do("GET", "/threads/"+thread+"/state", nil)
	cp, _ := state["checkpoint"].(map[string]any)
	values, _ := state["values"].(map[string]any)
	if cp["id"] != rest.(map[string]any)["checkpoint_id"] || len(values) != 1 || values["messages"] == nil {
		t.Errorf("state.get = %v; the REST state is %v", state, rest)
	}
	tree, _ := result(t, command(t, f, thread, 3, "agent.getTree", nil))["tree"].(map[string]any)
	if tree["status"] != "completed" || tree["graph_name"] != "echo" {
		t.Errorf("agent.getTree = %v", tree)
	}
	if code, th := f.do("GET", "/threads/"+thread, nil); code != 200 || th.(map[string]any)["metadata"].(map[string]any)["graph_id"] != "echo" {
		t.Errorf("the thread run.start created: %d %v", code, th)
	}
}

// A run that stops at an interrupt ends interrupted after an input.requested
// event naming the interrupt; input.respond (and run.start with input, on a
// thread that waits) resumes it.
func TestProtocolInterruptAndRespond(t *testing.T) {
	f := newFixture(t, nil)
	for _, tt := range []struct {
		name, answer, reply string
		respond             func(thread, interruptID string) map[string]any
	}{
		{"input.respond", "yes", "Approved.", func(thread, id string) map[string]any {
			return command(t, f, thread, 2, "input.respond", map[string]any{"interrupt_id": id, "namespace": []string{}, "response": "yes"})
		}},
		{"input.respond responses", "yes", "Approved.", func(thread, id string) map[string]any {
			return command(t, f, thread, 2, "input.respond", map[string]any{"responses": []any{map[string]any{"interrupt_id": id, "response": "yes"}}})
		}},
		{"run.start with input", "no", "Declined.", func(thread, id string) map[string]any {
			return command(t, f, thread, 2, "run.start", map[string]any{"assistant_id": "approve", "input": "no"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			thread := "approve-" + strings.ReplaceAll(tt.name, " ", "-")
			events := openEvents(t, f, thread, map[string]any{"channels": []string{"lifecycle", "input"}})
			result(t, command(t, f, thread, 1, "run.start", map[string]any{"assistant_id": "approve", "input": map[string]any{}}))
			got := events.until(t, rootLifecycle("interrupted"))
			var asked *protocolEvent
			for i := range got {
				if got[i].Method == "input.requested" {
					asked = &got[i]
				}
			}
			if asked == nil {
				t.Fatalf("events %+v: no input.requested", got)
			}
			id, _ := eventData(*asked)["interrupt_id"].(string)
			if id == "" || eventData(*asked)["payload"] == nil {
				t.Fatalf("input.requested %+v", asked)
			}
			result(t, tt.respond(thread, id))
			events.until(t, rootLifecycle("completed"))
			state := result(t, command(t, f, thread, 3, "state.get", nil))
			values, _ := state["values"].(map[string]any)
			msgs, _ := values["messages"].([]any)
			if values["approved"] != tt.answer || len(msgs) == 0 || msgs[len(msgs)-1].(map[string]any)["content"] != tt.reply {
				t.Errorf("state after the answer: %v", values)
			}
		})
	}
}

// Commands the protocol refuses are answered with its error envelope (as
// the Agent Server answers them, with 200), naming what is wrong.
func TestProtocolCommandErrors(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "plain"})
	tests := []struct {
		method string
		params map[string]any
		code   string
		says   string
	}{
		{"run.stop", nil, "unknown_command", "run.stop"},
		{"run.start", map[string]any{}, "invalid_argument", "assistant_id"},
		{"run.start", map[string]any{"assistant_id": "nope"}, "invalid_argument", "nope"},
		{"run.start", map[string]any{"assistant_id": "echo", "input": []any{1}}, "invalid_argument", "input"},
		{"input.respond", map[string]any{"response": "yes"}, "invalid_argument", "interrupt_id"},
		{"input.respond", map[string]any{"interrupt_id": "x", "response": "yes"}, "no_such_run", "run.start"},
		{"input.respond", map[string]any{"responses": []any{}}, "invalid_argument", "at least one"},
		{"subscription.subscribe", map[string]any{"channels": []string{"values"}}, "not_supported", "stream/events"},
		{"state.fork", nil, "not_supported", "state.fork"},
		{"state.listCheckpoints", nil, "not_supported", "history"},
	}
	for i, tt := range tests {
		env := command(t, f, "plain", i, tt.method, tt.params)
		msg, _ := env["message"].(string)
		if env["type"] != "error" || env["error"] != tt.code || !strings.Contains(msg, tt.says) {
			t.Errorf("%s %v: %v, want error %s naming %q", tt.method, tt.params, env, tt.code, tt.says)
		}
	}
}

// Requests that are not commands or filters of the protocol, and its
// WebSocket transport, are refused with a 4xx or 501 JSON error naming what
// is wrong.
func TestProtocolHostileRequests(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		method, path string
		body         any
		status       int
		says         string
	}{
		{"POST", "/threads/t/commands", "not json", 400, ""},
		{"POST", "/threads/t/commands", `[1]`, 422, "object"},
		{"POST", "/threads/t/commands", `{}`, 422, "id"},
		{"POST", "/threads/t/commands", `{"id": -1, "method": "run.start"}`, 422, "id"},
		{"POST", "/threads/t/commands", `{"id": "1", "method": "run.start"}`, 422, "id"},
		{"POST", "/threads/t/commands", `{"id": 1.5, "method": "run.start"}`, 422, "id"},
		{"POST", "/threads/t/commands", `{"id": 1}`, 422, "method"},
		{"POST", "/threads/t/commands", `{"id": 1, "method": 7}`, 422, "method"},
		{"POST", "/threads/t/commands", `{"id": 1, "method": "state.get", "params": [1]}`, 422, "params"},
		{"POST", "/threads/" + strings.Repeat("x", 300) + "/commands", `{"id": 1, "method": "state.get"}`, 422, "thread id"},
		{"POST", "/threads/" + strings.Repeat("x", 300) + "/stream/events", `{"channels": ["values"]}`, 422, "thread id"},
		{"POST", "/threads/t/stream/events", `{}`, 422, "channels"},
		{"POST", "/threads/t/stream/events", `{"channels": []}`, 422, "channels"},
		{"POST", "/threads/t/stream/events", `{"channels": "values"}`, 422, "channels"},
		{"POST", "/threads/t/stream/events", `{"channels": ["values", "bogus"]}`, 422, "bogus"},
		{"POST", "/threads/t/stream/events", `{"channels": ["custom:"]}`, 422, "custom:"},
		{"POST", "/threads/t/stream/events", `{"channels": ["values"], "run_id": "r"}`, 422, "run_id"},
		{"POST", "/threads/t/stream/events", `{"channels": ["values"], "since": -1}`, 422, "since"},
		{"POST", "/threads/t/stream/events", `{"channels": ["values"], "since": "3"}`, 422, "since"},
		{"POST", "/threads/t/stream/events", `{"channels": ["values"], "depth": -2}`, 422, "depth"},
		{"POST", "/threads/t/stream/events", `{"channels": ["values"], "namespaces": [1]}`, 422, "namespaces"},
		{"POST", "/threads/t/stream/events", "nope", 400, ""},
		{"GET", "/threads/t/stream/events", nil, 501, "WebSocket"},
		{"POST", "/ui/echo", `{"name": "card"}`, 501, "/ui/echo"},
	}
	for _, tt := range tests {
		code, body := f.do(tt.method, tt.path, tt.body)
		errBody, _ := body.(map[string]any)
		detail, _ := errBody["detail"].(string)
		if code != tt.status || detail == "" || !strings.Contains(detail, tt.says) {
			t.Errorf("%s %s %v: %d %v, want %d naming %q", tt.method, tt.path, tt.body, code, body, tt.status, tt.says)
		}
	}
}

// The messages a run writes stream on the messages channel as the SDKs'
// chat model streams read them: message-start with the node's metadata,
// the text block's start, its text (delta), its finish with the whole
// text, and message-finish; the user's input is not among them.
func TestProtocolMessages(t *testing.T) {
	f := newFixture(t, nil)
	thread := "messages-thread"
	events := openEvents(t, f, thread, map[string]any{"channels": []string{"messages"}})
	result(t, command(t, f, thread, 1, "run.start", map[string]any{"assistant_id": "echo",
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "tokens"}}}}))
	got := events.until(t, func(e protocolEvent) bool { return eventData(e)["event"] == "message-finish" })
	var kinds []string
	text := ""
	for _, e := range got {
		d := eventData(e)
		kinds = append(kinds, d["event"].(string))
		if d["id"] != eventData(got[0])["id"] || d["id"] == "" {
			t.Errorf("event %v is not of the message started", d)
		}
		if delta, ok := d["delta"].(map[string]any); ok {
			text += delta["text"].(string)
		}
	}
	want := []string{"message-start", "content-block-start", "content-block-delta", "content-block-finish", "message-finish"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("messages events %v, want %v", kinds, want)
	}
	start := eventData(got[0])
	meta, _ := start["metadata"].(map[string]any)
	finish, _ := eventData(got[3])["content"].(map[string]any)
	if start["role"] != "ai" || meta["langgraph_node"] != "answer" || meta["run_id"] == nil {
		t.Errorf("message-start %v: want role ai and the node's metadata", start)
	}
	if text != "You said: tokens" || finish["text"] != text {
		t.Errorf("streamed text %q, finished with %v", text, finish)
	}
}

// A model's reply streamed token by token is one message on the messages
// channel: its deltas, in order, spell out the whole text.
func TestProtocolStreamedMessage(t *testing.T) {
	model := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Text("Tokens arrive one by one, then the whole.")))
	t.Setenv("OPENAI_BASE_URL", model.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	dir := t.TempDir()
	src := `dsl_version: "graphctl/v1"
name: "talk"
state: messages: {type: "messages"}
start: "agent"
nodes: agent: {type: "llm", next: "END"}
`
	if err := os.WriteFile(filepath.Join(dir, "talk.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newGraphFixture(t, dir, nil, llm.OverrideKey.Bind(node.Extra{}, "openai:gpt-4o-mini"))
	events := openEvents(t, f, "talk-thread", map[string]any{"channels": []string{"messages", "lifecycle"}})
	result(t, command(t, f, "talk-thread", 1, "run.start", map[string]any{"assistant_id": "talk",
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "go"}}}}))
	got := events.until(t, rootLifecycle("completed"))
	var deltas []string
	finished := ""
	for _, e := range got {
		d := eventData(e)
		switch d["event"] {
		case "content-block-delta":
			deltas = append(deltas, d["delta"].(map[string]any)["text"].(string))
		case "content-block-finish":
			finished, _ = d["content"].(map[string]any)["text"].(string)
		}
	}
	if len(deltas) < 2 || strings.Join(deltas, "") != "Tokens arrive one by one, then the whole." || finished != strings.Join(deltas, "") {
		t.Errorf("deltas %q, finished %q: want the reply streamed in pieces, then whole", deltas, finished)
	}
}

// The tool calls of an agent's model, and the tools' results, stream on the
// tools channel: tool-started with the call's name and arguments, then
// tool-finished with the tool's output, by tool call id.
func TestProtocolTools(t *testing.T) {
	f := agentFixture(t)
	events := openEvents(t, f, "tools-thread", map[string]any{"channels": []string{"tools", "lifecycle"}})
	result(t, command(t, f, "tools-thread", 1, "run.start", map[string]any{"assistant_id": "agent",
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "who answers, and what is 2 + 40?"}}}}))
	got := events.until(t, rootLifecycle("completed"))
	started, finished := map[string]map[string]any{}, map[string]map[string]any{}
	for _, e := range got {
		if e.Method != "tools" {
			continue
		}
		d := eventData(e)
		id, _ := d["tool_call_id"].(string)
		switch d["event"] {
		case "tool-started":
			if finished[id] != nil {
				t.Errorf("tool call %s finished before it started", id)
			}
			started[id] = d
		case "tool-finished":
			finished[id] = d
		default:
			t.Errorf("tools event %v", d)
		}
	}
	names := map[string]bool{}
	for id, d := range started {
		names[d["tool_name"].(string)] = true
		if finished[id] == nil || finished[id]["output"] == nil || finished[id]["output"] == "" {
			t.Errorf("tool call %s (%v) has no output: %v", id, d, finished[id])
		}
	}
	if len(started) != 2 || !names["weather__whoami"] || !names["calc__add"] {
		t.Fatalf("tool calls started %v, want weather__whoami and calc__add", started)
	}
	for _, d := range started {
		if d["tool_name"] == "calc__add" {
			if in, _ := d["input"].(map[string]any); in["a"] != float64(2) || in["b"] != float64(40) {
				t.Errorf("calc__add input %v", d["input"])
			}
		}
	}
}
