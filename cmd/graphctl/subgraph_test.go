package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubgraphRunShowResumeDelete runs examples/subgraph through the
// commands: the run stops at the interrupt inside the reviewer child,
// threads show and history show the child's state and checkpoints, resume
// answers inside the child, and delete removes the child's checkpoints too.
func TestSubgraphRunShowResumeDelete(t *testing.T) {
	graph := filepath.Join(repoRoot(t), "examples", "subgraph", "research.cue")
	data := t.TempDir()
	out, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "r1", "--input", `{"topics": ["bees", "ants"]}`)
	if code != 0 || strings.Count(out, "? Approve this report?") != 1 {
		t.Fatalf("run: exit %d, want one question\n%s\n%s", code, out, errOut)
	}
	out, _, code = run(t, "threads", "show", "r1", "--data-dir", data)
	for _, want := range []string{
		"next        review",
		"field decision in subgraph review:review",
		"subgraph    review:review",
		"  thread      r1 [review:review]",
		"  graph       reviewer",
		`    report: "bees: 2 notes on bees; ants: 2 notes on ants"`,
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("threads show lacks %q:\n%s", want, out)
		}
	}
	out, _, code = run(t, "threads", "show", "r1", "--data-dir", data, "--json")
	var shown struct {
		Next      []map[string]any
		Subgraphs map[string]struct {
			GraphName  string `json:"graph_name"`
			Interrupts []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || code != 0 {
		t.Fatalf("threads show --json: %v\n%s", err, out)
	}
	if sg := shown.Subgraphs["review:review"]; sg.GraphName != "reviewer" || len(sg.Interrupts) != 1 {
		t.Errorf("subgraphs in JSON: %+v", shown.Subgraphs)
	}
	out, _, code = run(t, "threads", "history", "r1", "--ns", "research:research#0001", "--data-dir", data)
	if code != 0 || !strings.Contains(out, "gather") || !strings.Contains(out, "summarize") {
		t.Errorf("history of the second researcher child: exit %d\n%s", code, out)
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
	if _, _, code = run(t, "threads", "show", "r1", "--ns", "review:review", "--data-dir", data); code != 1 {
		t.Errorf("the child's checkpoints outlived the thread (exit %d)", code)
	}
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
	for path, src := range files {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	killWhen(t, testChild("run", parent, "--data-dir", data, "--thread", "t", "--input", "{}", "--json"), func(out string) bool {
		b, _ := os.ReadFile(sideFile)
		return childNodeEnded(out, "research:research", "first") && strings.Contains(string(b), "second start")
	})

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
// the node in the subgraph namespace ns.
func childNodeEnded(out, ns, nodeName string) bool {
	for _, line := range strings.Split(out, "\n") {
		var ev struct {
			Type      string
			Namespace string
			Payload   map[string]any
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "node_end" && ev.Namespace == ns && ev.Payload["node"] == nodeName {
			return true
		}
	}
	return false
}
