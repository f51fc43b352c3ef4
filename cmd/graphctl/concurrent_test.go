package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateConcurrentWritesAndRun checks both guards against two values
// for a replace field in one step: validate reports parallel writers it can
// see at the second writer, and a run whose writers meet through a route
// (which validate cannot prove) stops with an error naming the field and
// both nodes, leaving the thread resumable at its last checkpoint once the
// field has a reducer that takes both writes.
func TestValidateConcurrentWritesAndRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const graph = `dsl_version: "graphctl/v1"
name:        "writers"
state: {
	messages: {type: "messages"}
	answer: {type: "string"}
}
start: "split"
nodes: {
	split: {type: "route", %s}
	a: {type: "set", config: set: answer: "'from a'", next: "END"}
	b: {type: "set", config: set: answer: "'from b'", next: "END"}
}
`
	fanOut := fmt.Sprintf(graph, `next: ["a", "b"]`)
	parallel := write("parallel.cue", fanOut)
	line, col := position(fanOut, `"'from b'"`)
	out, errOut, code := run(t, "validate", parallel)
	want := fmt.Sprintf(`%s:%d:%d: [concurrent-write] nodes "a" and "b" both write field "answer" in the same step ("split" fans out to "a" and "b")`, parallel, line, col+1)
	if code != 1 || !strings.Contains(out+errOut, want) || !strings.Contains(out+errOut, `give "answer" a reducer`) {
		t.Fatalf("validate: exit %d, want 1 and %s\n%s%s", code, want, out, errOut)
	}

	// The route's default runs beside the next edge only when no route
	// matches: validate cannot prove it, the run finds it.
	routed := write("routed.cue", fmt.Sprintf(graph, `next: "a", routes: [{when: "len(messages) > 5", to: "END"}], default: "b"`))
	if out, errOut, code := run(t, "validate", routed); code != 0 {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}
	data := t.TempDir()
	_, errOut, code = run(t, "run", routed, "--data-dir", data, "--thread", "t1", "-i", "hi")
	if code != 1 || !strings.Contains(errOut, `field "answer" (reducer replace) was written by both "a" and "b" in the same step`) ||
		!strings.Contains(errOut, "runs a, b again") {
		t.Fatalf("run: exit %d, want 1 and the conflict\n%s", code, errOut)
	}
	out, _, code = run(t, "threads", "show", "t1", "--data-dir", data)
	if code != 0 || !strings.Contains(out, "next        a, b") || strings.Contains(out, "from a") || strings.Contains(out, "from b") {
		t.Fatalf("threads show: exit %d, want the checkpoint before the step, with a and b next\n%s", code, out)
	}
	src, err := os.ReadFile(routed)
	if err != nil {
		t.Fatal(err)
	}
	write("routed.cue", strings.Replace(string(src), `answer: {type: "string"}`, `answer: {type: "string", reducer: "keep"}`, 1))
	if out, errOut, code := run(t, "resume", routed, "--data-dir", data, "--thread", "t1"); code != 0 {
		t.Fatalf("resume after the fix: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = run(t, "threads", "show", "t1", "--data-dir", data)
	if !strings.Contains(out, `answer: "from a"`) {
		t.Fatalf("after resume, want the first writer's value kept:\n%s", out)
	}
}
