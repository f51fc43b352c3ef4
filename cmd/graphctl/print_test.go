package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime/event"
)

// A streamed reply prints inline, its line finished at the end of the
// message, whatever the model's tokens look like; two messages are two lines.
func TestRunPrintsStreamedTokensInline(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithReplies(
		llmtest.Text("Seventeen times twenty-three is 391."),
		llmtest.Text("Anything else?"),
	))
	t.Setenv("OPENAI_BASE_URL", srv.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	dir := t.TempDir()
	graph := filepath.Join(dir, "chat.cue")
	src := `dsl_version: "graphctl/v1"
name: "chat"
state: messages: {type: "messages"}
start: "answer"
nodes: {
	answer: {type: "llm", config: system: "Be brief.", next: "again"}
	again: {type: "llm", config: system: "Ask if there is more.", next: "END"}
}
`
	if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "run", graph, "--data-dir", filepath.Join(dir, "data"), "--thread", "c1", "--llm", "openai:test-model", "-i", "What is 17 times 23?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if len(srv.Tokens()) < 4 {
		t.Fatalf("the model sent %d tokens; the test needs a streamed reply", len(srv.Tokens()))
	}
	if want := "Seventeen times twenty-three is 391.\nAnything else?\n"; out != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	wantHint := `[thread c1; next turn: graphctl run ` + graph + ` --thread c1 -i "MESSAGE" --data-dir ` + filepath.Join(dir, "data") + ` --llm openai:test-model]`
	if !strings.Contains(errOut, wantHint) {
		t.Fatalf("stderr lacks %q:\n%s", wantHint, errOut)
	}
}

