package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `run --input` and `resume --value` cannot write a value outside a field's
// enum; the error names the field and its allowed values, and a thread whose
// answer was refused still waits for a good one.
func TestRunAndResumeCheckEnum(t *testing.T) {
	dir := t.TempDir()
	graph := filepath.Join(dir, "pick.cue")
	src := `dsl_version: "graphctl/v1"
name: "pick"
state: {
	messages: {type: "messages"}
	color: {type: "string", enum: ["red", "blue"]}
	answer: {type: "string", enum: ["yes", "no"]}
}
start: "ask"
nodes: {
	ask: {type: "interrupt", config: {field: "answer", message: "Sure?"}, next: "done"}
	done: {type: "reply", config: text: "You said ${answer}.", next: "END"}
}
`
	if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	_, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "t", "--input", `{"color": "green"}`)
	if code != 2 || !strings.Contains(errOut, `--input: state field "color": "green" is not one of the allowed values "red", "blue"`) {
		t.Fatalf("run with a bad enum value: exit %d, stderr %s", code, errOut)
	}
	if _, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "t", "--input", `{"color": "red"}`); code != 0 {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	_, errOut, code = run(t, "resume", graph, "--data-dir", data, "--thread", "t", "--value", "maybe")
	if code != 1 || !strings.Contains(errOut, `state field "answer": "maybe" is not one of the allowed values "yes", "no"`) {
		t.Fatalf("resume with a bad answer: exit %d, stderr %s", code, errOut)
	}
	out, errOut, code := run(t, "resume", graph, "--data-dir", data, "--thread", "t", "--value", "no")
	if code != 0 || !strings.Contains(out, "You said no.") {
		t.Fatalf("resume with a good answer: exit %d\n%s\n%s", code, out, errOut)
	}
}
