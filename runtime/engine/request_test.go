package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
)

func TestRequestNamesOnlyWhatTheGraphHas(t *testing.T) {
	g := compileGraph(t, `
state: x: {type: "int"}
start: "a"
nodes: a: {type: "enginetest", config: exprs: x: "1", next: "END"}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	tests := []struct {
		name string
		req  engine.Request
		want string // "" for a valid request
	}{
		{"negative recursion limit", engine.Request{RecursionLimit: -1}, "recursion limit must be positive"},
		{"unknown interrupt_before node", engine.Request{InterruptBefore: []string{"nope"}}, `interrupt_before names node "nope"`},
		{"unknown interrupt_after node", engine.Request{InterruptAfter: []string{"a", "nope"}}, `interrupt_after names node "nope"`},
		{"every node", engine.Request{InterruptAfter: []string{"*"}}, ""},
		{"known node", engine.Request{InterruptBefore: []string{"a"}}, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.ThreadID = "t" + string(rune('0'+i))
			tt.req.Input = map[string]any{}
			res, err := eng.Run(context.Background(), tt.req, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("valid request: %v", err)
				}
				return
			}
			if res != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run: %v, %v; want a refused request saying %q", res, err, tt.want)
			}
			if _, err := eng.Checkpointer().Latest(context.Background(), tt.req.ThreadID); err == nil {
				t.Error("a refused request wrote to its thread")
			}
		})
	}
}
