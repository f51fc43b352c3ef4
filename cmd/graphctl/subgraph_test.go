package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSubgraphRunShowResumeDelete runs examples/subgraph through the
// commands: the run stops at the interrupt inside the reviewer child,
// threads show and history show the child's state and checkpoints (a
// finished child's namespace is listed by threads show at the checkpoint
// its step started from), resume answers inside the child, and delete
// removes the child's checkpoints too.
func TestSubgraphRunShowResumeDelete(t *testing.T) {
	graph := filepath.Join(repoRoot(t), "examples", "subgraph", "research.cue")
	data := t.TempDir()
	out, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "r1", "--input", `{"topics": ["bees", "ants"]}`)
	if code != 0 || strings.Count(out, "? Approve this report?") != 1 {
		t.Fatalf("run: exit %d, want one question\n%s\n%s", code, out, errOut)
	}
	shown := showThread(t, data, "r1")
	if len(shown.Subgraphs) != 1 {
		t.Fatalf("subgraphs in JSON: %+v", shown.Subgraphs)
	}
	var review string
	for ns, sg := range shown.Subgraphs {
		review = ns
		if !strings.HasPrefix(ns, "review:") || strings.Contains(ns, "|") || sg.GraphName != "reviewer" || len(sg.Interrupts) != 1 {
			t.Errorf("subgraph %s in JSON: %+v", ns, sg)
		}
	}
	out, _, code = run(t, "threads", "show", "r1", "--data-dir", data)
	for _, want := range []string{
		"next        review",
		"field decision in subgraph " + review,
		"subgraph    " + review,
		"  thread      r1 [" + review + "]",
		"  graph       reviewer",
		`    report: "bees: 2 notes on bees; ants: 2 notes on ants"`,
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("threads show lacks %q:\n%s", want, out)
		}
	}
	// The researcher children finished: threads show at the checkpoint
	// their step started from lists them.
	out, _, code = run(t, "threads", "history", "r1", "--data-dir", data, "--json")
	var hist []struct {
		ID   string
		Next []struct{ Node string }
	}
	if err := json.Unmarshal([]byte(out), &hist); err != nil || code != 0 {
		t.Fatalf("threads history --json: %v\n%s", err, out)
	}
	var researched string
	for _, c := range hist {
		if len(c.Next) == 2 && c.Next[0].Node == "research" {
			researched = c.ID
		}
	}
	var ants string
	for ns, sg := range showThread(t, data, "r1", "--checkpoint", researched).Subgraphs {
		if strings.HasPrefix(ns, "research:") && string(sg.Values["question"]) == `"ants"` {
			ants = ns
		}
	}
	out, _, code = run(t, "threads", "history", "r1", "--ns", ants, "--data-dir", data)
	if ants == "" || code != 0 || !strings.Contains(out, "gather") || !strings.Contains(out, "summarize") {
		t.Errorf("history of the second researcher child %q: exit %d\n%s", ants, code, out)
	}
	out, _, code = run(t, "threads", "list", "--data-dir", data)
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "r1") {
		t.Errorf("threads list shows the subgraphs' checkpoints as threads:\n%s", out)
	}
	out, errOut, code = run(t, "resume", graph, "--data-dir", data, "--thread", "r1", "--value", "approve")
	if code != 0 || !strings.Contains(out, "Approved: bees: 2 notes on bees; ants: 2 notes on ants") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, _, code = run(t, "threads", "delete", "r1", "--data-dir", data); code != 0 {
		t.Fatalf("delete: exit %d", code)
	}
	for _, ns := range []string{review, ants} {
		if _, _, code = run(t, "threads", "show", "r1", "--ns", ns, "--data-dir", data); code != 1 {
			t.Errorf("the child %s's checkpoints outlived the thread (exit %d)", ns, code)
		}
	}
}

// shownThread is the output of threads show --json.
type shownThread struct {
	Next      []map[string]any
	Subgraphs map[string]struct {
		GraphName  string `json:"graph_name"`
		Interrupts []map[string]any
		Values     map[string]json.RawMessage
	}
}

