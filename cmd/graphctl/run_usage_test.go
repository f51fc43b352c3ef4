package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunAdvisesHowToSendAMessage: a message written where run expects
// none (after the graph file, or as --input) gets the advice to use -i,
// with exit code 2, and runs nothing.
func TestRunAdvisesHowToSendAMessage(t *testing.T) {
	graph := filepath.Join(repoRoot(t), "graphs", "slot_filling.cue")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "words after the graph", args: []string{"run", graph, "my", "dishwasher", "leaks"},
			want: `to send "my dishwasher leaks" as a message, use -i "my dishwasher leaks"`},
		{name: "text as --input", args: []string{"run", graph, "--input", "hello"},
			want: `to send a message, use -i "hello"`},
		{name: "malformed JSON as --input", args: []string{"run", graph, "--input", `{"goal": }`},
			want: "--input must be a JSON object: "},
		{name: "no graph", args: []string{"run"}, want: "run needs a graph file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			out, errOut, code := run(t, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.want)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing run", out)
			}
		})
	}
}
