package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
	"github.com/graphctl/graphctl/server/sse"
)

// agentGraphSrc is an agent whose model may call the tools of two MCP servers.
const agentGraphSrc = `dsl_version: "graphctl/v1"
name: "agent"
defaults: {llm: "openai:gpt-4o-mini", mcp_servers: %s}
state: {
	messages: {type: "messages"}
	contracts: {type: "contracts"}
}
start: "agent"
nodes: {
	agent: {
		type: "llm"
		config: {tools: ["mcp:weather/*", "mcp:calc/*"], contracts_field: "contracts"}
		routes: [{when: "any(contracts, {.action_type == 'tool_call' && .status == 'PENDING'})", to: "tools"}]
		default: "END"
	}
	tools: {type: "mcp_tool", next: "agent"}
}
`

// The agent model's replies in one run: one tool call to each server, then
// the answer.
var (
	agentCalls  = llmtest.Calls(llmtest.Fn("weather__whoami", nil), llmtest.Fn("calc__add", map[string]any{"a": 2, "b": 40}))
	agentAnswer = llmtest.Text("The weather server answered; 2 + 40 = 42.")
)

// agentFixture serves the agent graph over two real MCP servers (streamable
// HTTP) and a local OpenAI-compatible model that calls one tool of each.
func agentFixture(t *testing.T) *fixture {
	return agentFixtureWith(t, agentCalls, agentAnswer)
}

// agentFixtureWith is agentFixture whose model gives these replies in turn.
func agentFixtureWith(t *testing.T, replies ...llmtest.Reply) *fixture {
	t.Helper()
	srv := llmtest.NewServer(t, llmtest.WithReplies(replies...))
	t.Setenv("OPENAI_BASE_URL", srv.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	servers, _ := json.Marshal(map[string]any{
		"weather": mcptest.HTTPServer(mcptest.StartNamedHTTPServer(t, "weather-server").URL),
		"calc":    mcptest.HTTPServer(mcptest.StartNamedHTTPServer(t, "calc-server").URL),
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.cue"), fmt.Appendf(nil, agentGraphSrc, servers), 0o644); err != nil {
		t.Fatal(err)
	}
	return newGraphFixture(t, dir, nil)
}

// askAgent streams one question to the agent on a new thread in mode and
// returns the thread's id and the frames.
func askAgent(t *testing.T, f *fixture, mode string) (string, []sse.Frame) {
	t.Helper()
	_, thread := f.do("POST", "/threads", map[string]any{})
	id := field(thread, "thread_id").(string)
	code, frames := f.stream("/threads/"+id+"/runs/stream", map[string]any{
		"assistant_id": "agent", "stream_mode": []any{mode},
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "who answers, and what is 2 + 40?"}}},
	})
	if code != 200 {
		t.Fatalf("stream: %d", code)
	}
	return id, frames
}

