package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Lines piped to `graphctl run` are a chat on one thread, as typed at a
// terminal: one turn per line, the line after a question answers it, and
// the exit code says whether a turn failed.
func TestRunReadsTurnsFromStdin(t *testing.T) {
	dir := t.TempDir()
	graph := writeAskGraph(t, dir)
	slotFilling := filepath.Join(repoRoot(t), "graphs", "slot_filling.cue")
	cases := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		stdout     []string
		stderr     []string
		notStderr  []string
		wantThread string
	}{
		{name: "two turns of the slot-filling graph on one thread",
			stdin: "My dishwasher WDT780SAEM1 is leaking\n\nI want to fix it\n", args: []string{"run", slotFilling, "--thread", "s1"},
			stdout: []string{"What would you like to do?", "[TOOL USED: diagnose_repair]"},
			stderr: []string{"> My dishwasher WDT780SAEM1 is leaking\n", "> I want to fix it\n"}, notStderr: []string{"type a message"}},
		{name: "the line after a question answers it",
			stdin: "hi\nyes\n", args: []string{"run", graph, "--thread", "a1"},
			stdout: []string{"? Sure?"}, stderr: []string{"> hi\n", "> yes\n"}},
		{name: "a turn that fails makes the exit code 1",
			stdin: "hi\nno\n", args: []string{"run", graph, "--thread", "a2", "--recursion-limit", "3"}, code: 1,
			stderr: []string{"> no\n"}},
		{name: "an empty stdin is no input",
			stdin: "", args: []string{"run", graph, "--thread", "a3"}, code: 2,
			stderr: []string{"no input: give -i TEXT or --input JSON, lines on stdin"}},
		{name: "blank lines only are no input",
			stdin: "\n  \n", args: []string{"run", graph, "--thread", "a4"}, code: 2,
			stderr: []string{"no input"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runWithStdin(t, c.stdin, append(c.args, "--data-dir", filepath.Join(dir, "data"))...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			for _, w := range c.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, w := range c.notStderr {
				if strings.Contains(errOut, w) {
					t.Errorf("stderr has %q:\n%s", w, errOut)
				}
			}
		})
	}
	// The answered question finished the thread: count ran once.
	out, errOut, code := run(t, "threads", "show", "a1", "--json", "--data-dir", filepath.Join(dir, "data"))
	if code != 0 || !strings.Contains(out, `"n": 1`) {
		t.Fatalf("thread a1: exit %d\n%s\n%s", code, out, errOut)
	}
}
