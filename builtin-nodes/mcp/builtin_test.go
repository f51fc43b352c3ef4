package mcp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/localtools"
	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
)

func TestBuiltinServerConfig(t *testing.T) {
	tests := []struct {
		name    string
		server  any
		want    string // error substring; "" for success
		builtin []string
	}{
		{name: "all tools", server: map[string]any{"builtin": true}},
		{name: "selected tools", server: map[string]any{"builtin": []any{"convert_units", "calculate"}}, builtin: []string{"convert_units", "calculate"}},
		{name: "false", server: map[string]any{"builtin": false}, want: "builtin must be true"},
		{name: "empty list", server: map[string]any{"builtin": []any{}}, want: "lists no tools"},
		{name: "unknown tool", server: map[string]any{"builtin": []any{"calculat"}}, want: `builtin tool "calculat" is not registered (did you mean "calculate"?)`},
		{name: "not a name", server: map[string]any{"builtin": []any{3}}, want: "builtin[0] must be a tool name"},
		{name: "with a url", server: map[string]any{"builtin": true, "url": "http://127.0.0.1/"}, want: "takes no command, url"},
		{name: "wrong type", server: map[string]any{"builtin": "yes"}, want: "must be true or a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := mcp.Servers(graphWith(map[string]any{"local": tt.server}))
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg := s["local"]
			if !cfg.Builtin || cfg.Stdio() || cfg.URL != "" || !slices.Equal(cfg.BuiltinTools, tt.builtin) {
				t.Errorf("config %+v", cfg)
			}
		})
	}
}

func TestBuiltinServerTools(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		server any
		want   []string
	}{
		{name: "selected", server: map[string]any{"builtin": []any{"convert_units", "calculate"}}, want: []string{"calculate", "convert_units"}},
		{name: "all", server: map[string]any{"builtin": true}, want: tool.Names()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools, err := mcp.Tools(ctx, services(t), graphWith(map[string]any{"local": tt.server}), "local")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, ti := range tools {
				names = append(names, ti.Name)
				reg, _ := tool.Lookup(ti.Name)
				if ti.Description != reg.Description || ti.InputSchema["type"] != "object" {
					t.Errorf("tool %s: description %q, schema %v", ti.Name, ti.Description, ti.InputSchema)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Errorf("tools %v, want %v", names, tt.want)
			}
			for _, ti := range tools {
				if ti.Name != "calculate" {
					continue
				}
				req, _ := ti.InputSchema["required"].([]any)
				props, _ := ti.InputSchema["properties"].(map[string]any)
				if len(req) != 1 || req[0] != "expression" || props["expression"] == nil {
					t.Errorf("calculate schema over MCP: %v", ti.InputSchema)
				}
			}
		})
	}
}

func TestBuiltinServerCall(t *testing.T) {
	ctx := context.Background()
	s := services(t)
	g := graphWith(map[string]any{"local": map[string]any{"builtin": true}})
	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		wantText  string
		wantError bool
		check     func(t *testing.T, structured any)
	}{
		{name: "calculate", tool: "calculate", args: map[string]any{"expression": "17 * 23"}, wantText: "391",
			check: func(t *testing.T, structured any) {
				m, _ := structured.(map[string]any)
				if m["result"] != 391.0 || m["expression"] != "17 * 23" {
					t.Errorf("structured %v", structured)
				}
			}},
		{name: "convert", tool: "convert_units", args: map[string]any{"value": 100, "from": "C", "to": "F"}, wantText: "100 C = 212 F"},
		{name: "tool failure is an error result", tool: "calculate", args: map[string]any{"expression": "1 / 0"}, wantText: "no finite value", wantError: true},
		{name: "missing argument", tool: "calculate", args: map[string]any{}, wantText: `missing required argument "expression"`, wantError: true},
		{name: "wrong argument type", tool: "convert_units", args: map[string]any{"value": "ten", "from": "m", "to": "ft"}, wantText: `argument "value": want number`, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := mcp.Call(ctx, s, g, "local", tt.tool, tt.args)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if res.IsError != tt.wantError || !strings.Contains(res.Text, tt.wantText) {
				t.Errorf("result %+v, want IsError=%v and text containing %q", res, tt.wantError, tt.wantText)
			}
			if tt.check != nil {
				tt.check(t, res.Structured)
			}
		})
	}
	if _, err := mcp.Call(ctx, s, g, "local", "nosuch", nil); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown tool: err = %v", err)
	}
}

// TestBuiltinServerReconnectsAfterClose checks that closing a Manager closes
// the in-process server and that a new Manager serves the tools again.
func TestBuiltinServerReconnectsAfterClose(t *testing.T) {
	ctx := context.Background()
	g := graphWith(map[string]any{"local": map[string]any{"builtin": []any{"calculate"}}})
	for i := range 2 {
		m := mcp.NewManager()
		cfg, err := mcp.Server(g, "local")
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Call(ctx, cfg, "calculate", map[string]any{"expression": "2 ^ 8"})
		if err != nil || res.Text != "256" {
			t.Fatalf("manager %d: %+v, %v", i, res, err)
		}
		if err := m.Close(); err != nil {
			t.Fatalf("manager %d: close: %v", i, err)
		}
		if _, err := m.Call(ctx, cfg, "calculate", map[string]any{"expression": "1"}); err == nil {
			t.Errorf("manager %d: a call after Close succeeded", i)
		}
	}
}
