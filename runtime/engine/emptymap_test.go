package engine_test

import (
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
)

// A map over an empty list does not end its branch silently: by default the
// join after the fan-out runs with an empty result; with on_empty "error" the
// run fails saying so. Both send a map_empty event.
func TestMapOverEmptyList(t *testing.T) {
	const graph = `
state: {
	items: {type: "list<string>"}
	results: {type: "list<string>", reducer: "append"}
	summary: {type: "string"}
}
start: "split"
nodes: {
	split: {type: "enginetest", map: {over: "items", to: "work"%s}}
	work: {type: "enginetest", config: write: results: ["one"], next: "join"}
	join: {type: "enginetest", wait_for: ["work"], config: write: summary: "joined", next: "END"}
}`
	tests := []struct {
		name, onEmpty string
		items         []any
		status        string
		path          string
		summary       string
		err           string
	}{
		{"two items", "", []any{"a", "b"}, engine.StatusCompleted, "split work work join", "joined", ""},
		{"empty list, default", "", []any{}, engine.StatusCompleted, "split join", "joined", ""},
		{"empty list, continue", `, on_empty: "continue"`, []any{}, engine.StatusCompleted, "split join", "joined", ""},
		{"empty list, error", `, on_empty: "error"`, []any{}, engine.StatusError, "split", "", `node "split": map over "items" is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := compileGraph(t, strings.Replace(graph, "%s", tt.onEmpty, 1))
			eng := engine.New(g, memory.New(), engine.Options{})
			res, rec := run(t, eng, engine.Request{ThreadID: "t", Input: map[string]any{"items": tt.items}})
			if res.Status != tt.status || strings.Join(res.Path, " ") != tt.path || res.State["summary"] != tt.summary {
				t.Fatalf("status %s, path %v, summary %v, err %v", res.Status, res.Path, res.State["summary"], res.Err)
			}
			if tt.err != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tt.err)) {
				t.Fatalf("error %v, want %q", res.Err, tt.err)
			}
			empty := strings.Contains(strings.Join(rec.types(), " "), engine.MapEmpty)
			if empty != (len(tt.items) == 0) {
				t.Fatalf("map_empty event sent: %v; events %v", empty, rec.types())
			}
		})
	}
}
