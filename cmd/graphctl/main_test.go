package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/node"
)

// The test binary doubles as a graphctl with one extra node type, for tests
// that need a separate process (killing it mid-step).
func TestMain(m *testing.M) {
	if os.Getenv("GRAPHCTL_TEST_CHILD") == "1" {
		node.MustRegister(sideEffectType)
		os.Exit(execute(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// sideEffectType appends a line to a file when it starts and when it ends,
// sleeping in between, so a test can count executions across processes.
var sideEffectType = node.Type{
	Name:        "crashtest_side_effect",
	Description: "appends to a file, sleeps, appends again (tests only)",
	Config:      `{file: string, label: string, sleep: *"0s" | string}`,
	New: func(b node.Builder) (node.Node, error) {
		var cfg struct {
			File, Label, Sleep string
		}
		if err := b.Decode(&cfg); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(cfg.Sleep)
		if err != nil {
			return nil, err
		}
		return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
			appendLine(cfg.File, cfg.Label+" start")
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			appendLine(cfg.File, cfg.Label+" end")
			return node.Update{"log": []any{cfg.Label}}, nil
		}), nil
	},
}

func appendLine(file, line string) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
	f.Sync()
}

// run executes graphctl in-process, with an empty stdin, and returns
// stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runWithStdin(t, "", args...)
}

// runWithStdin executes graphctl in-process with stdin holding input and
// returns stdout, stderr and the exit code.
func runWithStdin(t *testing.T, input string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetIn(strings.NewReader(input))
	code := 0
	if err := root.Execute(); err != nil {
		code = exitCode(err)
		if code != 1 || err.Error() != "" {
			stderr.WriteString(err.Error())
		}
	}
	return stdout.String(), stderr.String(), code
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestValidateExitCodesAndPositions(t *testing.T) {
	root := repoRoot(t)
	good := filepath.Join(root, "examples/triage/triage.cue")
	src, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.cue")
	// One mistake: a route to a node that does not exist.
	bad := strings.Replace(string(src), `to: "track"}`, `to: "trak"}`, 1)
	if err := os.WriteFile(broken, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	line, col := position(bad, `"trak"`)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"valid examples", []string{"validate", filepath.Join(root, "examples")}, 0, ""},
		{"one mistake", []string{"validate", broken}, 1, fmt.Sprintf("%s:%d:%d: [unknown-target]", broken, line, col+1)},
		{"json", []string{"validate", "--json", broken}, 1, `"code": "unknown-target"`},
		{"missing path", []string{"validate", filepath.Join(dir, "nope.cue")}, 2, "nope.cue"},
		{"no args", []string{"validate"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tt.contains) {
				t.Fatalf("output lacks %q:\n%s%s", tt.contains, out, errOut)
			}
		})
	}
}

// position returns the 1-based line and column of the first occurrence of s.
func position(src, s string) (int, int) {
	i := strings.Index(src, s)
	line := strings.Count(src[:i], "\n") + 1
	col := i - strings.LastIndex(src[:i], "\n")
	return line, col
}

func TestSchemaAndNodes(t *testing.T) {
	out, _, code := run(t, "schema", "--format", "jsonschema")
	var schema map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &schema) != nil || schema["$schema"] == nil {
		t.Fatalf("jsonschema: exit %d, output %.200s", code, out)
	}
	out, _, code = run(t, "schema", "--format", "cue")
	if code != 0 || !strings.Contains(out, "#Graph") {
		t.Fatalf("cue schema: exit %d, %.200s", code, out)
	}
	out, _, code = run(t, "nodes", "--json")
	var nodes []nodeTypeInfo
	if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil {
		t.Fatalf("nodes: exit %d %.200s", code, out)
	}
	names := map[string]bool{}
	for _, n := range nodes {
		names[n.Name] = true
	}
	for _, want := range []string{"route", "set", "reply", "interrupt", "extract", "tool"} {
		if !names[want] {
			t.Errorf("nodes lacks %s", want)
		}
	}
	if _, _, code := run(t, "schema", "--format", "xml"); code != 2 {
		t.Errorf("unknown format: exit %d, want 2", code)
	}
}

