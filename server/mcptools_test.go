package server

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
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

// agentFixture serves the agent graph over two real MCP servers (streamable
// HTTP) and a local OpenAI-compatible model that calls one tool of each.
func agentFixture(t *testing.T) *fixture {
	t.Helper()
	srv := llmtest.NewServer(t, llmtest.WithReplies(
		llmtest.Calls(llmtest.Fn("weather__whoami", nil), llmtest.Fn("calc__add", map[string]any{"a": 2, "b": 40})),
		llmtest.Text("The weather server answered; 2 + 40 = 42."),
	))
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

// TestMCPToolCallsInTheStream: over the Agent Server API, the values stream
// and the thread state carry the agent's tool calls as LangChain messages:
// an "ai" message with tool_calls {id, name, args, type: "tool_call"}, then
// "tool" messages with the tool_call_id they answer.
func TestMCPToolCallsInTheStream(t *testing.T) {
	f := agentFixture(t)
	_, thread := f.do("POST", "/threads", map[string]any{})
	id := field(thread, "thread_id").(string)
	code, frames := f.stream("/threads/"+id+"/runs/stream", map[string]any{
		"assistant_id": "agent", "stream_mode": []any{"values"},
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "who answers, and what is 2 + 40?"}}},
	})
	if code != 200 {
		t.Fatalf("stream: %d", code)
	}
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
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	sdkDir, _ := filepath.Abs("../.ci/langgraph-sdk")
	if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", "@langchain", "langgraph-sdk")); err != nil {
		t.Skip("the SDK is not installed: npm install --prefix .ci/langgraph-sdk")
	}
	f := agentFixture(t)
	cmd := exec.Command(node, "mcp-tools.mjs", f.http.URL)
	cmd.Dir = sdkDir
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node mcp-tools.mjs: %v", err)
	}
}
