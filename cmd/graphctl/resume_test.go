package main

import (
	"path/filepath"
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
