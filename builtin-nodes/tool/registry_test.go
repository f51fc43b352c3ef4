package tool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
)

// toolGraph is a graph whose tool node calls the named tool.
func toolGraph(name string) string {
	return `dsl_version: "graphctl/v1"
name: "tools"
state: {messages: {type: "messages"}, result: {type: "object"}}
start: "call"
nodes: call: {type: "tool", config: {tool: "` + name + `", output: "result", reply: false}, next: "END"}
`
}

// privateTools returns a node registry with the builtin node types and a
// tool registry of its own attached, holding only "private_echo".
func privateTools(t *testing.T) *node.Registry {
	t.Helper()
	tools := tool.NewRegistry()
	tools.MustRegister(tool.Tool{
		Name:        "private_echo",
		Description: "Answers with a fixed text.",
		Func: func(context.Context, map[string]any) (tool.Result, error) {
			return tool.Result{Text: "echo from the private registry"}, nil
		},
	})
	reg := node.Default().Clone()
	tool.Use(reg, tools)
	return reg
}

// TestToolRegistryOfItsOwn: a tool node compiled against a node registry
// with a tool registry attached calls that registry's tool, which the
// default tool registry does not hold; a tool only the default registry
// holds is an unknown tool there, at its file:line:col.
func TestToolRegistryOfItsOwn(t *testing.T) {
	reg := privateTools(t)
	g, diags := runtime.Loader{Registry: reg}.LoadSource("tools.cue", []byte(toolGraph("private_echo")))
	if g == nil {
		t.Fatalf("the graph does not compile with its registry:\n%v", diags)
	}
	eng := engine.New(g, memory.New(), engine.Options{})
	defer eng.Close()
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: map[string]any{}}, nil)
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("run: %v %+v", err, res)
	}
	if got, _ := res.State["result"].(map[string]any); got["text"] != "echo from the private registry" {
		t.Errorf("result = %v", res.State["result"])
	}

	if _, ok := tool.Lookup("private_echo"); ok {
		t.Error("the default tool registry holds private_echo")
	}
	if g, _ := runtime.LoadSource("tools.cue", []byte(toolGraph("private_echo"))); g != nil {
		t.Error("the default registries compiled a graph calling a tool they do not hold")
	}

	_, diags = runtime.Loader{Registry: reg}.LoadSource("tools.cue", []byte(toolGraph("diagnose_repair")))
	if len(diags) != 1 || diags[0].Code != "unknown-tool" || diags[0].Pos().String() != "tools.cue:5:45" ||
		!strings.Contains(diags[0].Message, `"diagnose_repair"`) || !strings.Contains(diags[0].Message, "[private_echo]") {
		t.Errorf("a default tool with the private registry: want one unknown-tool at tools.cue:5:45 naming it and listing private_echo, got %v", diags)
	}
}

// TestToolRegistryOf: a node registry with no tool registry attached (the
// default one, a nil one, a new one) uses the default tools.
func TestToolRegistryOf(t *testing.T) {
	for name, reg := range map[string]*node.Registry{"default": node.Default(), "nil": nil, "new": node.NewRegistry()} {
		if tool.Of(reg) != tool.Default() {
			t.Errorf("%s: Of is not the default tool registry", name)
		}
	}
	tools := tool.NewRegistry()
	reg := node.NewRegistry()
	tool.Use(reg, tools)
	if tool.Of(reg) != tools {
		t.Error("Of does not return the attached registry")
	}
	if tool.Of(node.Default()) != tool.Default() {
		t.Error("attaching to a registry of its own reached the default one")
	}
}
