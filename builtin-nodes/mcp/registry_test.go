package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/node"
)

// TestBuiltinServerOfARegistry: a builtin server serves the tools of the
// tool registry attached to the node registry the engine runs the graph
// with (node.RegistryKey): a tool only that registry holds is listed and
// called, and the default tools are not served there; without that
// registry, the same declaration names an unknown tool.
func TestBuiltinServerOfARegistry(t *testing.T) {
	ctx := context.Background()
	tools := tool.NewRegistry()
	tools.MustRegister(tool.Tool{
		Name:        "private_echo",
		Description: "Answers with a fixed text.",
		Func: func(context.Context, map[string]any) (tool.Result, error) {
			return tool.Result{Text: "echo from the private registry"}, nil
		},
	})
	reg := node.NewRegistry()
	tool.Use(reg, tools)
	g := graphWith(map[string]any{"local": map[string]any{"builtin": true}})
	s := services(t)
	s.Extra = node.RegistryKey.Bind(s.Extra, reg)

	infos, err := mcp.Tools(ctx, s, g, "local")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Name != "private_echo" {
		t.Errorf("tools = %+v, want only private_echo", infos)
	}
	res, err := mcp.Call(ctx, s, g, "local", "private_echo", nil)
	if err != nil || res.IsError || res.Text != "echo from the private registry" {
		t.Errorf("call = %+v, %v", res, err)
	}

	selected := graphWith(map[string]any{"local": map[string]any{"builtin": []any{"private_echo"}}})
	if _, err := mcp.ServersWith(selected, tools); err != nil {
		t.Errorf("with its registry: %v", err)
	}
	if _, err := mcp.Servers(selected); err == nil || !strings.Contains(err.Error(), `builtin tool "private_echo" is not registered`) {
		t.Errorf("with the default tools: err = %v, want private_echo not registered", err)
	}
	if _, err := mcp.Call(ctx, services(t), selected, "local", "private_echo", nil); err == nil {
		t.Error("a run without the registry called a tool only the registry holds")
	}
}
