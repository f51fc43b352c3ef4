package interrupt

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/runtime/node"
)

func TestInterruptPayload(t *testing.T) {
	g, err := nodetest.Graph(nil, "messages: messages", "approval: object", "model: string", "missing: list<string>")
	if err != nil {
		t.Fatal(err)
	}
	form := map[string]any{"approved": map[string]any{"type": "bool", "label": "Approve?"}}
	tests := []struct {
		name   string
		config map[string]any
		state  map[string]any
		want   map[string]any
	}{
		{
			name: "message, form and extra payload",
			config: map[string]any{
				"field": "approval", "message": "Order the part for ${model}?", "form": form,
				"payload": map[string]any{"kind": "approval", "timeout_hours": 24},
			},
			state: map[string]any{"model": "WDT780SAEM1"},
			want: map[string]any{
				"field": "approval", "message": "Order the part for WDT780SAEM1?", "form": form,
				"kind": "approval", "timeout_hours": int64(24),
			},
		},
		{
			name:   "field only",
			config: map[string]any{"field": "model"},
			want:   map[string]any{"field": "model"},
		},
		{
			name:   "message listing missing fields",
			config: map[string]any{"field": "model", "message": "I still need: ${missing}"},
			state:  map[string]any{"missing": []any{"model", "part"}},
			want:   map[string]any{"field": "model", "message": "I still need: model, part"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "interrupt", "ask", tt.config)
			if err != nil || n == nil {
				t.Fatalf("build: %v %v", err, b.Problems())
			}
			up, _, err := nodetest.Run(context.Background(), g, n, "ask", tt.state)
			var ir *node.InterruptRequest
			if !errors.As(err, &ir) {
				t.Fatalf("want an interrupt request, got update %v, error %v", up, err)
			}
			if ir.Field != tt.config["field"] {
				t.Errorf("field = %q, want %q", ir.Field, tt.config["field"])
			}
			got := normalizeInts(ir.Payload)
			if !reflect.DeepEqual(got, normalizeInts(tt.want)) {
				t.Errorf("payload = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// normalizeInts maps integral numbers to int64 so that payloads compare
// whatever numeric type the config decoder produced.
func normalizeInts(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch x := v.(type) {
		case int:
			v = int64(x)
		case float64:
			if x == float64(int64(x)) {
				v = int64(x)
			}
		}
		out[k] = v
	}
	return out
}

func TestInterruptConfigErrors(t *testing.T) {
	g, err := nodetest.Graph(nil, "approval: object")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		config map[string]any
		path   string
		code   string
	}{
		{"undeclared field", map[string]any{"field": "aproval"}, "field", "unknown-field"},
		{"empty field", map[string]any{"field": ""}, "field", "invalid-config"},
		{"bad message template", map[string]any{"field": "approval", "message": "${nope}"}, "message", nodetest.CodeTemplate},
		{"reserved payload key", map[string]any{"field": "approval", "payload": map[string]any{"field": "x"}}, "payload.field", "invalid-config"},
		{"missing field key", map[string]any{"message": "hi"}, "", nodetest.CodeSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "interrupt", "ask", tt.config)
			if err != nil {
				t.Fatal(err)
			}
			if n != nil || !b.Has(tt.path, tt.code) {
				t.Errorf("want %s at %q and no node, got node=%v problems=%v", tt.code, tt.path, n != nil, b.Problems())
			}
		})
	}
}
