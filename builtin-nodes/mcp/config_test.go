package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/runtime/graph"
)

func TestServers(t *testing.T) {
	t.Setenv("GRAPHCTL_TEST_TOKEN", "s3cret")
	tests := []struct {
		name    string
		servers any
		want    string // error substring; "" for success
		check   func(t *testing.T, s map[string]mcp.ServerConfig)
	}{
		{"stdio with env", map[string]any{"fs": map[string]any{
			"command": []any{"fs-server", "/data"},
			"env":     map[string]any{"A": "1", "TOKEN": map[string]any{"env": "GRAPHCTL_TEST_TOKEN"}, "B": map[string]any{"env": "GRAPHCTL_TEST_UNSET"}},
		}}, "", func(t *testing.T, s map[string]mcp.ServerConfig) {
			fs := s["fs"]
			if !fs.Stdio() || !slices.Equal(fs.Command, []string{"fs-server", "/data"}) {
				t.Errorf("command %v", fs.Command)
			}
			if v, err := fs.Env["TOKEN"].Resolve(); err != nil || v != "s3cret" {
				t.Errorf("TOKEN = %q, %v", v, err)
			}
			if v, _ := fs.Env["A"].Resolve(); v != "1" {
				t.Errorf("A = %q", v)
			}
			if _, err := fs.Env["B"].Resolve(); err == nil || !strings.Contains(err.Error(), "GRAPHCTL_TEST_UNSET") {
				t.Errorf("unset B: %v", err)
			}
			if got := fs.UnsetEnv(); !slices.Equal(got, []string{"GRAPHCTL_TEST_UNSET"}) {
				t.Errorf("UnsetEnv %v", got)
			}
		}},
		{"http with headers", map[string]any{"w": map[string]any{"url": "https://example.invalid/mcp", "headers": map[string]any{"X-Key": "k"}}}, "",
			func(t *testing.T, s map[string]mcp.ServerConfig) {
				if w := s["w"]; w.Stdio() || w.URL != "https://example.invalid/mcp" || w.Headers["X-Key"].Literal != "k" {
					t.Errorf("w = %+v", w)
				}
			}},
		{"not a map", []any{"x"}, "must be a map from server name", nil},
		{"server not a map", map[string]any{"a": "cmd"}, "defaults.mcp_servers.a must be", nil},
		{"neither", map[string]any{"a": map[string]any{}}, "needs command (stdio) or url", nil},
		{"both", map[string]any{"a": map[string]any{"command": []any{"x"}, "url": "http://127.0.0.1"}}, "sets both", nil},
		{"empty command", map[string]any{"a": map[string]any{"command": []any{}}}, "non-empty list", nil},
		{"non-string arg", map[string]any{"a": map[string]any{"command": []any{"x", 3}}}, "command[1]", nil},
		{"bad url", map[string]any{"a": map[string]any{"url": "ftp://x"}}, "must start with http://", nil},
		{"unknown key", map[string]any{"a": map[string]any{"url": "http://x", "timeout": 3}}, `unknown key "timeout"`, nil},
		{"env on http", map[string]any{"a": map[string]any{"url": "http://x", "env": map[string]any{"A": "1"}}}, "env applies to a command", nil},
		{"headers on stdio", map[string]any{"a": map[string]any{"command": []any{"x"}, "headers": map[string]any{"A": "1"}}}, "headers apply to a url", nil},
		{"bad env ref", map[string]any{"a": map[string]any{"command": []any{"x"}, "env": map[string]any{"A": map[string]any{"var": "X"}}}}, `env.A must be a string or {env: "VAR"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := mcp.Servers(&graph.Graph{Defaults: graph.Defaults{Raw: map[string]any{"mcp_servers": tt.servers}}})
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}
