package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestThreadsPruneSubgraphs runs examples/subgraph to its interrupt inside
// the reviewer child, after two researcher children finished, then prunes
// the thread: without --graph every namespace keeps its newest checkpoint;
// with the graph, the finished researchers' namespaces are deleted and the
// reviewer's, which the thread goes on in, is kept, so that resume still
// answers there. A graph file of another graph is refused.
func TestThreadsPruneSubgraphs(t *testing.T) {
	root := repoRoot(t)
	graph := filepath.Join(root, "examples", "subgraph", "research.cue")
	data := t.TempDir()
	out, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "r1", "--input", `{"topics": ["bees", "ants"]}`)
	if code != 0 || strings.Count(out, "? Approve this report?") != 1 {
		t.Fatalf("run: exit %d, want one question\n%s\n%s", code, out, errOut)
	}
	var review string
	for ns := range showThread(t, data, "r1").Subgraphs {
		review = ns
	}
	// The researchers' namespaces, listed at the checkpoint their step
	// started from.
	out, _, code = run(t, "threads", "history", "r1", "--data-dir", data, "--json")
	var hist []struct {
		ID   string
		Next []struct{ Node string }
	}
	if err := json.Unmarshal([]byte(out), &hist); err != nil || code != 0 {
		t.Fatalf("threads history --json: %v\n%s", err, out)
	}
	var researchers []string
	for _, c := range hist {
		if len(c.Next) == 2 && c.Next[0].Node == "research" {
			for ns := range showThread(t, data, "r1", "--checkpoint", c.ID).Subgraphs {
				researchers = append(researchers, ns)
			}
		}
	}
	if review == "" || len(researchers) != 2 {
		t.Fatalf("namespaces: review %q, researchers %q", review, researchers)
	}
	checkpoints := func(ns string) int {
		t.Helper()
		out, _, code := run(t, "threads", "history", "r1", "--ns", ns, "--data-dir", data, "--json")
		if code != 0 {
			return 0
		}
		var list []json.RawMessage
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("history of %s: %v\n%s", ns, err, out)
		}
		return len(list)
	}
	if n := checkpoints(review); n < 2 {
		t.Fatalf("the reviewer has %d checkpoints before the prune, want more than 1", n)
	}

	tests := []struct {
		name      string
		args      []string
		code      int
		out       string
		kept      []string
		deleted   []string
		afterward int // checkpoints of each kept namespace
	}{
		{"another graph", []string{"--graph", filepath.Join(root, "examples", "subgraph", "agents", "reviewer.cue")}, 2, "",
			append([]string{review}, researchers...), nil, 0},
		{"without the graph", nil, 0, "subgraph namespaces: 3 kept, 0 deleted",
			append([]string{review}, researchers...), nil, 1},
		{"with the graph", []string{"--graph", graph}, 0, "subgraph namespaces: 1 kept, 2 deleted",
			[]string{review}, researchers, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, append([]string{"threads", "prune", "r1", "--keep", "1", "--data-dir", data}, tt.args...)...)
			if code != tt.code || !strings.Contains(out, tt.out) {
				t.Fatalf("prune: exit %d, want %d with %q\n%s%s", code, tt.code, tt.out, out, errOut)
			}
			for _, ns := range tt.kept {
				if n := checkpoints(ns); n == 0 || (tt.afterward > 0 && n != tt.afterward) {
					t.Errorf("namespace %s has %d checkpoints, want %d", ns, n, tt.afterward)
				}
			}
			for _, ns := range tt.deleted {
				if n := checkpoints(ns); n != 0 {
					t.Errorf("namespace %s has %d checkpoints, want it deleted", ns, n)
				}
			}
		})
	}
	out, errOut, code = run(t, "resume", graph, "--data-dir", data, "--thread", "r1", "--value", "approve")
	if code != 0 || !strings.Contains(out, "Approved: bees: 2 notes on bees; ants: 2 notes on ants") {
		t.Fatalf("resume after the prune: exit %d\n%s\n%s", code, out, errOut)
	}
}
