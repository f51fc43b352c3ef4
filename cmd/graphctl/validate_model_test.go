package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateChecksModelSpecs: a node's model naming a provider graphctl
// does not have, a script:FILE that is missing or malformed, and a
// defaults.llm with an unknown provider fail validate at their place,
// instead of failing the first run that calls the model.
func TestValidateChecksModelSpecs(t *testing.T) {
	graph := func(defaults, model string) string {
		return `dsl_version: "graphctl/v1"
name: "ask"
defaults: {` + defaults + `}
state: messages: {type: "messages"}
start: "ask"
nodes: ask: {type: "llm", config: {` + model + `}, next: "END"}
`
	}
	tests := []struct {
		name, src, replies string
		want               []string // in the output; empty: valid
	}{
		{name: "misspelt provider", src: graph("", `model: "opnai:gpt-4o"`),
			want: []string{"g.cue:6:", `unknown provider "opnai"; did you mean "openai"?`}},
		{name: "missing script file", src: graph("", `model: "script:replies.json"`),
			want: []string{"g.cue:6:", "replies.json", "no such file"}},
		{name: "malformed script reply", src: graph("", `model: "script:replies.json"`), replies: `[{"content": 3}]`,
			want: []string{"g.cue:6:", "scripted reply 1: content must be a string, got number"}},
		{name: "script file beside the graph", src: graph("", `model: "script:replies.json"`), replies: `["Hello."]`},
		{name: "defaults.llm with an unknown provider", src: graph(`llm: "gemini:gemini-2.0-flash"`, ""),
			want: []string{"g.cue:3:", "defaults.llm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "g.cue")
			if err := os.WriteFile(file, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.replies != "" {
				if err := os.WriteFile(filepath.Join(dir, "replies.json"), []byte(tt.replies), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(t.TempDir()) // the script file is found beside the graph, not in the working directory
			out, errOut, code := run(t, "validate", file)
			all := out + errOut
			if len(tt.want) == 0 {
				if code != 0 {
					t.Fatalf("exit %d: %s; want the graph valid", code, all)
				}
				return
			}
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("output %q does not say %q", all, w)
				}
			}
		})
	}
}
