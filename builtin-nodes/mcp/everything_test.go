package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/mcp"
)

// EverythingEnv names the directory holding the reference server's binary
// mcp-server-everything (a node_modules/.bin directory), installed with
//
//	npm install --prefix .ci/node @modelcontextprotocol/server-everything
const EverythingEnv = "GRAPHCTL_MCP_EVERYTHING"

// everything returns the reference server's declaration, or skips the test
// when node, npx or the server are missing.
func everything(t *testing.T) map[string]any {
	t.Helper()
	for _, tool := range []string{"node", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH; the reference MCP server needs Node.js (and %s set to its node_modules/.bin)", tool, EverythingEnv)
		}
	}
	dir := os.Getenv(EverythingEnv)
	if dir == "" {
		t.Skipf("%s is not set; install the reference server with `npm install --prefix .ci/node @modelcontextprotocol/server-everything` and set %s=.ci/node/node_modules/.bin", EverythingEnv, EverythingEnv)
	}
	bin := filepath.Join(dir, "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s=%s holds no mcp-server-everything: %v", EverythingEnv, dir, err)
	}
	return map[string]any{"command": []any{"node", bin, "stdio"}}
}

func TestReferenceServerOverStdio(t *testing.T) {
	g := graphWith(map[string]any{"everything": everything(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := services(t)

	tools, err := mcp.Tools(ctx, s, g, "everything")
	if err != nil {
		t.Fatalf("tools: %v", err)
	}
	var names []string
	for _, ti := range tools {
		names = append(names, ti.Name)
	}
	for _, want := range []string{"echo", "get-sum"} {
		if !slices.Contains(names, want) {
			t.Fatalf("the reference server offers %v, without %q", names, want)
		}
	}

	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"echo", map[string]any{"message": "graphctl says hi"}, "graphctl says hi", false},
		{"get-sum", map[string]any{"a": 19, "b": 23}, "42", false},
		// a required argument missing: the server reports a tool error
		{"echo", map[string]any{}, "message", true},
	}
	for _, tt := range tests {
		res, err := mcp.Call(ctx, s, g, "everything", tt.tool, tt.args)
		if err != nil {
			t.Errorf("%s %v: %v", tt.tool, tt.args, err)
			continue
		}
		if res.IsError != tt.isError || !strings.Contains(res.Text, tt.want) {
			t.Errorf("%s %v: IsError %v text %q; want IsError %v and text containing %q",
				tt.tool, tt.args, res.IsError, res.Text, tt.isError, tt.want)
		}
	}
}
