package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func init() {
	tool.MustRegister(tool.Tool{
		Name:        "llmtest_weather",
		Description: "Current weather of a city.",
		Input: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required": []any{"city"}},
		Func: func(context.Context, map[string]any) (tool.Result, error) { return tool.Result{Text: "sunny"}, nil },
	})
}

// events collects emitted events safely, with their order.
type events struct {
	mu  sync.Mutex
	all []event.Event
	at  []time.Time
}

func (e *events) sink(ev event.Event) {
	now := time.Now()
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.at = append(e.at, now)
	e.mu.Unlock()
}

// times returns when each event of a type was emitted.
func (e *events) times(typ string) []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []time.Time
	for i, ev := range e.all {
		if ev.Type == typ {
			out = append(out, e.at[i])
		}
	}
	return out
}

func (e *events) of(typ string) []event.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []event.Event
	for _, ev := range e.all {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func testGraph(t testing.TB) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "messages: messages", "pending: contracts", "mood: string",
		"memory_update: any", "answer: string")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func build(t testing.TB, g *graph.Graph, cfg map[string]any) node.Node {
	t.Helper()
	n, b, err := nodetest.Build(g, "llm", "reasoning", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n == nil {
		t.Fatalf("llm node does not build: %v", b.Problems())
	}
	return n
}

// services points the real langchaingo OpenAI client at srv.
func services(srv *llmtest.Server) *node.Services { return servicesFor(envModels(srv)) }

func servicesFor(m *llm.Models) *node.Services {
	return &node.Services{Extra: llm.ServiceKey.Bind(node.Extra{}, m)}
}

// noCallRetry turns call retries off, for tests of what a node makes of a
// failed call once its retries are spent.
var noCallRetry = &graph.RetryPolicy{MaxAttempts: 1}

func run(t testing.TB, g *graph.Graph, n node.Node, s *node.Services, state map[string]any) (node.Update, *events, error) {
	return runWith(t, g, n, s, state, nil)
}

// runWith runs the node with a call retry policy (nil: the default).
func runWith(t testing.TB, g *graph.Graph, n node.Node, s *node.Services, state map[string]any, callRetry *graph.RetryPolicy) (node.Update, *events, error) {
	t.Helper()
	rec := &events{}
	in := &node.Input{Node: "reasoning", ThreadID: "th", RunID: "run1", Step: 3, Attempt: 1,
		State: state, Scope: nodetest.Scope(g, state), Emit: rec.sink, Services: s, CallRetry: callRetry}
	up, err := n.Run(context.Background(), in)
	return up, rec, err
}

func userSays(text string) map[string]any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": text, "id": "m1"}}}
}

func TestTextReply(t *testing.T) {
	const reply = "Hello there, how are you today?"
	tests := []struct {
		name   string
		stream bool
		// want is the text events' contents, in order.
		want  []string
		delta bool
	}{
		{name: "streaming", stream: true, want: []string{"Hello ", "there, ", "how ", "are ", "you ", "today?"}, delta: true},
		{name: "non-streaming", stream: false, want: []string{reply}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Text(reply)))
			g := testGraph(t)
			n := build(t, g, map[string]any{
				"model": "openai:gpt-4o-mini", "system": "You are kind. The user feels ${mood}.", "stream": tt.stream,
				"context": []any{
					map[string]any{"title": "Memory", "text": "${answer}"},
					map[string]any{"title": "Mood", "text": "be gentle with a ${mood} user"},
				},
			})
			state := userSays("hi")
			state["mood"] = "tired"
			up, rec, err := run(t, g, n, services(srv), state)
			if err != nil {
				t.Fatal(err)
			}
			texts := rec.of(event.Text)
			var got []string
			for _, ev := range texts {
				got = append(got, ev.Payload["content"].(string))
				if d, _ := ev.Payload["delta"].(bool); d != tt.delta {
					t.Errorf("event %v: delta = %v, want %v", ev.Payload, d, tt.delta)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("text events = %q, want %q", got, tt.want)
			}
			msg, _ := up["messages"].(map[string]any)
			if msg["role"] != "assistant" || msg["content"] != reply {
				t.Errorf("messages update = %v, want the assistant reply %q", up["messages"], reply)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Stream != tt.stream {
				t.Fatalf("requests = %+v, want one with stream=%v", reqs, tt.stream)
			}
			sys := reqs[0].Messages[0]
			if sys.Role != "system" || !strings.Contains(sys.Content, "The user feels tired.") ||
				!strings.Contains(sys.Content, "## Mood\nbe gentle with a tired user") || strings.Contains(sys.Content, "## Memory") {
				t.Errorf("system message = %q: want the rendered system, the Mood block and no empty Memory block", sys.Content)
			}
			if last := reqs[0].Messages[len(reqs[0].Messages)-1]; last.Role != "user" || last.Content != "hi" {
				t.Errorf("last message = %+v, want the user's", last)
			}
			usage := rec.of(node.UsageEvent)
			if len(usage) != 1 {
				t.Fatalf("usage events = %v, want one", usage)
			}
			p := usage[0].Payload
			if p["completion_tokens"] != 6 || p["prompt_tokens"].(int) <= 0 || p["total_tokens"] != p["prompt_tokens"].(int)+6 {
				t.Errorf("usage = %v, want 6 completion tokens and a consistent total", p)
			}
		})
	}
}

