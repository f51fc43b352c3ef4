package server

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestInputShowsWhileTheFirstNodeRuns: as in LangGraph, a turn's start
// checkpoint (step 0, the input applied, the first node next) is written
// before the first node runs, so that while a slow first node runs the
// thread's state over HTTP shows the message just sent; a run cancelled
// then leaves it there, and a run with no input goes on from there,
// running the first node with the message once.
func TestInputShowsWhileTheFirstNodeRuns(t *testing.T) {
	f := newFixture(t, nil)
	gate := os.Getenv(gateEnv)
	tests := []struct {
		name       string
		durability string
	}{
		{"async", "async"},
		{"sync", "sync"},
		{"exit", "exit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thread := "first-node-" + tt.name
			if code, out := f.do("POST", "/threads", map[string]any{"thread_id": thread}); code != 200 {
				t.Fatalf("create thread: %d %v", code, out)
			}
			input := map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hello", "id": "h1"}}}
			code, run := f.do("POST", "/threads/"+thread+"/runs", map[string]any{"assistant_id": "slow", "input": input, "durability": tt.durability})
			if code != 200 {
				t.Fatalf("create run: %d %v", code, run)
			}
			runID := field(run, "run_id").(string)
			waitFile(t, filepath.Join(gate, thread+".started"))
			state := func() (next []any, messages []any, source string) {
				code, st := f.do("GET", "/threads/"+thread+"/state", nil)
				if code != 200 {
					t.Fatalf("state: %d %v", code, st)
				}
				next, _ = field(st, "next").([]any)
				messages, _ = field(st, "values", "messages").([]any)
				source, _ = field(st, "metadata", "source").(string)
				return next, messages, source
			}
			showsInput := func() bool {
				next, messages, source := state()
				return slices.Equal(next, []any{"work"}) && len(messages) == 1 && field(messages[0], "id") == "h1" && source == "loop"
			}
			if tt.durability != "exit" {
				// Written behind the run (async) within moments of the node's start.
				deadline := time.Now().Add(10 * time.Second)
				for !showsInput() && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if !showsInput() {
					next, messages, source := state()
					t.Fatalf("while the first node runs: next %v, messages %v, source %q; want the message sent, work next", next, messages, source)
				}
			}
			if code, out := f.do("POST", "/threads/"+thread+"/runs/"+runID+"/cancel?wait=1", nil); code != 204 {
				t.Fatalf("cancel: %d %v", code, out)
			}
			if !showsInput() {
				next, messages, source := state()
				t.Fatalf("after the cancel: next %v, messages %v, source %q; want the message sent, work next", next, messages, source)
			}
			os.WriteFile(filepath.Join(gate, thread+".release"), nil, 0o644)
			code, values := f.do("POST", "/threads/"+thread+"/runs/wait", map[string]any{"assistant_id": "slow", "input": nil})
			if code != 200 {
				t.Fatalf("run on: %d %v", code, values)
			}
			messages, _ := field(values, "messages").([]any)
			var contents []any
			for _, m := range messages {
				contents = append(contents, field(m, "content"))
			}
			if !slices.Equal(contents, []any{"hello", "Finished."}) || !slices.Equal(field(values, "log").([]any), []any{"work"}) {
				t.Errorf("after going on: messages %v, log %v; want hello once, the reply, work once", contents, field(values, "log"))
			}
		})
	}
}

// TestInputShowsWhileTheFirstNodeRunsWithTheJSClient runs
// .ci/langgraph-sdk/startcheckpoint.mjs: runs.stream on a thread whose
// first node is slow, getState meanwhile, runs.cancel, then getState and
// getHistory, through the official client.
func TestInputShowsWhileTheFirstNodeRunsWithTheJSClient(t *testing.T) {
	sdk := requireJSClient(t)
	f := newFixture(t, nil)
	sdk.run(t, "startcheckpoint.mjs", f.http.URL)
}
