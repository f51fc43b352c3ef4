package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolGraph is a graph whose mcp_tool node runs the contracts given as input,
// then a set node proves the graph went on.
const toolGraph = `dsl_version: "graphctl/v1"
name: "tools"
defaults: mcp_servers: %s
state: {
	contracts: {type: "contracts"}
	observation: {type: "string"}
	after: {type: "string"}
}
start: "tools"
nodes: {
	tools: {type: "mcp_tool", config: {server: "test", observation_field: "observation"}, next: "after"}
	after: {type: "set", config: set: after: "'ran'", next: "END"}
}
`

func compileTools(t *testing.T, servers map[string]any) *compile.Graph {
	t.Helper()
	raw, err := json.Marshal(servers)
	if err != nil {
		t.Fatal(err)
	}
	g, diags := runtime.LoadSource("tools.cue", fmt.Appendf(nil, toolGraph, raw))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	return g
}

type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) sink(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) ofType(typ string) []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func contract(id, action, status, tool string, args map[string]any) map[string]any {
	c := map[string]any{"id": id, "action_type": action, "status": status, "tool_name": tool}
	if args != nil {
		c["arguments"] = args
	}
	return c
}

func byID(t *testing.T, state map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	items, _ := state["contracts"].([]any)
	for _, item := range items {
		c := item.(map[string]any)
		out[c["id"].(string)] = c
	}
	return out
}

func TestToolNodeEndToEnd(t *testing.T) {
	for name, servers := range map[string]map[string]any{
		"http":  {"test": mcptest.HTTPServer(mcptest.StartHTTP(t))},
		"stdio": {"test": mcptest.StdioServer(), "other": mcptest.HTTPServer(mcptest.StartHTTP(t))},
	} {
		t.Run(name, func(t *testing.T) {
			eng := engine.New(compileTools(t, servers), memory.New(), engine.Options{})
			defer eng.Close()
			if err := eng.Preflight(context.Background()); err != nil {
				t.Fatalf("preflight: %v", err)
			}
			input := map[string]any{"contracts": []any{
				contract("w", "tool_call", "PENDING", "test/get_weather", map[string]any{"city": "Kyoto"}),
				contract("f", "tool_call", "PENDING", "fail", map[string]any{"message": "quota exceeded"}),
				contract("a", "tool_call", "PENDING", "add", map[string]any{"a": 1, "b": 2}),
				contract("x", "tool_call", "PENDING", "nosuch/echo", nil),
				contract("h", "ecs_request", "PENDING", "", nil),
				contract("done", "tool_call", "COMPLETED", "test/echo", nil),
			}}
			rec := &recorder{}
			res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: input}, rec.sink)
			if err != nil || res.Status != engine.StatusCompleted {
				t.Fatalf("run: %v %v", res.Status, err)
			}
			if res.State["after"] != "ran" {
				t.Errorf("the graph did not go on after the tool node: %v", res.State["after"])
			}
			cs := byID(t, res.State)
			w := mcptest.ForecastFor("Kyoto")
			if c := cs["w"]; c["status"] != "COMPLETED" {
				t.Errorf("w: %v", c)
			} else {
				result := c["result"].(map[string]any)
				structured, _ := result["structured"].(map[string]any)
				if !strings.HasPrefix(result["text"].(string), "Kyoto: ") || structured["conditions"] != w.Conditions {
					t.Errorf("w result: %v", result)
				}
			}
			if c := cs["f"]; c["status"] != "FAILED" || c["error_message"] != "quota exceeded" || c["result"] != nil {
				t.Errorf("f: %v", c)
			}
			if c := cs["a"]; c["status"] != "COMPLETED" || c["result"].(map[string]any)["text"] != "3" {
				t.Errorf("a: %v", c)
			}
			if c := cs["x"]; c["status"] != "FAILED" || !strings.Contains(fmt.Sprint(c["error_message"]), `call tool "nosuch/echo"`) {
				t.Errorf("x: %v", c)
			}
			if c := cs["h"]; c["status"] != "PENDING" {
				t.Errorf("ecs_request contract was touched: %v", c)
			}
			if c := cs["done"]; c["result"] != nil {
				t.Errorf("completed contract was run again: %v", c)
			}
			obs, _ := res.State["observation"].(string)
			for _, want := range []string{"[test/get_weather] Kyoto: ", "[test/fail] FAILED: quota exceeded", "[test/add] 3"} {
				if !strings.Contains(obs, want) {
					t.Errorf("observation lacks %q:\n%s", want, obs)
				}
			}
			events := rec.ofType(mcp.EventType)
			var ids []string
			for _, e := range events {
				p := e.Payload
				ids = append(ids, p["contract_id"].(string))
				if cs[p["contract_id"].(string)]["status"] != p["status"] {
					t.Errorf("event %v disagrees with the contract %v", p, cs[p["contract_id"].(string)])
				}
				_, hasResult := p["result"]
				_, hasError := p["error_message"]
				if hasResult == hasError {
					t.Errorf("event needs exactly one of result and error_message: %v", p)
				}
			}
			slices.Sort(ids)
			if !slices.Equal(ids, []string{"a", "f", "w", "x"}) {
				t.Errorf("tool_result events for %v", ids)
			}
		})
	}
}