func TestHistoryAndImages(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Text("a cat")))
	g := testGraph(t)
	n := build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "history": 2, "stream": false})
	state := map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "first", "id": "m1"},
		map[string]any{"role": "assistant", "content": "second", "id": "m2"},
		map[string]any{"role": "user", "content": "what is this?", "id": "m3", "images": []any{"data:image/png;base64,iVBORw0KGgo="}},
	}}
	if _, _, err := run(t, g, n, services(srv), state); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages
	if len(msgs) != 2 || msgs[0].Content != "second" || msgs[1].Content != "what is this?" {
		t.Fatalf("messages sent = %+v, want the last 2 of the history", msgs)
	}
	if len(msgs[1].Images) != 1 || msgs[1].Images[0] != "data:image/png;base64,iVBORw0KGgo=" {
		t.Errorf("images = %v, want the data URL", msgs[1].Images)
	}
}

func TestJSONOutput(t *testing.T) {
	schema := map[string]any{
		"type": "object", "required": []any{"response"},
		"properties": map[string]any{
			"response":      map[string]any{"type": "string"},
			"memory_update": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		},
	}
	good := map[string]any{"response": "Noted, Paris it is.", "memory_update": []any{map[string]any{"key": "city", "value": "Paris"}}}
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		requests int
		wantErr  string
	}{
		{name: "valid", replies: []llmtest.Reply{llmtest.JSON(good)}, requests: 1},
		{name: "fenced", replies: []llmtest.Reply{llmtest.Text("```json\n" + llmtest.JSON(good).Content + "\n```")}, requests: 1},
		{name: "repaired once", replies: []llmtest.Reply{llmtest.Text("Sure! Paris."), llmtest.JSON(good)}, requests: 2},
		{name: "invalid twice", replies: []llmtest.Reply{llmtest.JSON(map[string]any{"memory_update": "x"}), llmtest.JSON(map[string]any{"answer": 1})},
			requests: 2, wantErr: `$: missing required property "response"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(tt.replies...))
			g := testGraph(t)
			n := build(t, g, map[string]any{
				"model":      "openai:gpt-4o-mini",
				"output":     map[string]any{"format": "json", "schema": schema, "fields": map[string]any{"memory_update": "memory_update", "answer": "response"}},
				"reply_from": "response",
			})
			up, rec, err := run(t, g, n, services(srv), userSays("I live in Paris"))
			if got := len(srv.Requests()); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
			if tt.wantErr != "" {
				if err == nil || node.CodeOf(err) != "invalid_output" || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want invalid_output containing %q", err, tt.wantErr)
				}
				if len(rec.of(event.Text)) != 0 {
					t.Errorf("text events on failure: %v", rec.of(event.Text))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if up["answer"] != "Noted, Paris it is." {
				t.Errorf("answer = %v", up["answer"])
			}
			mu, _ := up["memory_update"].([]any)
			if len(mu) != 1 || mu[0].(map[string]any)["value"] != "Paris" {
				t.Errorf("memory_update = %v", up["memory_update"])
			}
			// The response is shown once: streamed as deltas when the reply
			// was usable as it streamed, or as one event after a repair.
			texts := rec.of(event.Text)
			var shown strings.Builder
			deltas := 0
			for _, ev := range texts {
				shown.WriteString(ev.Payload["content"].(string))
				if ev.Payload["delta"] == true {
					deltas++
				}
			}
			if shown.String() != "Noted, Paris it is." || (deltas > 0 && deltas != len(texts)) {
				t.Errorf("text events = %v, want the response once", texts)
			}
			if wantDeltas := tt.requests == 1; (deltas > 1) != wantDeltas {
				t.Errorf("%d delta events; want streaming deltas: %v", deltas, wantDeltas)
			}
			if msg, _ := up["messages"].(map[string]any); msg["content"] != "Noted, Paris it is." {
				t.Errorf("messages update = %v", up["messages"])
			}
			reqs := srv.Requests()
			if !reqs[0].JSONMode || !strings.Contains(reqs[0].Messages[0].Content, "JSON Schema") {
				t.Errorf("first request: JSON mode %v, system %q: want JSON mode and the schema in the prompt", reqs[0].JSONMode, reqs[0].Messages[0].Content)
			}
			if tt.requests == 2 {
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if last.Role != "user" || !strings.Contains(last.Content, "could not be used") {
					t.Errorf("repair request ends with %+v, want the validation problem sent back", last)
				}
			}
		})
	}
}

func TestToolCallsBecomeContracts(t *testing.T) {
	for _, stream := range []bool{true, false} {
		name := map[bool]string{true: "streaming", false: "non-streaming"}[stream]
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Call("llmtest_weather", map[string]any{"city": "Paris"})))
			g := testGraph(t)
			n := build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "stream": stream,
				"tools": []any{"llmtest_weather"}, "contracts_field": "pending"})
			up, rec, err := run(t, g, n, services(srv), userSays("weather in Paris?"))
			if err != nil {
				t.Fatal(err)
			}
			list, _ := up["pending"].([]any)
			if len(list) != 1 {
				t.Fatalf("pending = %v, want one contract", up["pending"])
			}
			c := list[0].(map[string]any)
			args, _ := c["arguments"].(map[string]any)
			if c["status"] != "PENDING" || c["action_type"] != "tool_call" || c["tool_name"] != "llmtest_weather" ||
				args["city"] != "Paris" || c["id"] != "run1-reasoning-3-1" || c["created_at"] == "" {
				t.Errorf("contract = %v", c)
			}
			if texts := rec.of(event.Text); len(texts) != 0 {
				t.Errorf("tool call chunks leaked as text: %v", texts)
			}
			// The conversation gets the AI message with the call, as
			// LangChain writes it, and the contract keeps the call's id.
			msg, _ := up["messages"].(map[string]any)
			calls, _ := msg["tool_calls"].([]any)
			if msg["role"] != "assistant" || msg["content"] != "" || len(calls) != 1 {
				t.Fatalf("messages update = %v, want one AI message with one tool call", up["messages"])
			}
			call := calls[0].(map[string]any)
			if call["id"] != c["call_id"] || call["id"] == "" || call["name"] != "llmtest_weather" || call["type"] != "tool_call" ||
				call["args"].(map[string]any)["city"] != "Paris" {
				t.Errorf("tool call = %v, want {id: %v, name: llmtest_weather, args: {city: Paris}, type: tool_call}", call, c["call_id"])
			}
			if tools := srv.Requests()[0].Tools; len(tools) != 1 || tools[0] != "llmtest_weather" {
				t.Errorf("tools offered = %v", tools)
			}
		})
	}
}

// TestJSONOutputWithNativeToolCalls: a JSON-output node offered tools gets
// replies that call tools natively with no text or a preface that is not
// the JSON object, as models do; such a reply is the turn's tool calls, not
// an invalid output to repair (a repaired answer would be given before the
// tools ran).
func TestJSONOutputWithNativeToolCalls(t *testing.T) {
	call := llmtest.Fn("llmtest_weather", map[string]any{"city": "Paris"})
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"no text", llmtest.Calls(call)},
		{"a preface", llmtest.Reply{Content: "Let me check the weather.", ToolCalls: []llmtest.ToolCall{call}}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, stream %v", tt.name, stream), func(t *testing.T) {
				srv := llmtest.NewServer(t, llmtest.WithReplies(tt.reply, llmtest.JSON(map[string]any{"response": "not asked for"})))
				g := testGraph(t)
				n := build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "stream": stream,
					"output":     map[string]any{"format": "json", "schema": map[string]any{"type": "object", "required": []any{"response"}}},
					"reply_from": "response", "tools": []any{"llmtest_weather"}, "contracts_field": "pending"})
				up, rec, err := run(t, g, n, services(srv), userSays("weather in Paris?"))
				if err != nil {
					t.Fatal(err)
				}
				if got := len(srv.Requests()); got != 1 {
					t.Errorf("%d model requests, want 1 (no repair of a tool-calling reply)", got)
				}
				list, _ := up["pending"].([]any)
				if len(list) != 1 || list[0].(map[string]any)["tool_name"] != "llmtest_weather" {
					t.Fatalf("pending = %v, want the tool call's contract", up["pending"])
				}
				msg, _ := up["messages"].(map[string]any)
				if calls, _ := msg["tool_calls"].([]any); len(calls) != 1 || msg["content"] != "" {
					t.Errorf("messages update = %v, want one AI message with the call and no answer", up["messages"])
				}
				if texts := rec.of(event.Text); len(texts) != 0 {
					t.Errorf("text events %v, want none before the tool has run", texts)
				}
			})
		}
	}
}

func TestContractsInPrompt(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Text("It is sunny in Paris.")))
	g := testGraph(t)
	n := build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "tools": []any{"llmtest_weather"}, "contracts_field": "pending"})
	state := userSays("weather?")
	state["pending"] = []any{
		map[string]any{"id": "c1", "action_type": "tool_call", "tool_name": "llmtest_weather", "status": "COMPLETED", "result": "sunny"},
		map[string]any{"id": "c2", "action_type": "tool_call", "tool_name": "llmtest_weather", "status": "FAILED", "error_message": "city unknown"},
	}
	if _, _, err := run(t, g, n, services(srv), state); err != nil {
		t.Fatal(err)
	}
	sys := srv.Requests()[0].Messages[0].Content
	for _, want := range []string{"[COMPLETED] tool_call llmtest_weather", "result=sunny", "[FAILED] tool_call llmtest_weather", "error_message=city unknown"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
}

// TestExecutionsInPromptAreBounded: a long conversation's finished
// executions do not grow the prompt without end: the last ten are shown,
// with how many earlier ones are not, and unfinished ones always.
func TestExecutionsInPromptAreBounded(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Text("ok")))
	g := testGraph(t)
	n := build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "tools": []any{"llmtest_weather"}, "contracts_field": "pending"})
	state := userSays("weather?")
	var list []any
	list = append(list, map[string]any{"id": "waiting", "action_type": "ecs_request", "status": "WAITING"})
	for i := range 25 {
		list = append(list, map[string]any{"id": fmt.Sprint("done-", i), "action_type": "tool_call", "tool_name": "llmtest_weather", "status": "COMPLETED", "result": fmt.Sprint("r", i)})
	}
	state["pending"] = list
	if _, _, err := run(t, g, n, services(srv), state); err != nil {
		t.Fatal(err)
	}
	sys := srv.Requests()[0].Messages[0].Content
	if got := strings.Count(sys, "[COMPLETED]"); got != 10 {
		t.Errorf("%d finished executions shown, want the last 10:\n%s", got, sys)
	}
	for _, want := range []string{"(15 earlier finished executions not shown)", "[WAITING] ecs_request", "(id done-24)", "(id done-15)"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "(id done-14)") {
		t.Errorf("an older execution is shown:\n%s", sys)
	}
}

func TestModelErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		code      string
		retryable bool
	}{
		{"rate limited", http.StatusTooManyRequests, "rate_limit", true},
		{"server error", http.StatusInternalServerError, "llm_error", true},
		{"bad gateway", http.StatusBadGateway, "llm_error", true},
		{"no reply left", 0, "llm_error", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			if tt.status != 0 {
				srv.Fail(1, tt.status)
			}
			g := testGraph(t)
			n := build(t, g, map[string]any{"model": "openai:gpt-4o-mini"})
			_, _, err := runWith(t, g, n, services(srv), userSays("hi"), noCallRetry)
			var ne *node.Error
			if !errors.As(err, &ne) || ne.Code != tt.code || ne.Retryable != tt.retryable {
				t.Fatalf("error = %#v, want code %s retryable %v", err, tt.code, tt.retryable)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  map[string]any
		path string
		code string
	}{
		{"unknown tool", map[string]any{"tools": []any{"llmtest_wether"}, "contracts_field": "pending"}, "tools.0", "unknown-tool"},
		{"tools without contracts", map[string]any{"tools": []any{"llmtest_weather"}}, "contracts_field", "invalid-config"},
		{"contracts field of wrong type", map[string]any{"contracts_field": "mood"}, "contracts_field", "invalid-config"},
		{"reply_from with text", map[string]any{"reply_from": "response"}, "reply_from", "invalid-config"},
		{"unsupported schema keyword", map[string]any{"output": map[string]any{"format": "json", "schema": map[string]any{"type": "object", "oneOf": []any{}}}}, "output.schema", "invalid-config"},
		{"unknown output field", map[string]any{"output": map[string]any{"format": "json", "fields": map[string]any{"mod": "mood"}}}, "output.fields.mod", "unknown-field"},
		{"bad model spec", map[string]any{"model": "gpt-4o"}, "model", "invalid-config"},
		{"unknown provider", map[string]any{"model": "opnai:gpt-4o"}, "model", "invalid-config"},
		{"malformed mcp tool", map[string]any{"tools": []any{"mcp:files"}, "contracts_field": "pending"}, "tools.0", "invalid-config"},
		{"undeclared mcp server", map[string]any{"tools": []any{"mcp:files/read"}, "contracts_field": "pending"}, "tools.0", "unknown-tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(testGraph(t), "llm", "reasoning", tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n != nil || !b.Has(tt.path, tt.code) {
				t.Errorf("problems = %v, want %s at %q", b.Problems(), tt.code, tt.path)
			}
		})
	}
}

// TestToolMessagesInPrompt sends answered tool calls as native calls and
// results, and anything a provider would refuse (a call with no answer, an
// answer whose call the history limit cut off) as text; the local server
// refuses requests that break OpenAI's pairing rule.
func TestToolMessagesInPrompt(t *testing.T) {
	conversation := []any{
		map[string]any{"role": "user", "content": "weather in Paris and Rome?", "id": "m1"},
		map[string]any{"role": "assistant", "content": "", "id": "m2", "tool_calls": []any{
			map[string]any{"id": "c1", "name": "llmtest_weather", "args": map[string]any{"city": "Paris"}, "type": "tool_call"},
			map[string]any{"id": "c2", "name": "llmtest_weather", "args": map[string]any{"city": "Rome"}, "type": "tool_call"},
		}},
		map[string]any{"role": "tool", "content": "sunny", "tool_call_id": "c1", "name": "llmtest_weather", "id": "m3"},
		map[string]any{"role": "user", "content": "and?", "id": "m4"},
	}
	tests := []struct {
		name    string
		cfg     map[string]any
		want    []string // role:content, tool calls as role>name
		nothing string
	}{
		{name: "with tools", cfg: map[string]any{"tools": []any{"llmtest_weather"}, "contracts_field": "pending"},
			want: []string{"user:weather in Paris and Rome?", `assistant:[tool call llmtest_weather {"city":"Rome"}]`, "assistant>llmtest_weather", "tool:sunny", "user:and?"}},
		{name: "without tools", cfg: map[string]any{},
			want: []string{"user:weather in Paris and Rome?", `assistant:[tool call llmtest_weather {"city":"Paris"}][tool call llmtest_weather {"city":"Rome"}]`, "user:[tool result llmtest_weather] sunny", "user:and?"}},
		{name: "answer without its call", cfg: map[string]any{"history": 2, "tools": []any{"llmtest_weather"}, "contracts_field": "pending"},
			want: []string{"user:[tool result llmtest_weather] sunny", "user:and?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Text("ok")))
			g := testGraph(t)
			cfg := map[string]any{"model": "openai:gpt-4o-mini", "stream": false}
			for k, v := range tt.cfg {
				cfg[k] = v
			}
			n := build(t, g, cfg)
			if _, _, err := run(t, g, n, services(srv), map[string]any{"messages": conversation}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range srv.Requests()[0].Messages {
				if m.Content != "" || len(m.ToolCalls) == 0 {
					got = append(got, m.Role+":"+m.Content)
				}
				for _, tc := range m.ToolCalls {
					got = append(got, m.Role+">"+tc.Name)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("messages sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestParseSpecRefusesUnknownProviders names the provider a misspelt one
// is closest to, so a graph with one fails at validate rather than at its
// first model call.
func TestParseSpecRefusesUnknownProviders(t *testing.T) {
	tests := []struct {
		spec, provider, want string
	}{
		{spec: "openai:gpt-4o-mini", provider: "openai"},
		{spec: "HF:meta-llama/Llama-3.1-8B-Instruct", provider: "hf"},
		{spec: "script:replies.json", provider: "script"},
		{spec: "opnai:gpt-4o", want: `unknown provider "opnai"; did you mean "openai"?`},
		{spec: "gemini:gemini-2.0-flash", want: `unknown provider "gemini"`},
		{spec: "gpt-4o", want: "want provider:model"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			provider, _, err := llm.ParseSpec(tt.spec)
			if tt.want == "" {
				if err != nil || provider != tt.provider {
					t.Fatalf("ParseSpec(%q) = %q, %v; want %q", tt.spec, provider, err, tt.provider)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseSpec(%q) error = %v; want one saying %s", tt.spec, err, tt.want)
			}
		})
	}
}