// On a terminal, each node's start is shown on stderr as "▸ node", after the
// line being streamed is finished.
func TestPrinterShowsNodeProgress(t *testing.T) {
	var out, errOut bytes.Buffer
	p := newPrinter(&out, &errOut, false)
	p.progress = true
	for _, ev := range []event.Event{
		{Type: event.NodeStart, Node: "answer"},
		{Type: event.Text, Payload: map[string]any{"content": "Hel", "delta": true}},
		{Type: event.Text, Payload: map[string]any{"content": "lo", "delta": true}},
		{Type: event.NodeStart, Node: "tools"},
		{Type: event.Text, Payload: map[string]any{"content": "done"}},
	} {
		p.event(ev)
	}
	if out.String() != "Hello\ndone\n" || errOut.String() != "▸ answer\n▸ tools\n" {
		t.Fatalf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}

// askGraph asks a yes/no question and counts; a "no" loops back to count
// again, until the recursion limit stops it.
const askGraph = `dsl_version: "graphctl/v1"
name: "ask"
state: {
	messages: {type: "messages"}
	answer: {type: "string", enum: ["yes", "no"]}
	n: {type: "int"}
}
start: "ask"
nodes: {
	ask: {type: "interrupt", config: {field: "answer", message: "Sure?"}, next: "count"}
	count: {type: "set", config: set: n: "n + 1", routes: [{when: "answer == 'no'", to: "count"}], default: "END"}
}
`

// writeAskGraph writes askGraph to ask.cue in dir and returns its path.
func writeAskGraph(t *testing.T, dir string) string {
	t.Helper()
	graph := filepath.Join(dir, "ask.cue")
	if err := os.WriteFile(graph, []byte(askGraph), 0o644); err != nil {
		t.Fatal(err)
	}
	return graph
}

// Each hint is the command that works from where the thread is: the real
// graph path and thread id, an answer for a waiting thread (with its allowed
// values), a resume only when there are nodes to run again, a new turn
// otherwise, and nothing to continue when nothing was saved.
func TestHintsAreCommandsThatWork(t *testing.T) {
	dir := t.TempDir()
	graph := writeAskGraph(t, dir)
	data := filepath.Join(dir, "data")
	resumeCmd := "graphctl resume " + graph + " --thread t1"
	steps := []struct {
		name string
		args []string
		code int
		hint string
	}{
		{"nothing saved", []string{"run", graph, "--thread", "t1", "--input", `{"n": "x"}`}, 2, ""},
		{"waits", []string{"run", graph, "--thread", "t1", "-i", "hi"}, 0,
			"[thread t1 waits for input: " + resumeCmd + " --value ANSWER --data-dir " + data + "  (ANSWER: one of yes, no)]"},
		{"bad answer", []string{"resume", graph, "--thread", "t1", "--value", "maybe"}, 1,
			"[thread t1 still waits for input: " + resumeCmd + " --value ANSWER --data-dir " + data + "  (ANSWER: one of yes, no)]"},
		// New input while waiting starts a new turn (as in LangGraph), which asks again.
		{"input while waiting", []string{"run", graph, "--thread", "t1", "-i", "again"}, 0,
			"[thread t1 waits for input: " + resumeCmd + " --value ANSWER"},
		{"loop stopped by the recursion limit", []string{"resume", graph, "--thread", "t1", "--value", "no", "--recursion-limit", "3"}, 1,
			"[thread t1 stopped; after fixing the cause, " + resumeCmd + " --data-dir " + data + " runs count again]"},
		{"completed", []string{"run", graph, "--thread", "t2", "-i", "hi"}, 0, ""},
		{"completed after the answer", []string{"resume", graph, "--thread", "t2", "--value", "yes"}, 0,
			"[thread t2; next turn: graphctl run " + graph + " --thread t2 -i \"MESSAGE\" --data-dir " + data + "]"},
		{"resume without an interrupt", []string{"resume", graph, "--thread", "t2", "--value", "yes"}, 1,
			"[thread t2 is as it was before this run; a new turn: graphctl run " + graph + " --thread t2 -i \"MESSAGE\" --data-dir " + data + "]"},
		// A debugging stop takes no answer: the hint resumes without --value.
		{"stopped before a node", []string{"run", graph, "--thread", "t3", "-i", "hi", "--interrupt-before", "ask"}, 0,
			"[thread t3 stopped before node ask: graphctl resume " + graph + " --thread t3 --data-dir " + data + " goes on]"},
		{"an answer to a debugging stop", []string{"resume", graph, "--thread", "t3", "--value", "yes"}, 2,
			`thread "t3" stopped before node ask for debugging, which takes no answer: resume it without --value`},
		{"going on from the stop", []string{"resume", graph, "--thread", "t3"}, 0,
			"[thread t3 waits for input: graphctl resume " + graph + " --thread t3 --value ANSWER"},
		{"an empty message", []string{"run", graph, "--thread", "t4", "-i", ""}, 2, "-i: the message is empty"},
		{"an empty input object", []string{"run", graph, "--thread", "t4", "--input", " "}, 2, "--input is empty"},
		// Without input and with stdin not a terminal (go test's is /dev/null), run does not start a chat.
		{"no input", []string{"run", graph, "--thread", "t4"}, 2, "no input: give -i TEXT or --input JSON"},
	}
	for _, s := range steps {
		_, errOut, code := run(t, append(s.args, "--data-dir", data)...)
		if code != s.code {
			t.Fatalf("%s: exit %d, want %d\n%s", s.name, code, s.code, errOut)
		}
		if s.hint != "" && !strings.Contains(errOut, s.hint) {
			t.Fatalf("%s: stderr lacks %q:\n%s", s.name, s.hint, errOut)
		}
		if strings.Contains(errOut, "GRAPH") {
			t.Fatalf("%s: a hint with a placeholder for the graph:\n%s", s.name, errOut)
		}
	}
}

// An interrupt on a field without an enum still says what the answer must be
// when the field's type allows only some words: true or false, a number.
func TestHintNamesTheAnswerOfTypedFields(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ typ, want string }{
		{"bool", "(ANSWER: true or false)"},
		{"int", "(ANSWER: a whole number)"},
		{"float", "(ANSWER: a number)"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			graph := filepath.Join(dir, tt.typ+".cue")
			src := `dsl_version: "graphctl/v1"
name: "ask"
state: {
	messages: {type: "messages"}
	answer: {type: "` + tt.typ + `"}
}
start: "ask"
nodes: ask: {type: "interrupt", config: {field: "answer", message: "Sure?"}, next: "END"}
`
			if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := run(t, "run", graph, "--thread", "t1", "-i", "hi", "--data-dir", filepath.Join(dir, tt.typ))
			if code != 0 || !strings.Contains(errOut, "--value ANSWER --data-dir") || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, want a hint with %q:\n%s", code, tt.want, errOut)
			}
		})
	}
}
