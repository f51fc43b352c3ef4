package tool_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/appliance"
	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func init() {
	tool.MustRegister(tool.Tool{
		Name:        "test_flaky_lookup",
		Description: "Fails for the key 'down', echoes its arguments otherwise.",
		Input: map[string]any{"type": "object", "properties": map[string]any{
			"key":   map[string]any{"type": "string"},
			"count": map[string]any{"type": "integer"},
			"mode":  map[string]any{"type": "string", "enum": []any{"fast", "slow"}},
		}, "required": []any{"key"}},
		Func: func(_ context.Context, args map[string]any) (tool.Result, error) {
			if args["key"] == "down" {
				return tool.Result{}, errors.New("backend unavailable")
			}
			return tool.Result{Text: fmt.Sprintf("key=%v", args["key"]), Data: struct {
				Key string `json:"key"`
			}{fmt.Sprint(args["key"])}}, nil
		},
	})
}

func testGraph(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "messages: messages", "model: string", "part: string",
		"symptoms: list<string>", "result: object", "goal: string", "count: int")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestToolNodeRuns(t *testing.T) {
	g := testGraph(t)
	n, b, err := nodetest.Build(g, "tool", "execute", map[string]any{
		"tool": "diagnose_repair", "args": map[string]any{"model": "model", "symptoms": "symptoms"}, "output": "result",
	})
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	up, events, err := nodetest.Run(context.Background(), g, n, "execute",
		map[string]any{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	msg, _ := up["messages"].(map[string]any)
	content, _ := msg["content"].(string)
	if msg["role"] != "assistant" || !strings.HasPrefix(content, "[TOOL USED: diagnose_repair]\n\nBased on your symptoms (leaking) for WDT780SAEM1") {
		t.Errorf("message = %#v", msg)
	}
	out, _ := up["result"].(map[string]any)
	wantArgs := map[string]any{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}}
	if out["tool"] != "diagnose_repair" || !reflect.DeepEqual(out["args"], wantArgs) || !strings.HasPrefix(content, "[TOOL USED: diagnose_repair]\n\n"+out["text"].(string)) {
		t.Errorf("output = %#v", out)
	}
	if data, _ := out["data"].(map[string]any); data["model"] != "WDT780SAEM1" {
		t.Errorf("output data = %#v", out["data"])
	}
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	if !reflect.DeepEqual(types, []string{"tool_result", "text"}) {
		t.Fatalf("event types = %v", types)
	}
	if p := events[0].Payload; p["status"] != tool.StatusCompleted || p["tool"] != "diagnose_repair" || p["result"] != out["text"] {
		t.Errorf("tool_result payload = %#v", p)
	}
}

func TestToolNodeFailures(t *testing.T) {
	g := testGraph(t)
	tests := []struct {
		name   string
		args   map[string]any
		state  map[string]any
		code   string
		errHas string
	}{
		{"required argument empty at run time", map[string]any{"key": "part"}, map[string]any{"part": ""}, "invalid_arguments", `missing required argument "key"`},
		{"enum violated", map[string]any{"key": "part", "mode": "goal"}, map[string]any{"part": "x", "goal": "medium"}, "invalid_arguments", "not one of"},
		{"tool fails", map[string]any{"key": "part"}, map[string]any{"part": "down"}, "tool_error", "backend unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "tool", "call", map[string]any{"tool": "test_flaky_lookup", "args": tt.args, "reply": false, "output": "result"})
			if err != nil || n == nil {
				t.Fatalf("build: %v %v", err, b.Problems())
			}
			up, events, err := nodetest.Run(context.Background(), g, n, "call", tt.state)
			if err == nil {
				t.Fatalf("want an error, got update %v", up)
			}
			if node.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("err = %v (code %s), want code %s mentioning %q", err, node.CodeOf(err), tt.code, tt.errHas)
			}
			if len(events) != 1 || events[0].Payload["status"] != tool.StatusFailed {
				t.Errorf("events = %#v, want one FAILED tool_result", events)
			}
		})
	}
}

func TestToolNodeStructData(t *testing.T) {
	g := testGraph(t)
	n, b, err := nodetest.Build(g, "tool", "call", map[string]any{"tool": "test_flaky_lookup", "args": map[string]any{"key": "part"}, "output": "result", "reply": false})
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	up, _, err := nodetest.Run(context.Background(), g, n, "call", map[string]any{"part": "PS3406971"})
	if err != nil {
		t.Fatal(err)
	}
	if _, hasMessages := up["messages"]; hasMessages {
		t.Error("reply: false still appended a message")
	}
	out := up["result"].(map[string]any)
	if !reflect.DeepEqual(out["data"], map[string]any{"key": "PS3406971"}) {
		t.Errorf("data = %#v, want it converted to a map", out["data"])
	}
}

