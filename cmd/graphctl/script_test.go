package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A graph naming script:FILE finds FILE beside itself, whatever the working
// directory, and each thread goes on through the script across runs (each
// `graphctl run` builds its model anew, as a new process does): turn 2 gets
// reply 2, and another thread starts again at reply 1.
func TestScriptedModelFollowsTheGraphAndTheThread(t *testing.T) {
	dir := t.TempDir()
	graph := filepath.Join(dir, "agent", "chat.cue")
	if err := os.MkdirAll(filepath.Dir(graph), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `dsl_version: "graphctl/v1"
name: "chat"
defaults: llm: "script:replies.json"
state: messages: {type: "messages"}
start: "answer"
nodes: answer: {type: "llm", next: "END"}
`
	if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	replies := `["Hello! What can I do?", "Paris is the capital of France.", "Goodbye."]`
	if err := os.WriteFile(filepath.Join(dir, "agent", "replies.json"), []byte(replies), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	for _, step := range []struct{ thread, input, want string }{
		{"t1", "hi", "Hello! What can I do?"},
		{"t1", "What is the capital of France?", "Paris is the capital of France."},
		{"t2", "hi", "Hello! What can I do?"},
		{"t1", "bye", "Goodbye."},
	} {
		out, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", step.thread, "-i", step.input)
		if code != 0 || strings.TrimSpace(out) != step.want {
			t.Fatalf("thread %s, %q: exit %d, reply %q, want %q\n%s", step.thread, step.input, code, out, step.want, errOut)
		}
	}
	_, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "t1", "-i", "again?")
	if code != 1 || !strings.Contains(errOut, "script exhausted after 3 replies") {
		t.Fatalf("a fourth turn: exit %d, %s", code, errOut)
	}
}
