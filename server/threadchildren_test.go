package server

import (
	"context"
	"testing"
)

// TestStatelessRunLeavesNoSubgraphCheckpoints: a stateless run whose graph
// runs a subgraph (one that keeps its state, so its namespace outlives the
// step) leaves nothing stored, its subgraph's checkpoints included, on
// Badger (where stateless threads live in memory) and on PostgreSQL (where
// they are stored like any other).
func TestStatelessRunLeavesNoSubgraphCheckpoints(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := backendFixture(t, backend, keeperGraphs(t))
			for i, topic := range []string{"a", "b"} {
				code, out := f.do("POST", "/runs/wait", map[string]any{"assistant_id": "keeper", "input": map[string]any{"topic": topic}})
				if m, _ := out.(map[string]any); code != 200 || m["report"] != topic {
					t.Fatalf("stateless run %d: %d %v, want report %s", i, code, out, topic)
				}
			}
			infos, err := f.srv.cp.Threads(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range infos {
				t.Errorf("left behind by stateless runs: %q", in.ThreadID)
			}
		})
	}
}

// TestThreadIDWithTheNamespaceSeparator: a thread id cannot contain the
// separator of subgraph namespaces (0x1f), so that no thread's id falls
// among the stored ids of another thread's subgraphs.
func TestThreadIDWithTheNamespaceSeparator(t *testing.T) {
	f := newFixture(t, nil)
	if code, _ := f.do("POST", "/threads", map[string]any{"thread_id": "a"}); code != 200 {
		t.Fatalf("create thread a: %d", code)
	}
	tests := []struct{ name, method, path string }{
		{"create", "POST", "/threads"},
		{"run", "POST", "/threads/a%1Fsub:sub/runs/wait"},
		{"get", "GET", "/threads/a%1Fsub:sub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := f.do(tt.method, tt.path, map[string]any{"thread_id": "a\x1fsub:sub", "assistant_id": "agent", "input": map[string]any{}})
			if code != 422 && code != 404 {
				t.Fatalf("%s %s: %d %v, want 422 or 404", tt.method, tt.path, code, out)
			}
			if code == 422 {
				if m, _ := out.(map[string]any); m == nil || m["detail"] == nil {
					t.Errorf("%s %s: error body %v names nothing", tt.method, tt.path, out)
				}
			}
		})
	}
	infos, err := f.srv.cp.Threads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		t.Errorf("stored after refused requests: %q", in.ThreadID)
	}
}
