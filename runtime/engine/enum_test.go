package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
)

// Every write to a field with an enum is checked against it: a run's input, an
// interrupt's answer, a state update and a node's update.
func TestEnumEnforcedOnEveryWrite(t *testing.T) {
	const graph = `
state: {
	goal: {type: "string", enum: ["install", "repair"]}
	tags: {type: "list<string>", enum: ["x", "y"], reducer: "append"}
	level: {type: "int", enum: [1, 2], default: 1}
	answer: {type: "string", enum: ["yes", "no"]}
	out: {type: "string"}
}
start: "a"
nodes: {
	a: {type: "enginetest", config: {write: out: "ok", interrupt: "answer"}, next: "b"}
	b: {type: "enginetest", config: {write: goal: "%s"}, next: "END"}
}`
	tests := []struct {
		name   string
		input  map[string]any
		resume any
		write  string // what node b writes to goal
		want   string // the error, or "" for a completed run
	}{
		{"allowed values", map[string]any{"goal": "install", "tags": []any{"x", "y"}, "level": 2}, "yes", "repair", ""},
		{"unset string is allowed", map[string]any{"goal": ""}, "no", "", ""},
		{"input outside enum", map[string]any{"goal": "fly"}, nil, "", `input: state field "goal": "fly" is not one of the allowed values "install", "repair"`},
		{"input list item outside enum", map[string]any{"tags": []any{"x", "z"}}, nil, "", `state field "tags": item 1, "z", is not one of the allowed values "x", "y"`},
		{"input single item outside enum", map[string]any{"tags": "z"}, nil, "", `state field "tags": item 0, "z", is not one of the allowed values "x", "y"`},
		{"input int outside enum", map[string]any{"level": 3}, nil, "", `state field "level": 3 is not one of the allowed values 1, 2`},
		{"resume outside enum", map[string]any{}, "maybe", "", `resume: node "a" wrote state field "answer": "maybe" is not one of the allowed values "yes", "no"`},
		{"node update outside enum", map[string]any{}, "yes", "fly", `node "b" wrote state field "goal": "fly" is not one of the allowed values "install", "repair"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := compileGraph(t, strings.Replace(graph, "%s", tt.write, 1))
			eng := engine.New(g, memory.New(), engine.Options{})
			res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: tt.input})
			if tt.resume != nil && res.Status == engine.StatusInterrupted {
				res, _ = run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: tt.resume}})
			}
			if tt.want == "" {
				if res.Status != engine.StatusCompleted {
					t.Fatalf("status %s (%v), want completed", res.Status, res.Err)
				}
				return
			}
			if res.Status != engine.StatusError || res.Err == nil || !strings.Contains(res.Err.Error(), tt.want) {
				t.Fatalf("status %s, err %v; want an error containing %q", res.Status, res.Err, tt.want)
			}
		})
	}
}

// A rejected answer leaves the thread waiting on its interrupt, so a correct
// answer can follow.
func TestEnumRejectedResumeKeepsInterrupt(t *testing.T) {
	g := compileGraph(t, `
state: answer: {type: "string", enum: ["yes", "no"]}
start: "a"
nodes: a: {type: "enginetest", config: interrupt: "answer", next: "END"}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	if res, _ := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{}}); res.Status != engine.StatusInterrupted {
		t.Fatalf("status %s, want interrupted", res.Status)
	}
	if res, _ := run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "maybe"}}); res.Status != engine.StatusError {
		t.Fatalf("status %s, want error", res.Status)
	}
	res, _ := run(t, eng, engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: "no"}})
	if res.Status != engine.StatusCompleted || res.State["answer"] != "no" {
		t.Fatalf("status %s, state %v: want completed with answer no", res.Status, res.State)
	}
	_, err := eng.UpdateState(context.Background(), "t", "", map[string]any{"answer": "perhaps"})
	if err == nil || !strings.Contains(err.Error(), `"perhaps" is not one of the allowed values "yes", "no"`) {
		t.Fatalf("update state: %v, want an enum error", err)
	}
}