func TestToolNodeRunsContractsConcurrently(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eng := engine.New(compileTools(t, map[string]any{"test": mcptest.HTTPServer(mcptest.StartHTTP(t))}), memory.New(), engine.Options{})
	defer eng.Close()
	var contracts []any
	for i := range 3 {
		contracts = append(contracts, contract(fmt.Sprint("b", i), "tool_call", "PENDING", "barrier", map[string]any{"n": 3}))
	}
	res, err := eng.Run(ctx, engine.Request{ThreadID: "t", Input: map[string]any{"contracts": contracts}}, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for id, c := range byID(t, res.State) {
		if c["status"] != "COMPLETED" {
			t.Errorf("%s: %v (calls did not run together)", id, c)
		}
	}
}

func TestToolNodeTransportFailureFailsContracts(t *testing.T) {
	srv := mcptest.StartHTTPServer(t)
	eng := engine.New(compileTools(t, map[string]any{"test": mcptest.HTTPServer(srv.URL)}), memory.New(), engine.Options{})
	defer eng.Close()
	srv.Close()
	if err := eng.Preflight(context.Background()); err == nil || !strings.Contains(err.Error(), `mcp_tool node "tools"`) {
		t.Fatalf("preflight with the server down: %v", err)
	}
	input := map[string]any{"contracts": []any{contract("e", "tool_call", "PENDING", "echo", map[string]any{"text": "hi"})}}
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: input}, nil)
	if err != nil {
		t.Fatalf("a transport failure must not fail the run: %v", err)
	}
	c := byID(t, res.State)["e"]
	if c["status"] != "FAILED" || !strings.Contains(fmt.Sprint(c["error_message"]), "connect to "+srv.URL) {
		t.Errorf("contract: %v", c)
	}
	if res.State["after"] != "ran" {
		t.Errorf("the graph did not go on")
	}
}

