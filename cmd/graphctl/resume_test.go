package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestResumeAndRunRefuseBadRequests(t *testing.T) {
	graph := filepath.Join(repoRoot(t), "examples/triage/triage.cue")
	data := t.TempDir()
	if out, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "t1", "-i", "I want a refund for my invoice"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"resume of a thread that does not exist", []string{"resume", graph, "--data-dir", data, "--thread", "nope", "--value", "yes"}, 1, `no thread "nope"`},
		{"malformed JSON object", []string{"resume", graph, "--data-dir", data, "--thread", "t1", "--value", `{"approved": yes}`}, 2, "--value is not valid JSON"},
		{"malformed JSON list", []string{"resume", graph, "--data-dir", data, "--thread", "t1", "--value", `[1, 2`}, 2, "--value is not valid JSON"},
		{"unterminated JSON string", []string{"resume", graph, "--data-dir", data, "--thread", "t1", "--value", `"yes`}, 2, "--value is not valid JSON"},
		{"negative recursion limit on run", []string{"run", graph, "--data-dir", data, "--thread", "t2", "-i", "hi", "--recursion-limit", "-1"}, 2, "--recursion-limit must be positive"},
		{"negative recursion limit on resume", []string{"resume", graph, "--data-dir", data, "--thread", "t1", "--recursion-limit", "-3"}, 2, "--recursion-limit must be positive"},
		{"unknown interrupt-before node", []string{"run", graph, "--data-dir", data, "--thread", "t2", "-i", "hi", "--interrupt-before", "nosuch"}, 2, `--interrupt-before "nosuch": graph "triage" has no such node`},
		{"unknown interrupt-after node", []string{"resume", graph, "--data-dir", data, "--thread", "t1", "--interrupt-after", "nosuch"}, 2, `--interrupt-after "nosuch"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.code || !strings.Contains(out+errOut, tt.contains) {
				t.Fatalf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", code, tt.code, tt.contains, out, errOut)
			}
		})
	}
	// None of them created the thread or answered the interrupt.
	out, _, _ := run(t, "threads", "list", "--data-dir", data)
	if strings.Contains(out, "nope") || strings.Contains(out, "t2") {
		t.Errorf("a refused request created a thread:\n%s", out)
	}
	// A bare word is still an answer.
	if out, errOut, code := run(t, "resume", graph, "--data-dir", data, "--thread", "t1", "--value", "yes", "--json"); code != 0 || !strings.Contains(out, `"approved":"yes"`) {
		t.Fatalf("resume with a bare word: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestDurabilityFlag(t *testing.T) {
	graph := filepath.Join(repoRoot(t), "examples/triage/triage.cue")
	data := t.TempDir()
	if out, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "f", "--durability", "fsync", "-i", "I want a refund for my invoice"); code != 0 || !strings.Contains(errOut, "waits for input") {
		t.Fatalf("run --durability fsync: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "resume", graph, "--data-dir", data, "--thread", "f", "--durability", "batch", "--value", "yes", "--json"); code != 0 || !strings.Contains(out, `"status":"completed"`) {
		t.Fatalf("resume --durability batch: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := run(t, "run", graph, "--data-dir", data, "--durability", "sometimes", "-i", "hi"); code != 2 || !strings.Contains(errOut, `durability "sometimes"`) {
		t.Fatalf("unknown mode: exit %d: %s", code, errOut)
	}
}

// With parallel interrupts pending, --interrupt takes the node's name as well
// as the interrupt's id, as a test case's interrupt key does.
func TestResumeNamesAnInterruptByItsNode(t *testing.T) {
	dir := t.TempDir()
	graph := filepath.Join(dir, "two.cue")
	src := `dsl_version: "graphctl/v1"
name: "two"
state: {messages: {type: "messages"}, a: {type: "string"}, b: {type: "string"}}
start: "split"
nodes: {
	split: {type: "route", next: ["qa", "qb"]}
	qa: {type: "interrupt", config: {field: "a", message: "A?"}, next: "done"}
	qb: {type: "interrupt", config: {field: "b", message: "B?"}, next: "done"}
	done: {type: "reply", wait_for: ["qa", "qb"], config: text: "${a} and ${b}", next: "END"}
}
`
	if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	steps := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"run", graph, "--thread", "t", "-i", "go"}, 0, "? B?"},
		{[]string{"resume", graph, "--thread", "t", "--interrupt", "nosuch", "--value", "x"}, 1, `no pending interrupt "nosuch"`},
		{[]string{"resume", graph, "--thread", "t", "--interrupt", "qb", "--value", "second"}, 0, "? A?"},
		{[]string{"resume", graph, "--thread", "t", "--interrupt", "qa", "--value", "first"}, 0, "first and second"},
	}
	for _, s := range steps {
		out, errOut, code := run(t, append(s.args, "--data-dir", data)...)
		if code != s.code || !strings.Contains(out+errOut, s.contains) {
			t.Fatalf("%v: exit %d, want %d with %q\nstdout: %s\nstderr: %s", s.args, code, s.code, s.contains, out, errOut)
		}
	}
}

// A breakpoint stops the run with no interrupt: --json prints no interrupt
// event, and the done line says where the run stopped; resume without
// --value goes on to the node, whose own question is then the interrupt.
func TestBreakpointInJSON(t *testing.T) {
	dir := t.TempDir()
	graph := writeAskGraph(t, dir)
	data := filepath.Join(dir, "data")
	lastLine := func(args ...string) (types []string, done map[string]any) {
		t.Helper()
		out, errOut, code := run(t, append(args, "--data-dir", data, "--json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var ev struct {
				Type    string         `json:"type"`
				Payload map[string]any `json:"payload"`
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("%v: a line that is no event: %q", args, line)
			}
			types, done = append(types, ev.Type), ev.Payload
		}
		return types, done
	}
	types, done := lastLine("run", graph, "--thread", "b", "-i", "hi", "--interrupt-before", "ask")
	b, _ := json.Marshal(done["breakpoint"])
	if slices.Contains(types, "interrupt") || done["status"] != "interrupted" || string(b) != `{"nodes":["ask"],"when":"before"}` || done["interrupts"] != nil {
		t.Fatalf("stop: events %v, done %v", types, done)
	}
	types, done = lastLine("resume", graph, "--thread", "b")
	if !slices.Contains(types, "interrupt") || done["status"] != "interrupted" || done["breakpoint"] != nil || len(done["interrupts"].([]any)) != 1 {
		t.Fatalf("going on: events %v, done %v", types, done)
	}
}
