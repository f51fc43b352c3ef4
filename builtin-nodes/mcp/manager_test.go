package mcp_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func TestMain(m *testing.M) {
	mcptest.Main()
	os.Exit(m.Run())
}

func graphWith(servers map[string]any) *graph.Graph {
	return &graph.Graph{Name: "t", Defaults: graph.Defaults{Raw: map[string]any{"mcp_servers": servers}}}
}

func services(t *testing.T) *node.Services {
	t.Helper()
	m := mcp.NewManager()
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &node.Services{Extra: mcp.ServiceName.Bind(node.Extra{}, m)}
}

// transports returns a graph declaring the test server over each transport.
func transports(t *testing.T) map[string]*graph.Graph {
	return map[string]*graph.Graph{
		"http":  graphWith(map[string]any{"test": mcptest.HTTPServer(mcptest.StartHTTP(t) + "/")}),
		"stdio": graphWith(map[string]any{"test": mcptest.StdioServer()}),
	}
}

func TestToolsAndCallOverBothTransports(t *testing.T) {
	for name, g := range transports(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := services(t)
			tools, err := mcp.Tools(ctx, s, g, "test")
			if err != nil {
				t.Fatalf("tools: %v", err)
			}
			var names []string
			for _, ti := range tools {
				names = append(names, ti.Name)
				if ti.Server != "test" {
					t.Errorf("tool %s: server %q", ti.Name, ti.Server)
				}
				if ti.Name == "add" {
					props, _ := ti.InputSchema["properties"].(map[string]any)
					if _, ok := props["a"]; !ok || props["b"] == nil {
						t.Errorf("add schema lacks a and b: %v", ti.InputSchema)
					}
					if ti.Description != "Adds two numbers." {
						t.Errorf("add description %q", ti.Description)
					}
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, mcptest.ToolNames) {
				t.Errorf("tools %v, want %v", names, mcptest.ToolNames)
			}

			w := mcptest.ForecastFor("Kyoto")
			tests := []struct {
				tool       string
				args       map[string]any
				text       string
				structured map[string]any
				isError    bool
			}{
				{"echo", map[string]any{"text": "héllo"}, "héllo", nil, false},
				{"add", map[string]any{"a": 2, "b": 3.5}, "5.5", map[string]any{"sum": 5.5}, false},
				{"get_weather", map[string]any{"city": "Kyoto"}, "Kyoto: ",
					map[string]any{"city": "Kyoto", "temperature_c": float64(w.TemperatureC), "conditions": w.Conditions}, false},
				{"fail", map[string]any{"message": "disk on fire"}, "disk on fire", nil, true},
				{"get_weather", map[string]any{"city": ""}, "city is required", nil, true},
			}
			for _, tt := range tests {
				res, err := mcp.Call(ctx, s, g, "test", tt.tool, tt.args)
				if err != nil {
					t.Errorf("%s: %v", tt.tool, err)
					continue
				}
				if res.IsError != tt.isError {
					t.Errorf("%s: IsError %v, want %v (%q)", tt.tool, res.IsError, tt.isError, res.Text)
				}
				if !strings.HasPrefix(res.Text, tt.text) {
					t.Errorf("%s: text %q, want prefix %q", tt.tool, res.Text, tt.text)
				}
				if tt.structured != nil {
					got, _ := res.Structured.(map[string]any)
					for k, v := range tt.structured {
						if got[k] != v {
							t.Errorf("%s: structured[%s] = %v, want %v (all: %v)", tt.tool, k, got[k], v, res.Structured)
						}
					}
				}
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	ctx := context.Background()
	url := mcptest.StartHTTP(t)
	tests := []struct {
		name    string
		servers map[string]any
		server  string
		tool    string
		want    string
	}{
		{"undeclared server", map[string]any{"test": mcptest.HTTPServer(url)}, "other", "echo", `MCP server "other" is not declared`},
		{"unknown tool", map[string]any{"test": mcptest.HTTPServer(url)}, "test", "nope", `call tool "nope"`},
		{"no such command", map[string]any{"test": map[string]any{"command": []any{"/nonexistent/graphctl-mcp"}}}, "test", "echo", "connect to command /nonexistent/graphctl-mcp"},
		{"nothing listening", map[string]any{"test": mcptest.HTTPServer("http://127.0.0.1:1/mcp")}, "test", "echo", "connect to http://127.0.0.1:1/mcp"},
		{"unset env", map[string]any{"test": map[string]any{"command": []any{"true"}, "env": map[string]any{"K": map[string]any{"env": "GRAPHCTL_TEST_UNSET_VAR"}}}}, "test", "echo", "GRAPHCTL_TEST_UNSET_VAR is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcp.Call(ctx, services(t), graphWith(tt.servers), tt.server, tt.tool, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestTransportFailureAfterConnect(t *testing.T) {
	ctx := context.Background()
	s := services(t)
	srv := mcptest.StartHTTPServer(t)
	g := graphWith(map[string]any{"test": mcptest.HTTPServer(srv.URL)})
	if _, err := mcp.Call(ctx, s, g, "test", "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatalf("first call: %v", err)
	}
	srv.CloseClientConnections()
	srv.Close()
	res, err := mcp.Call(ctx, s, g, "test", "echo", map[string]any{"text": "x"})
	if err == nil {
		t.Fatalf("call to a closed server succeeded: %+v", res)
	}
	if !strings.Contains(err.Error(), `MCP server "test"`) {
		t.Errorf("error does not name the server: %v", err)
	}
}

func TestConcurrentCallsShareOneConnection(t *testing.T) {
	for name, g := range transports(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s := services(t)
			const n = 4
			var wg sync.WaitGroup
			errs := make([]error, n)
			texts := make([]string, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := mcp.Call(ctx, s, g, "test", "barrier", map[string]any{"n": n})
					errs[i], texts[i] = err, res.Text
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if !strings.HasPrefix(texts[i], "released as call ") {
					t.Errorf("call %d: %q", i, texts[i])
				}
			}
		})
	}
}

func TestClosedManager(t *testing.T) {
	m := mcp.NewManager()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	s := &node.Services{Extra: mcp.ServiceName.Bind(node.Extra{}, m)}
	g := graphWith(map[string]any{"test": mcptest.HTTPServer("http://127.0.0.1:1")})
	if _, err := mcp.Tools(context.Background(), s, g, "test"); !errors.Is(err, mcp.ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
	if _, err := mcp.Tools(context.Background(), &node.Services{}, g, "test"); err == nil || !strings.Contains(err.Error(), "*mcp.Manager") {
		t.Fatalf("no manager: err = %v", err)
	}
}
