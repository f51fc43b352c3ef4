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