func TestRunResumeThreadsAndGraph(t *testing.T) {
	graph := filepath.Join(repoRoot(t), "examples/triage/triage.cue")
	data := t.TempDir()
	out, errOut, code := run(t, "run", graph, "--data-dir", data, "--thread", "t1", "-i", "I want a refund for my invoice")
	if code != 0 || !strings.Contains(out, "Approve it?") || !strings.Contains(errOut, "waits for input") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = run(t, "resume", graph, "--data-dir", data, "--thread", "t1", "--value", "yes", "--json")
	if code != 0 {
		t.Fatalf("resume: exit %d %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var done struct {
		Type    string
		Payload struct {
			ThreadID string         `json:"thread_id"`
			Status   string         `json:"status"`
			State    map[string]any `json:"state"`
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &done); err != nil || done.Type != "done" ||
		done.Payload.Status != "completed" || done.Payload.ThreadID != "t1" || done.Payload.State["approved"] != "yes" {
		t.Fatalf("last line is not a completed done event with state: %s (%v)", lines[len(lines)-1], err)
	}
	out, _, code = run(t, "threads", "list", "--data-dir", data)
	if code != 0 || !strings.Contains(out, "t1") || !strings.Contains(out, "triage") {
		t.Fatalf("threads list: %d %s", code, out)
	}
	out, _, code = run(t, "threads", "history", "t1", "--data-dir", data, "--json")
	var hist []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &hist) != nil || len(hist) < 3 {
		t.Fatalf("history: %d %s", code, out)
	}
	out, _, code = run(t, "threads", "fork", "t1", "--to", "t2", "--data-dir", data)
	if code != 0 || !strings.Contains(out, "into t2") {
		t.Fatalf("fork: %d %s", code, out)
	}
	out, _, code = run(t, "threads", "show", "t2", "--data-dir", data)
	if code != 0 || !strings.Contains(out, `approved: "yes"`) {
		t.Fatalf("show fork: %d %s", code, out)
	}
	out, _, code = run(t, "threads", "update", "t2", "--graph", graph, "--data-dir", data, "--values", `{"order": "999-0000000"}`)
	if code != 0 || !strings.Contains(out, "updated t2") {
		t.Fatalf("update: %d %s", code, out)
	}
	out, _, code = run(t, "threads", "show", "t2", "--data-dir", data)
	if code != 0 || !strings.Contains(out, `order: "999-0000000"`) {
		t.Fatalf("show after update: %d %s", code, out)
	}
	if _, errOut, code := run(t, "threads", "update", "t2", "--graph", graph, "--data-dir", data, "--values", `{"nope": 1}`); code != 1 || !strings.Contains(errOut, `"nope"`) {
		t.Fatalf("update of an undeclared field: exit %d %s", code, errOut)
	}
	out, _, code = run(t, "threads", "prune", "t1", "--keep", "1", "--data-dir", data)
	if code != 0 || !strings.Contains(out, "pruned t1") {
		t.Fatalf("prune: %d %s", code, out)
	}
	out, _, _ = run(t, "threads", "history", "t1", "--data-dir", data, "--json")
	if err := json.Unmarshal([]byte(out), &hist); err != nil || len(hist) != 1 {
		t.Fatalf("history after prune: %s", out)
	}
	if _, _, code = run(t, "threads", "delete", "t2", "--data-dir", data); code != 0 {
		t.Fatalf("delete: %d", code)
	}
	if _, _, code = run(t, "threads", "show", "t2", "--data-dir", data); code != 1 {
		t.Fatalf("show deleted thread: exit %d, want 1", code)
	}
	out, _, code = run(t, "graph", graph, "--format", "mermaid")
	if code != 0 || !strings.Contains(out, "route -.->|\"topic == 'shipping'\"| track") {
		t.Fatalf("graph: %d %s", code, out)
	}
	if _, errOut, code := run(t, "run", graph, "--data-dir", data, "-i", "x", "--input", "{}"); code != 2 {
		t.Fatalf("both inputs: exit %d %s", code, errOut)
	}
	for _, args := range [][]string{{"run", graph, "-i", "x"}, {"resume", graph}} {
		args = append(args, "--data-dir", data, "--thread", "a\x1fsub:x")
		if _, errOut, code := run(t, args...); code != 2 || !strings.Contains(errOut, "--thread") {
			t.Fatalf("%s with a thread id holding the namespace separator: exit %d %s", args[0], code, errOut)
		}
	}
}

// TestKilledRunResumesWithoutRepeatingFinishedNodes kills a graphctl process
// with SIGKILL while one of two parallel nodes is still running, then resumes
// the thread in a new process: the node that had finished is not run again.
func TestKilledRunResumesWithoutRepeatingFinishedNodes(t *testing.T) {
	dir := t.TempDir()
	sideFile := filepath.Join(dir, "side-effects.log")
	graph := filepath.Join(dir, "crash.cue")
	src := fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "crash"
state: log: {type: "list<string>", reducer: "append"}
start: "split"
nodes: {
	split: {type: "route", next: ["fast", "slow"]}
	fast: {type: "crashtest_side_effect", config: {file: %[1]q, label: "fast"}, next: "END"}
	slow: {type: "crashtest_side_effect", config: {file: %[1]q, label: "slow", sleep: "3s"}, next: "END"}
}
`, sideFile)
	if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	// Kill once fast's node_end (sent once its update is saved) and slow's
	// start are seen.
	killWhen(t, testChild("run", graph, "--data-dir", data, "--thread", "t", "--input", "{}", "--json"), func(out string) bool {
		b, _ := os.ReadFile(sideFile)
		return fastEnded(out) && strings.Contains(string(b), "slow start")
	})

	second := testChild("resume", graph, "--data-dir", data, "--thread", "t", "--json")
	out, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("resume failed: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(sideFile)
	log := string(b)
	if n := strings.Count(log, "fast start"); n != 1 {
		t.Errorf("fast ran %d times, want 1 (side effects:\n%s)", n, log)
	}
	if n := strings.Count(log, "slow start"); n != 2 {
		t.Errorf("slow started %d times, want 2: once killed, once resumed (side effects:\n%s)", n, log)
	}
	if !strings.Contains(string(out), `"status":"completed"`) || !strings.Contains(string(out), `"log":["fast","slow"]`) {
		t.Errorf("resume did not complete with both writes:\n%s", out)
	}
}

// testChild returns a command that runs the test binary as graphctl with
// the test node types (see TestMain).
func testChild(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GRAPHCTL_TEST_CHILD=1")
	return cmd
}

// killWhen starts cmd and kills it with SIGKILL once ready holds for its
// output so far (polled, for up to a minute).
func killWhen(t *testing.T, cmd *exec.Cmd, ready func(out string) bool) {
	t.Helper()
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !ready(out.String()) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the process never got where it was to be killed; output: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// heldFor returns a condition that holds once ready has held for d.
func heldFor(d time.Duration, ready func(out string) bool) func(out string) bool {
	var since time.Time
	return func(out string) bool {
		if !ready(out) {
			return false
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) >= d
	}
}

// fastEnded reports whether the JSON Lines output has a node_end event of the fast node.
func fastEnded(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		var ev struct {
			Type    string
			Payload map[string]any
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "node_end" && ev.Payload["node"] == "fast" {
			return true
		}
	}
	return false
}

// syncBuffer is a bytes.Buffer safe for a writing child process and a reading test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestCommandsWithoutGraphFilesAreUsageErrors(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("not a graph"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"validate", "test"} {
		t.Run(cmd, func(t *testing.T) {
			_, stderr, code := run(t, cmd, empty)
			if code != 2 || !strings.Contains(stderr, "no graph files") || !strings.Contains(stderr, empty) {
				t.Fatalf("%s of a directory without graphs: exit %d, stderr %q; want exit 2 naming the directory", cmd, code, stderr)
			}
		})
	}
	// test without a path reads graphs/, which this package's directory lacks.
	t.Run("test without a path nor graphs/", func(t *testing.T) {
		_, stderr, code := run(t, "test")
		if code != 2 || !strings.Contains(stderr, "no graphs/ directory here") || !strings.Contains(stderr, "graphctl test PATH") {
			t.Fatalf("exit %d, stderr %q; want exit 2 saying to name the files", code, stderr)
		}
	})
}

// A test file given by name (graphctl test agent_test.cue, as go test takes a
// _test.go file) stands for its graph, loaded once with it; one with no graph
// beside it is a usage error that says so.
func TestATestFileStandsForItsGraph(t *testing.T) {
	root := repoRoot(t)
	tests := filepath.Join(root, "examples/triage/triage_test.cue")
	orphan := filepath.Join(t.TempDir(), "orphan_test.cue")
	if err := os.WriteFile(orphan, []byte("tests: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"validate", tests}, 0, "ok  " + filepath.Join(root, "examples/triage/triage.cue")},
		{[]string{"test", tests, filepath.Join(root, "examples/triage/triage.cue")}, 0, "ok  \t" + filepath.Join(root, "examples/triage/triage.cue")},
		{[]string{"validate", orphan}, 2, "orphan_test.cue is a test file, and its graph (orphan.cue, .yaml or .yml) is not beside it"},
	}
	for _, s := range steps {
		out, errOut, code := run(t, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.contains) {
			t.Fatalf("%v: exit %d, want %d with %q\n%s%s", s.args, code, s.code, s.contains, out, errOut)
		}
		if strings.Count(out+errOut, "triage.cue") > 1 {
			t.Fatalf("%v: the graph was loaded more than once:\n%s%s", s.args, out, errOut)
		}
	}
}
