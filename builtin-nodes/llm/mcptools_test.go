package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

func TestMain(m *testing.M) {
	mcptest.Main() // serves MCP on stdio when started as a test server
	os.Exit(m.Run())
}

// agentGraph is a tool-using agent: the model may call the tools of every
// declared MCP server; the mcp_tool node runs the calls and hands back.
const agentGraph = `dsl_version: "graphctl/v1"
name: "agent"
defaults: mcp_servers: %s
state: {
	messages: {type: "messages"}
	contracts: {type: "contracts"}
}
start: "agent"
nodes: {
	agent: {
		type: "llm"
		config: {model: "openai:gpt-4o-mini", tools: %s, contracts_field: "contracts"%s}
		routes: [{when: "any(contracts, {.action_type == 'tool_call' && .status == 'PENDING'})", to: "tools"}]
		default: "END"
	}
	tools: {type: "mcp_tool", next: "agent"}
}
`

func compileAgent(t *testing.T, servers map[string]any, tools []string, extra string) *compile.Graph {
	t.Helper()
	rawServers, _ := json.Marshal(servers)
	rawTools, _ := json.Marshal(tools)
	g, diags := runtime.LoadSource("agent.cue", fmt.Appendf(nil, agentGraph, rawServers, rawTools, extra))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	return g
}

// twoServers declares two real MCP servers offering the same tool names:
// "weather" over streamable HTTP and "calc" over stdio.
func twoServers(t *testing.T) map[string]any {
	return map[string]any{
		"weather": mcptest.HTTPServer(mcptest.StartNamedHTTPServer(t, "weather-server").URL),
		"calc":    mcptest.NamedStdioServer("calc-server"),
	}
}

// TestTwoMCPServersAsLangGraphShowsThem runs an agent over two MCP servers
// whose tools share names. The model sees each tool as server__tool, its
// calls reach the server they name, and the conversation holds the calls
// as LangGraph does: an AI message with tool_calls, then one tool message
// per call with its tool_call_id; the next model call gets them as native
// tool calls and results.
func TestTwoMCPServersAsLangGraphShowsThem(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "streaming", false: "non-streaming"}[stream], func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(
				llmtest.Calls(
					llmtest.Fn("weather__whoami", nil),
					llmtest.Fn("calc__whoami", nil),
					llmtest.Fn("calc__add", map[string]any{"a": 2, "b": 40}),
				),
				llmtest.Text("Both servers answered; 2 + 40 = 42."),
			))
			g := compileAgent(t, twoServers(t), []string{"mcp:weather/*", "mcp:calc/*"}, fmt.Sprintf(", stream: %v", stream))
			eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, envModels(srv))})
			defer eng.Close()
			ctx := context.Background()
			if err := eng.Preflight(ctx); err != nil {
				t.Fatalf("preflight: %v", err)
			}
			input, err := engine.TextInput(g, "who are you, and what is 2 + 40?")
			if err != nil {
				t.Fatal(err)
			}
			rec := &events{}
			res, err := eng.Run(ctx, engine.Request{ThreadID: "t1", Input: input}, rec.sink)
			if err != nil || res.Status != engine.StatusCompleted {
				t.Fatalf("run: %v, status %v, err %v", err, res.Status, res.Err)
			}

			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("model calls = %d, want 2", len(reqs))
			}
			var want []string
			for _, server := range []string{"calc", "weather"} {
				for _, tool := range mcptest.ToolNames {
					want = append(want, server+"__"+tool)
				}
			}
			offered := slices.Sorted(slices.Values(reqs[0].Tools))
			if !slices.Equal(offered, want) {
				t.Errorf("tools offered = %v, want %v", offered, want)
			}

			msgs, _ := res.State["messages"].([]any)
			if len(msgs) != 6 {
				t.Fatalf("messages = %d, want user, AI with tool calls, 3 tool messages, AI reply:\n%v", len(msgs), msgs)
			}
			ai := msgs[1].(map[string]any)
			calls, _ := ai["tool_calls"].([]any)
			if ai["role"] != "assistant" || len(calls) != 3 {
				t.Fatalf("message 1 = %v, want the AI message with 3 tool calls", ai)
			}
			wantAnswers := []string{"weather-server", "calc-server", "42"}
			wantNames := []string{"weather__whoami", "calc__whoami", "calc__add"}
			for i, c := range calls {
				call := c.(map[string]any)
				tm := msgs[2+i].(map[string]any)
				if call["name"] != wantNames[i] || call["type"] != "tool_call" || call["id"] == "" {
					t.Errorf("tool call %d = %v, want name %s and type tool_call", i, call, wantNames[i])
				}
				if tm["role"] != "tool" || tm["tool_call_id"] != call["id"] || tm["name"] != wantNames[i] ||
					tm["content"] != wantAnswers[i] || tm["status"] != "success" {
					t.Errorf("tool message %d = %v, want the answer %q to call %v", i, tm, wantAnswers[i], call["id"])
				}
			}
			if last := msgs[5].(map[string]any); last["role"] != "assistant" || last["content"] != "Both servers answered; 2 + 40 = 42." {
				t.Errorf("last message = %v", last)
			}

			contracts, _ := res.State["contracts"].([]any)
			servers := map[string]int{}
			for _, item := range contracts {
				c := item.(map[string]any)
				if c["status"] != "COMPLETED" {
					t.Errorf("contract %v did not complete", c)
				}
				servers[fmt.Sprint(c["server"], "/", c["tool_name"])]++
			}
			if len(servers) != 3 || servers["weather/whoami"] != 1 || servers["calc/whoami"] != 1 || servers["calc/add"] != 1 {
				t.Errorf("contracts by server/tool = %v", servers)
			}
			for _, ev := range rec.of("tool_result") {
				if ev.Payload["tool_call_id"] == nil || ev.Payload["status"] != "COMPLETED" {
					t.Errorf("tool_result event %v: want its tool_call_id and COMPLETED", ev.Payload)
				}
			}

			// The second model call sees the calls and their results natively.
			second := reqs[1].Messages
			var sawCalls []string
			var results []string
			for _, m := range second {
				for _, tc := range m.ToolCalls {
					sawCalls = append(sawCalls, tc.Name)
				}
				if m.Role == "tool" {
					results = append(results, m.Content)
				}
			}
			if !slices.Equal(sawCalls, wantNames) || !slices.Equal(results, wantAnswers) {
				t.Errorf("second request: tool calls %v and results %v, want %v and %v", sawCalls, results, wantNames, wantAnswers)
			}
		})
	}
}

