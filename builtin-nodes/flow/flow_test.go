package flow

import (
	"context"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
)

func testGraph(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(
		map[string]any{"requirements": map[string]any{
			"diagnose_repair":     []any{"model", "symptoms"},
			"install_instruction": []any{"model", "part"},
		}},
		"messages: messages", "goal: string", "model: string", "part: string",
		"symptoms: list<string>", "missing: list<string>", "count: int", "ratio: float", "done: bool",
		"log: list<string>",
	)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSet(t *testing.T) {
	g := testGraph(t)
	tests := []struct {
		name   string
		config map[string]any
		state  map[string]any
		want   map[string]any
	}{
		{
			name:   "missing requirements of the goal",
			config: map[string]any{"set": map[string]any{"missing": "filter(requirements[goal], {empty(state[#])})"}},
			state:  map[string]any{"goal": "diagnose_repair", "model": "WDT780SAEM1"},
			want:   map[string]any{"missing": []any{"symptoms"}},
		},
		{
			name:   "nothing missing",
			config: map[string]any{"set": map[string]any{"missing": "filter(requirements[goal], {empty(state[#])})"}},
			state:  map[string]any{"goal": "install_instruction", "model": "WDT780SAEM1", "part": "PS3406971"},
			want:   map[string]any{"missing": []any{}},
		},
		{
			name: "several fields at once",
			config: map[string]any{"set": map[string]any{
				"count": "count + 1", "done": "count >= 2", "goal": "upper(goal)", "ratio": "count / 4",
			}},
			state: map[string]any{"count": 2, "goal": "fix"},
			want:  map[string]any{"count": 3, "done": true, "goal": "FIX", "ratio": 0.5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "set", "check", tt.config)
			if err != nil || n == nil {
				t.Fatalf("build: %v %v", err, b.Problems())
			}
			up, _, err := nodetest.Run(context.Background(), g, n, "check", tt.state)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if !reflect.DeepEqual(map[string]any(up), tt.want) {
				t.Errorf("update = %#v, want %#v", up, tt.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	g := testGraph(t)
	tests := []struct {
		name     string
		typ      string
		config   map[string]any
		path     string
		code     string
		wantNode bool
	}{
		{"set undeclared field", "set", map[string]any{"set": map[string]any{"mising": "[]"}}, "set.mising", "unknown-field", false},
		{"set string into int", "set", map[string]any{"set": map[string]any{"count": "'three'"}}, "set.count", nodetest.CodeExpression, false},
		{"set int into list", "set", map[string]any{"set": map[string]any{"missing": "len(symptoms)"}}, "set.missing", nodetest.CodeExpression, false},
		{"set unknown name in expression", "set", map[string]any{"set": map[string]any{"goal": "gaol"}}, "set.goal", nodetest.CodeExpression, false},
		{"set nothing", "set", map[string]any{"set": map[string]any{}}, "set", "invalid-config", false},
		{"reply to undeclared field", "reply", map[string]any{"text": "hi", "field": "history"}, "field", "unknown-field", false},
		{"reply to non-messages field", "reply", map[string]any{"text": "hi", "field": "goal"}, "field", "invalid-config", false},
		{"reply with bad template", "reply", map[string]any{"text": "Model: ${modle}"}, "text", nodetest.CodeTemplate, false},
		{"reply with unclosed template", "reply", map[string]any{"text": "Model: ${model"}, "text", nodetest.CodeTemplate, false},
		{"reply role outside schema", "reply", map[string]any{"text": "hi", "role": "user"}, "", nodetest.CodeSchema, false},
		{"route with config", "route", map[string]any{"when": "x"}, "", nodetest.CodeSchema, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, tt.typ, "n", tt.config)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if n != nil {
				t.Fatalf("built a node from a bad config")
			}
			if !b.Has(tt.path, tt.code) {
				t.Errorf("want %s at %q, got %v", tt.code, tt.path, b.Problems())
			}
		})
	}
}

func TestReply(t *testing.T) {
	g := testGraph(t)
	tests := []struct {
		name   string
		config map[string]any
		state  map[string]any
		role   string
		text   string
	}{
		{
			name:   "ask for missing fields",
			config: map[string]any{"text": "To help you, I need: ${join(missing, ', ')}."},
			state:  map[string]any{"missing": []any{"model", "part"}},
			role:   "assistant", text: "To help you, I need: model, part.",
		},
		{
			name:   "system role and literal dollar",
			config: map[string]any{"text": "Parts from ${count} dollars; write $${x} literally", "role": "system"},
			state:  map[string]any{"count": 30},
			role:   "system", text: "Parts from 30 dollars; write ${x} literally",
		},
		{
			name:   "list formatting",
			config: map[string]any{"text": "Symptoms: ${symptoms}"},
			state:  map[string]any{"symptoms": []any{"leaking", "noisy"}},
			role:   "assistant", text: "Symptoms: leaking, noisy",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "reply", "ask", tt.config)
			if err != nil || n == nil {
				t.Fatalf("build: %v %v", err, b.Problems())
			}
			up, events, err := nodetest.Run(context.Background(), g, n, "ask", tt.state)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			want := map[string]any{"messages": map[string]any{"role": tt.role, "content": tt.text}}
			if !reflect.DeepEqual(map[string]any(up), want) {
				t.Errorf("update = %#v, want %#v", up, want)
			}
			if len(events) != 1 || events[0].Type != event.Text || events[0].Payload["content"] != tt.text {
				t.Errorf("events = %#v, want one text event with %q", events, tt.text)
			}
		})
	}
}

func TestRoute(t *testing.T) {
	g := testGraph(t)
	n, b, err := nodetest.Build(g, "route", "route_goal", nil)
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	up, events, err := nodetest.Run(context.Background(), g, n, "route_goal", map[string]any{"goal": "x"})
	if err != nil || len(up) != 0 || len(events) != 0 {
		t.Errorf("route wrote %v, emitted %v, err %v; want nothing", up, events, err)
	}
}
