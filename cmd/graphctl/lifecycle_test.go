package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphctl/graphctl/runtime/node/lifecycletest"
)

// probedGraph runs a lifecycle probe, then waits for an answer.
const probedGraph = `dsl_version: "graphctl/v1"
name: "probed"
state: {messages: {type: "messages"}, approved: {type: "string"}}
start: "p"
nodes: {
	p: {type: %q, config: {probe: %q, fail_prepare: %v}, next: "ask"}
	ask: {type: "interrupt", config: {field: "approved", message: "Go on?"}, next: "END"}
}
`

const probedTest = `tests: [{
	name: "the probe runs, then the graph asks"
	turns: [{input: "hi", expect: path: ["p", "ask"]}]
}]
`

// graphctl run, resume and test prepare every node before the first step and
// close each node once when they end, also when a Prepare fails.
func TestCommandsPrepareAndCloseNodes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failPrepare bool
		// args follow the command name; GRAPH and DATA are replaced.
		commands [][]string
		wantCode int
		want     lifecycletest.Count
	}{
		{name: "run", commands: [][]string{{"run", "GRAPH", "--data-dir", "DATA", "--thread", "t", "-i", "hi"}},
			want: lifecycletest.Count{Prepares: 1, Closes: 1, Runs: 1}},
		{name: "run then resume", commands: [][]string{
			{"run", "GRAPH", "--data-dir", "DATA", "--thread", "t", "-i", "hi"},
			{"resume", "GRAPH", "--data-dir", "DATA", "--thread", "t", "--value", "yes"}},
			want: lifecycletest.Count{Prepares: 2, Closes: 2, Runs: 1}},
		{name: "run with a failing prepare", failPrepare: true, wantCode: 2,
			commands: [][]string{{"run", "GRAPH", "--data-dir", "DATA", "--thread", "t", "-i", "hi"}},
			want:     lifecycletest.Count{Prepares: 1, Closes: 1}},
		{name: "test", commands: [][]string{{"test", "GRAPH"}},
			want: lifecycletest.Count{Prepares: 1, Closes: 1, Runs: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			probe := filepath.Join(dir, "probe")
			graph := filepath.Join(dir, "probed.cue")
			if err := os.WriteFile(graph, fmt.Appendf(nil, probedGraph, lifecycletest.TypeName, probe, tc.failPrepare), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "probed_test.cue"), []byte(probedTest), 0o644); err != nil {
				t.Fatal(err)
			}
			for i, args := range tc.commands {
				args = append([]string(nil), args...)
				for j, a := range args {
					switch a {
					case "GRAPH":
						args[j] = graph
					case "DATA":
						args[j] = filepath.Join(dir, "data")
					}
				}
				out, errOut, code := run(t, args...)
				if want := map[bool]int{true: tc.wantCode}[i == len(tc.commands)-1]; code != want {
					t.Fatalf("%v: exit %d, want %d\n%s\n%s", args, code, want, out, errOut)
				}
			}
			if got := lifecycletest.Counts(probe); got != tc.want {
				t.Errorf("probe: %+v, want %+v", got, tc.want)
			}
		})
	}
}
