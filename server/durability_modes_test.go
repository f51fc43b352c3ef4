package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRunDurabilityOverHTTP: a run's durability (and checkpoint_during
// false) decides what of its thread is written while its slow node runs;
// once it ends, every mode has written the same checkpoints.
func TestRunDurabilityOverHTTP(t *testing.T) {
	f := newFixture(t, nil)
	gate := os.Getenv(gateEnv)
	tests := []struct {
		name    string
		options map[string]any
		// during is how many checkpoints the thread has while the node
		// runs: -1 for "some, soon".
		during int
	}{
		{"sync", map[string]any{"durability": "sync"}, 2}, // the input and start checkpoints
		{"async", map[string]any{"durability": "async"}, -1},
		{"default", map[string]any{}, -1},
		{"exit", map[string]any{"durability": "exit"}, 0},
		{"checkpoint_during false", map[string]any{"checkpoint_during": false}, 0},
	}
	var final []int
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thread := "durability-" + filepath.Base(t.Name())
			f.do("POST", "/threads", map[string]any{"thread_id": thread})
			body := map[string]any{"assistant_id": "slow", "input": map[string]any{}}
			for k, v := range tt.options {
				body[k] = v
			}
			code, run := f.do("POST", "/threads/"+thread+"/runs", body)
			if code != 200 {
				t.Fatalf("create run: %d %v", code, run)
			}
			runID := field(run, "run_id").(string)
			waitFile(t, filepath.Join(gate, thread+".started"))
			history := func() int {
				code, list := f.do("GET", "/threads/"+thread+"/history", nil)
				if code != 200 {
					t.Fatalf("history: %d %v", code, list)
				}
				l, _ := list.([]any)
				return len(l)
			}
			switch tt.during {
			case -1:
				deadline := time.Now().Add(10 * time.Second)
				for history() == 0 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if history() == 0 {
					t.Error("no checkpoint was written while the node ran")
				}
			case 0:
				time.Sleep(50 * time.Millisecond) // time for a wrong write to land
				if n := history(); n != 0 {
					t.Errorf("%d checkpoints written while the node ran, want none before the run ends", n)
				}
			default:
				if n := history(); n != tt.during {
					t.Errorf("%d checkpoints written when the node started, want %d", n, tt.during)
				}
			}
			os.WriteFile(filepath.Join(gate, thread+".release"), nil, 0o644)
			if code, out := f.do("GET", "/threads/"+thread+"/runs/"+runID+"/join", nil); code != 200 {
				t.Fatalf("join: %d %v", code, out)
			}
			final = append(final, history())
		})
	}
	for i, n := range final {
		if n != final[0] || n < 3 {
			t.Errorf("checkpoints after the runs: %v (run %d), want the same in every mode, at least 3", final, i)
		}
	}
	if code, out := f.do("POST", "/threads/durability-x/runs/wait", map[string]any{"assistant_id": "echo", "durability": "eventually", "if_not_exists": "create"}); code != 422 {
		t.Errorf("durability eventually: %d %v, want 422", code, out)
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDurabilityWithTheJSClient runs .ci/langgraph-sdk/durability.mjs:
// runs.wait and runs.stream in every durability mode through the official
// client.
func TestDurabilityWithTheJSClient(t *testing.T) {
	sdk := requireJSClient(t)
	f := newFixture(t, nil)
	sdk.run(t, "durability.mjs", f.http.URL)
}
