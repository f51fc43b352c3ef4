package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// evalBomb's comprehension builds nine million values: minutes and
// gigabytes without a limit.
const evalBomb = `import "list"

dsl_version: "graphctl/v1"
name:        "bomb"
vars: big: [for i in list.Range(0, 3000, 1) for j in list.Range(0, 3000, 1) {i * j}]
state: messages: {type: "messages"}
start: "n"
nodes: n: {type: "reply", config: text: "hi", next: "END"}
`

func TestLoadingIsBounded(t *testing.T) {
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.cue")
	if err := os.WriteFile(bomb, []byte(evalBomb), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"validate past the time limit", []string{"validate", "--max-eval-time", "1s", bomb}, 1, bomb + ":5:13: [eval-limit] evaluating the file took longer than the time limit of 1s (--max-eval-time)"},
		{"run past the memory limit", []string{"run", "--max-eval-memory", "64MiB", "--max-eval-time", "10m", bomb, "-i", "hi", "--data-dir", filepath.Join(dir, "d")}, 1, "memory limit of 64MiB (--max-eval-memory)"},
		{"a bad size", []string{"validate", "--max-eval-memory", "lots", bomb}, 2, "--max-eval-memory"},
		{"a negative time", []string{"validate", "--max-eval-time", "-1s", bomb}, 2, "--max-eval-time must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.code || !strings.Contains(out+errOut, tt.contains) {
				t.Fatalf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", code, tt.code, tt.contains, out, errOut)
			}
		})
	}
}

// TestSIGTERMStopsLoading sends SIGTERM to graphctl validate and serve while
// they evaluate a runaway file: graphctl ends, and so does the evaluator it
// started. (serve handles SIGTERM itself, for a graceful stop; it used to
// ignore it until the file was loaded.)
func TestSIGTERMStopsLoading(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the evaluator process in /proc")
	}
	for _, command := range []string{"validate", "serve"} {
		t.Run(command, func(t *testing.T) { testSIGTERMStopsLoading(t, command) })
	}
}

func testSIGTERMStopsLoading(t *testing.T, command string) {
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.cue")
	if err := os.WriteFile(bomb, []byte(evalBomb), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"validate", "--max-eval-time", "10m", bomb}
	if command == "serve" {
		args = []string{"serve", "--max-eval-time", "10m", "--graphs", dir, "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data")}
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GRAPHCTL_TEST_CHILD=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	evaluator := 0
	for deadline := time.Now().Add(30 * time.Second); evaluator == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no evaluator process appeared")
		}
		evaluator = findEvaluator(bomb)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("graphctl %s ignored SIGTERM while loading; output: %s", command, out.String())
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if !alive(evaluator) {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(evaluator, syscall.SIGKILL)
			t.Fatalf("the evaluator (pid %d) outlived graphctl", evaluator)
		}
	}
}

// findEvaluator returns the pid of a process evaluating file, or 0.
func findEvaluator(file string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, []byte("GRAPHCTL_EVALGUARD_CHILD=")) && bytes.Contains(env, []byte(file)) {
			return pid
		}
	}
	return 0
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