// showThread runs threads show --json on a thread.
func showThread(t *testing.T, data, thread string, args ...string) shownThread {
	t.Helper()
	out, errOut, code := run(t, append([]string{"threads", "show", thread, "--data-dir", data, "--json"}, args...)...)
	var shown shownThread
	if err := json.Unmarshal([]byte(out), &shown); err != nil || code != 0 {
		t.Fatalf("threads show --json: exit %d: %v\n%s%s", code, err, out, errOut)
	}
	return shown
}

// TestSubgraphValidateDiagnostics checks validate's positions through the
// command: a bad mapping at the including file, an error inside the child
// at the child's file.
func TestSubgraphValidateDiagnostics(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("parent.cue", `dsl_version: "graphctl/v1"
name: "parent"
state: topic: {type: "string"}
start: "r"
nodes: r: {type: "subgraph", config: {graph: "agents/child.cue", input: {question: "topci"}}, next: "END"}
`)
	write("agents/child.cue", `dsl_version: "graphctl/v1"
name: "child"
state: question: {type: "string"}
start: "a"
nodes: a: {type: "set", config: set: question: "questoin + '?'", next: "END"}
`)
	out, errOut, code := run(t, "validate", filepath.Join(dir, "parent.cue"))
	all := strings.ReplaceAll(out+errOut, dir+string(filepath.Separator), "")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, all)
	}
	for _, want := range []string{
		`parent.cue:5:85: [unknown-name] expression "topci": unknown name "topci"`,
		`agents/child.cue:5:49: [unknown-name] expression "questoin + '?'"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("validate output lacks %q:\n%s", want, all)
		}
	}
}

// TestSubgraphKilledInsideChildResumes kills a graphctl process with
// SIGKILL while the second node of a subgraph runs, then resumes the
// thread in a new process: the child's first node, which had finished, is
// not run again, and the child's result reaches the parent.
func TestSubgraphKilledInsideChildResumes(t *testing.T) {
	dir := t.TempDir()
	sideFile := filepath.Join(dir, "side-effects.log")
	parent := filepath.Join(dir, "parent.cue")
	files := map[string]string{
		parent: `dsl_version: "graphctl/v1"
name: "parent"
state: log: {type: "list<string>", reducer: "append"}
start: "research"
nodes: research: {type: "subgraph", config: graph: "child.cue", next: "END"}
`,
		filepath.Join(dir, "child.cue"): fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "child"
state: log: {type: "list<string>", reducer: "append"}
start: "first"
nodes: {
	first:  {type: "crashtest_side_effect", config: {file: %[1]q, label: "first"}, next: "second"}
	second: {type: "crashtest_side_effect", config: {file: %[1]q, label: "second", sleep: "3s"}, next: "END"}
}
`, sideFile),
	}
	writeFiles(t, files)
	data := filepath.Join(dir, "data")
	// Runs write their checkpoints behind them (async durability): the
	// steps before a slow node are written within milliseconds of its start,
	// so the kill comes once second has run for a while.
	killWhen(t, testChild("run", parent, "--data-dir", data, "--thread", "t", "--input", "{}", "--json"), heldFor(300*time.Millisecond, func(out string) bool {
		b, _ := os.ReadFile(sideFile)
		return childNodeEnded(out, "research:", "first") && strings.Contains(string(b), "second start")
	}))

	out, err := testChild("resume", parent, "--data-dir", data, "--thread", "t", "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("resume failed: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(sideFile)
	log := string(b)
	if n := strings.Count(log, "first start"); n != 1 {
		t.Errorf("the child's first node ran %d times, want 1 (side effects:\n%s)", n, log)
	}
	if n := strings.Count(log, "second start"); n != 2 {
		t.Errorf("the child's second node started %d times, want 2: once killed, once resumed (side effects:\n%s)", n, log)
	}
	if !strings.Contains(string(out), `"status":"completed"`) || !strings.Contains(string(out), `"log":["first","second"]`) {
		t.Errorf("resume did not complete with the child's writes in the parent:\n%s", out)
	}
}