func TestToolNodeValidation(t *testing.T) {
	servers := `{test: {url: "http://127.0.0.1:1/mcp"}}`
	tests := []struct {
		name     string
		defaults string
		state    string
		config   string
		want     string
	}{
		{"undeclared server", servers, `contracts: {type: "contracts"}`, `{server: "tset"}`, `MCP server "tset" is not declared`},
		{"no servers", `{}`, `contracts: {type: "contracts"}`, `{}`, "declares none in defaults.mcp_servers"},
		{"bad server", `{test: {command: []}}`, `contracts: {type: "contracts"}`, `{}`, "command must be a non-empty list"},
		{"both transports", `{test: {command: ["x"], url: "http://127.0.0.1:1"}}`, `contracts: {type: "contracts"}`, `{}`, "sets both command and url"},
		{"undeclared contracts field", servers, `other: {type: "contracts"}`, `{}`, `writes "contracts", which is not a declared state field`},
		{"contracts field of wrong type", servers, `contracts: {type: "list<string>"}`, `{}`, "not contracts"},
		{"observation of wrong type", servers, `contracts: {type: "contracts"}
	obs: {type: "int"}`, `{observation_field: "obs"}`, "declare it as string"},
		{"unknown config key", servers, `contracts: {type: "contracts"}`, `{bogus: "x"}`, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "v"
defaults: mcp_servers: %s
state: {
	%s
}
start: "tools"
nodes: tools: {type: "mcp_tool", config: %s, next: "END"}
`, tt.defaults, tt.state, tt.config)
			_, diags := runtime.LoadSource("v.cue", []byte(src))
			if !diags.HasErrors() || !strings.Contains(fmt.Sprint(diags), tt.want) {
				t.Fatalf("want an error containing %q, got:\n%v", tt.want, diags)
			}
		})
	}
}

// TestToolNodeCallTimeout: a tool that does not answer within call_timeout
// ends its contract FAILED, saying so, and the graph goes on; a call within
// the timeout completes.
func TestToolNodeCallTimeout(t *testing.T) {
	src := strings.Replace(toolGraph, `server: "test", observation_field`, `server: "test", call_timeout: "200ms", observation_field`, 1)
	// The test tools and "hang", which answers only when the test ends.
	server := mcptest.NewServer()
	release := make(chan struct{})
	sdk.AddTool(server, &sdk.Tool{Name: "hang", Description: "Answers when the test ends."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "too late"}}}, nil, nil
		})
	web := mcptest.ServeHTTP(t, server)
	answer := sync.OnceFunc(func() { close(release) })
	t.Cleanup(answer) // before the server closes
	raw, _ := json.Marshal(map[string]any{"test": mcptest.HTTPServer(web.URL)})
	g, diags := runtime.LoadSource("tools.cue", fmt.Appendf(nil, src, raw))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	eng := engine.New(g, memory.New(), engine.Options{})
	defer eng.Close()
	defer answer() // before the client closes
	input := map[string]any{"contracts": []any{
		contract("hang", "tool_call", "PENDING", "hang", nil),
		contract("quick", "tool_call", "PENDING", "echo", map[string]any{"text": "hi"}),
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := eng.Run(ctx, engine.Request{ThreadID: "t", Input: input}, nil)
	if err != nil {
		t.Fatalf("a tool past its call timeout must not fail the run: %v", err)
	}
	got := byID(t, res.State)
	if c := got["hang"]; c["status"] != "FAILED" || !strings.Contains(fmt.Sprint(c["error_message"]), `tool "hang" on MCP server "test" did not answer within 200ms`) {
		t.Errorf("hanging call: %v", c)
	}
	if c := got["quick"]; c["status"] != "COMPLETED" {
		t.Errorf("quick call: %v", c)
	}
	if obs, _ := res.State["observation"].(string); !strings.Contains(obs, "did not answer within 200ms") || res.State["after"] != "ran" {
		t.Errorf("observation %q, after %v: want the timeout in the observation and the graph gone on", obs, res.State["after"])
	}
}

// TestToolNodeCallTimeoutConfig: call_timeout must be a positive duration.
func TestToolNodeCallTimeoutConfig(t *testing.T) {
	for _, bad := range []string{"soon", "0s", "-1s"} {
		src := strings.Replace(toolGraph, `server: "test", observation_field`, `server: "test", call_timeout: "`+bad+`", observation_field`, 1)
		raw, _ := json.Marshal(map[string]any{"test": mcptest.HTTPServer("http://127.0.0.1:1/mcp")})
		_, diags := runtime.LoadSource("tools.cue", fmt.Appendf(nil, src, raw))
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "call_timeout") {
			t.Errorf("call_timeout %q: diagnostics %v, want an error naming call_timeout", bad, diags)
		}
	}
}