func TestToolNodeConfigErrors(t *testing.T) {
	g := testGraph(t)
	tests := []struct {
		name   string
		config map[string]any
		path   string
		code   string
		msgHas string
	}{
		{"unknown tool with suggestion", map[string]any{"tool": "diagnose_repiar"}, "tool", "unknown-tool", `did you mean "diagnose_repair"`},
		{"argument not in schema", map[string]any{"tool": "check_compatibility", "args": map[string]any{"part": "part", "model": "model", "modle": "model"}}, "args.modle", "invalid-config", `did you mean "model"`},
		{"required argument not set", map[string]any{"tool": "check_compatibility", "args": map[string]any{"part": "part"}}, "args", "invalid-config", `"model"`},
		{"argument of the wrong type", map[string]any{"tool": "diagnose_repair", "args": map[string]any{"model": "model", "symptoms": "goal"}}, "args.symptoms", nodetest.CodeExpression, ""},
		{"output undeclared", map[string]any{"tool": "get_installation_instructions", "args": map[string]any{"part": "part"}, "output": "out"}, "output", "unknown-field", ""},
		{"output not an object", map[string]any{"tool": "get_installation_instructions", "args": map[string]any{"part": "part"}, "output": "goal"}, "output", "invalid-config", ""},
		{"messages field of the wrong type", map[string]any{"tool": "get_installation_instructions", "args": map[string]any{"part": "part"}, "messages_field": "goal"}, "messages_field", "invalid-config", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "tool", "call", tt.config)
			if err != nil {
				t.Fatal(err)
			}
			if n != nil || !b.Has(tt.path, tt.code) {
				t.Fatalf("want %s at %q and no node, got node=%v problems=%v", tt.code, tt.path, n != nil, b.Problems())
			}
			for _, p := range b.Problems() {
				if p.Path == tt.path && !strings.Contains(p.Message, tt.msgHas) {
					t.Errorf("message %q lacks %q", p.Message, tt.msgHas)
				}
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	ok := func(context.Context, map[string]any) (tool.Result, error) { return tool.Result{}, nil }
	tests := []struct {
		name string
		t    tool.Tool
	}{
		{"duplicate", tool.Tool{Name: "diagnose_repair", Func: ok}},
		{"no function", tool.Tool{Name: "x_nofunc"}},
		{"no name", tool.Tool{Func: ok}},
		{"required not a property", tool.Tool{Name: "x_req", Func: ok, Input: map[string]any{"type": "object", "required": []any{"a"}}}},
		{"unknown property type", tool.Tool{Name: "x_type", Func: ok, Input: map[string]any{"properties": map[string]any{"a": map[string]any{"type": "date"}}}}},
	}
	for _, tt := range tests {
		if err := tool.Register(tt.t); err == nil {
			t.Errorf("%s: Register accepted %+v", tt.name, tt.t)
		}
	}
	names := tool.Names()
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("Names not sorted: %v", names)
		}
	}
}

func TestValidateArgs(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{
		"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"n":    map[string]any{"type": "integer"},
		"x":    map[string]any{"type": "number"},
		"on":   map[string]any{"type": "boolean"},
	}, "required": []any{"n"}}
	tests := []struct {
		args   map[string]any
		errHas string
	}{
		{map[string]any{"n": 2, "tags": []any{"a"}, "x": 1.5, "on": true}, ""},
		{map[string]any{"n": 2.0}, ""},
		{map[string]any{"n": 2.5}, `argument "n": want integer`},
		{map[string]any{"n": 1, "tags": []any{"a", 3}}, "item 1"},
		{map[string]any{"tags": []string{"a"}}, `missing required argument "n"`},
		{map[string]any{"n": 1, "on": "yes"}, "want boolean"},
		{map[string]any{"n": 1, "extra": 1}, `unknown argument "extra"`},
	}
	for _, tt := range tests {
		err := tool.ValidateArgs(schema, tt.args)
		if (tt.errHas == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("ValidateArgs(%v) = %v, want %q", tt.args, err, tt.errHas)
		}
	}
}