// childNodeEnded reports whether JSON Lines output has a node_end event of
// the node in a subgraph namespace that starts with prefix.
func childNodeEnded(out, prefix, nodeName string) bool {
	for _, line := range strings.Split(out, "\n") {
		var ev struct {
			Type      string
			Namespace string
			Payload   map[string]any
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "node_end" && strings.HasPrefix(ev.Namespace, prefix) && ev.Payload["node"] == nodeName {
			return true
		}
	}
	return false
}

// TestSubgraphStateAcrossRuns runs a graph twice on one thread through
// graphctl run; its subgraph's child appends each run's topic to a list.
// By default the second run's child starts afresh and sees only the second
// topic; with persist: true it goes on from the first run's state.
func TestSubgraphStateAcrossRuns(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		want         string
	}{
		{name: "default", want: `"b"`},
		{name: "persist", config: ", persist: true", want: `"a,b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			parent := filepath.Join(dir, "parent.cue")
			files := map[string]string{
				parent: fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "parent"
state: {
	topic:  {type: "string"}
	report: {type: "string"}
}
start: "research"
nodes: research: {type: "subgraph", config: {graph: "child.cue", input: topic: "topic", output: report: "join(seen, ',')"%s}, next: "END"}
`, tc.config),
				filepath.Join(dir, "child.cue"): `dsl_version: "graphctl/v1"
name: "child"
state: {
	topic: {type: "string"}
	seen:  {type: "list<string>", reducer: "append"}
}
start: "note"
nodes: note: {type: "set", config: set: seen: "[topic]", next: "END"}
`,
			}
			writeFiles(t, files)
			data := filepath.Join(dir, "data")
			for _, topic := range []string{"a", "b"} {
				if out, errOut, code := run(t, "run", parent, "--data-dir", data, "--thread", "t", "--input", `{"topic": "`+topic+`"}`); code != 0 {
					t.Fatalf("run %s: exit %d\n%s\n%s", topic, code, out, errOut)
				}
			}
			out, _, code := run(t, "threads", "show", "t", "--data-dir", data, "--json")
			var shown struct{ Values map[string]json.RawMessage }
			if err := json.Unmarshal([]byte(out), &shown); err != nil || code != 0 {
				t.Fatalf("threads show --json: exit %d: %v\n%s", code, err, out)
			}
			if got := string(shown.Values["report"]); got != tc.want {
				t.Errorf("report after two runs = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestSubgraphScriptedModelFollowsTheThread runs a graph whose subgraph
// answers with a scripted model, twice on one thread: each run's child
// starts afresh, yet takes the thread's next reply, not the first again.
func TestSubgraphScriptedModelFollowsTheThread(t *testing.T) {
	dir := t.TempDir()
	parent := filepath.Join(dir, "parent.cue")
	files := map[string]string{
		parent: `dsl_version: "graphctl/v1"
name: "parent"
state: messages: {type: "messages"}
start: "agent"
nodes: agent: {type: "subgraph", config: graph: "agent.cue", next: "END"}
`,
		filepath.Join(dir, "agent.cue"): `dsl_version: "graphctl/v1"
name: "agent"
defaults: llm: "script:replies.json"
state: messages: {type: "messages"}
start: "answer"
nodes: answer: {type: "llm", next: "END"}
`,
		filepath.Join(dir, "replies.json"): `["one", "two"]`,
	}
	writeFiles(t, files)
	data := filepath.Join(dir, "data")
	for _, want := range []string{"one", "two"} {
		out, errOut, code := run(t, "run", parent, "--data-dir", data, "--thread", "t", "-i", "hi")
		if code != 0 || strings.TrimSpace(out) != want {
			t.Fatalf("exit %d, reply %q, want %q\n%s", code, out, want, errOut)
		}
	}
}

// writeFiles writes files (path → content).
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for path, src := range files {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