// TestMCPToolNames covers the naming formats: a custom format is used as
// given, bare names clash between two servers offering the same tool, and a
// format without {tool} is refused where it is written.
func TestMCPToolNames(t *testing.T) {
	t.Run("custom format", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Call("calc-whoami", nil), llmtest.Text("ok")))
		g := compileAgent(t, twoServers(t), []string{"mcp:weather/get_weather", "mcp:calc/whoami"}, `, mcp_tool_names: "{server}-{tool}"`)
		eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, envModels(srv))})
		defer eng.Close()
		input, _ := engine.TextInput(g, "who?")
		res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: input}, event.Discard)
		if err != nil || res.Status != engine.StatusCompleted {
			t.Fatalf("run: %v %v %v", err, res.Status, res.Err)
		}
		if tools := srv.Requests()[0].Tools; !slices.Equal(tools, []string{"weather-get_weather", "calc-whoami"}) {
			t.Errorf("tools offered = %v", tools)
		}
		msgs := res.State["messages"].([]any)
		if tm := msgs[2].(map[string]any); tm["content"] != "calc-server" {
			t.Errorf("tool message = %v, want calc-server's answer", tm)
		}
	})
	t.Run("bare names clash", func(t *testing.T) {
		g := compileAgent(t, twoServers(t), []string{"mcp:weather/*", "mcp:calc/*"}, `, mcp_tool_names: "{tool}"`)
		eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, envModels(llmtest.NewServer(t)))})
		defer eng.Close()
		err := eng.Preflight(context.Background())
		if err == nil || !strings.Contains(err.Error(), "offered twice") || !strings.Contains(err.Error(), "mcp_tool_names") {
			t.Errorf("preflight = %v, want the clash named with the way out", err)
		}
	})
	t.Run("format without tool", func(t *testing.T) {
		src := fmt.Sprintf(agentGraph, `{calc: {builtin: true}}`, `["mcp:calc/*"]`, `, mcp_tool_names: "{server}"`)
		_, diags := runtime.LoadSource("agent.cue", []byte(src))
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "agent.cue:") || !strings.Contains(diags.Error(), "must contain {tool}") {
			t.Errorf("diagnostics = %v, want the format refused at its position", diags)
		}
	})
}