// TestMCPToolCallsInTheStream: over the Agent Server API, the values stream
// and the thread state carry the agent's tool calls as LangChain messages:
// an "ai" message with tool_calls {id, name, args, type: "tool_call"}, then
// "tool" messages with the tool_call_id they answer.
func TestMCPToolCallsInTheStream(t *testing.T) {
	f := agentFixture(t)
	id, frames := askAgent(t, f, "values")
	var last map[string]any
	for _, fr := range frames {
		if fr.Event == "values" {
			last = nil
			if err := json.Unmarshal([]byte(fr.Data), &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(where string, values any) {
		msgs, _ := field(values, "messages").([]any)
		var types []string
		for _, m := range msgs {
			types = append(types, fmt.Sprint(field(m, "type")))
		}
		if fmt.Sprint(types) != "[human ai tool tool ai]" {
			t.Fatalf("%s: message types %v, want [human ai tool tool ai]", where, types)
		}
		calls, _ := field(msgs[1], "tool_calls").([]any)
		if len(calls) != 2 || field(calls[0], "name") != "weather__whoami" || field(calls[1], "name") != "calc__add" || field(calls[1], "type") != "tool_call" {
			t.Errorf("%s: tool calls %v", where, calls)
		}
		for i, want := range []string{"weather-server", "42"} {
			tm := msgs[2+i]
			if field(tm, "tool_call_id") != field(calls[i], "id") || field(tm, "content") != want {
				t.Errorf("%s: tool message %d = %v, want %q answering %v", where, i, tm, want, field(calls[i], "id"))
			}
		}
	}
	check("values stream", last)
	_, state := f.do("GET", "/threads/"+id+"/state", nil)
	check("thread state", field(state, "values"))
}

// TestMCPToolCallsWithTheJSClient checks the same with the official
// @langchain/langgraph-sdk client (.ci/langgraph-sdk/mcp-tools.mjs).
func TestMCPToolCallsWithTheJSClient(t *testing.T) {
	sdk := requireJSClient(t)
	// Two runs: values and updates, then messages-tuple.
	f := agentFixtureWith(t, agentCalls, agentAnswer, agentCalls, agentAnswer)
	sdk.run(t, "mcp-tools.mjs", f.http.URL)
}

// TestToolCallsInMessagesTuple: the messages-tuple stream shows tool calls as
// LangGraph does, so useStream and agent-chat-ui render them while a run
// streams: the AI message that calls tools ends with an AIMessageChunk of
// the state's message id carrying tool_call_chunks (arguments as JSON text)
// and tool_calls, after its streamed text if any; each tool message follows
// whole with the tool_call_id it answers.
func TestToolCallsInMessagesTuple(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first llmtest.Reply
	}{
		{"calls only", agentCalls},
		{"text then calls", llmtest.Reply{Content: "Let me check both.", ToolCalls: agentCalls.ToolCalls}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := agentFixtureWith(t, tc.first, agentAnswer)
			id, frames := askAgent(t, f, "messages-tuple")
			_, state := f.do("GET", "/threads/"+id+"/state", nil)
			msgs, _ := field(field(state, "values"), "messages").([]any)
			if len(msgs) != 5 {
				t.Fatalf("state messages: %v", msgs)
			}
			aiID := field(msgs[1], "id")
			calls, _ := field(msgs[1], "tool_calls").([]any)
			var text string
			var chunks, toolCalls []any
			var tools []map[string]any
			for _, fr := range frames {
				if fr.Event != "messages" {
					continue
				}
				var tuple []map[string]any
				if err := json.Unmarshal([]byte(fr.Data), &tuple); err != nil || len(tuple) != 2 {
					t.Fatalf("messages frame %s: %v", fr.Data, err)
				}
				m := tuple[0]
				switch {
				case m["type"] == "tool":
					tools = append(tools, m)
				case m["id"] == aiID:
					if m["type"] != "AIMessageChunk" {
						t.Errorf("chunk of the tool-calling message has type %v", m["type"])
					}
					text += fmt.Sprint(m["content"])
					if c, _ := m["tool_call_chunks"].([]any); len(c) > 0 {
						chunks, toolCalls = c, m["tool_calls"].([]any)
						if tuple[1]["langgraph_node"] != "agent" {
							t.Errorf("tool call chunk metadata %v", tuple[1])
						}
					}
				}
			}
			if text != fmt.Sprint(field(msgs[1], "content")) {
				t.Errorf("streamed text %q, state has %q", text, field(msgs[1], "content"))
			}
			if len(chunks) != 2 || len(toolCalls) != 2 {
				t.Fatalf("tool_call_chunks %v, tool_calls %v; want 2 of each", chunks, toolCalls)
			}
			for i, want := range []struct{ name, args string }{{"weather__whoami", "{}"}, {"calc__add", `{"a":2,"b":40}`}} {
				c := chunks[i]
				if field(c, "type") != "tool_call_chunk" || field(c, "name") != want.name || field(c, "args") != want.args ||
					field(c, "id") != field(calls[i], "id") || field(c, "index") != float64(i) {
					t.Errorf("tool_call_chunks[%d] = %v, want %s(%s) with id %v", i, c, want.name, want.args, field(calls[i], "id"))
				}
				if field(toolCalls[i], "id") != field(calls[i], "id") || field(toolCalls[i], "type") != "tool_call" {
					t.Errorf("tool_calls[%d] = %v, state has %v", i, toolCalls[i], calls[i])
				}
			}
			if len(tools) != 2 {
				t.Fatalf("tool messages streamed: %v", tools)
			}
			for i, tm := range tools {
				if tm["tool_call_id"] != field(calls[i], "id") || tm["id"] != field(msgs[2+i], "id") {
					t.Errorf("tool message %d = %v, want the answer to %v with the state's id %v", i, tm, field(calls[i], "id"), field(msgs[2+i], "id"))
				}
			}
		})
	}
}
