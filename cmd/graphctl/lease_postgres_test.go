package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sideEffectGraphs writes, into a new graphs directory, graph name whose
// one node appends "ran start" and "ran end" to a new side-effects file,
// sleeping sleep in between; it returns the directory and the file.
func sideEffectGraphs(t *testing.T, name, sleep string) (dir, side string) {
	t.Helper()
	dir = t.TempDir()
	side = filepath.Join(t.TempDir(), "side-effects.log")
	src := fmt.Sprintf(`dsl_version: "graphctl/v1"
name: %q
state: log: {type: "list<string>", reducer: "append"}
start: "side"
nodes: side: {type: "crashtest_side_effect", config: {file: %q, label: "ran", sleep: %q}, next: "END"}
`, name, side, sleep)
	if err := os.WriteFile(filepath.Join(dir, name+".cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, side
}

// sideEffects counts the starts and ends the side-effects file records.
func sideEffects(t *testing.T, side string) (starts, ends int) {
	t.Helper()
	log, err := os.ReadFile(side)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(log), "ran start"), strings.Count(string(log), "ran end")
}

// startSlowRun creates thread on base and a run of graph "slow" on it, and
// returns the run's id.
func startSlowRun(t *testing.T, base, thread string) string {
	t.Helper()
	call(t, "POST", base+"/threads", map[string]any{"thread_id": thread}, nil)
	var r struct {
		RunID string `json:"run_id"`
	}
	if code := call(t, "POST", base+"/threads/"+thread+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}}, &r); code != 200 {
		t.Fatalf("run on %s: %d", thread, code)
	}
	return r.RunID
}

// joinedSuccess joins a run on base and checks that it succeeded with its
// node's update applied once.
func joinedSuccess(t *testing.T, base, thread, runID string) {
	t.Helper()
	var vals map[string]any
	if code := call(t, "GET", base+"/threads/"+thread+"/runs/"+runID+"/join", nil, &vals); code != 200 {
		t.Fatalf("join run %s: %d", runID, code)
	}
	var r struct {
		Status string `json:"status"`
	}
	call(t, "GET", base+"/threads/"+thread+"/runs/"+runID, nil, &r)
	if r.Status != "success" || fmt.Sprint(vals["log"]) != "[ran]" {
		t.Fatalf("run %s: %s with values %v, want success with its node's update once", runID, r.Status, vals)
	}
}

// slowRunOnReplicas starts two serve replicas on one new schema with
// --run-lease 1s, serving graph "slow" (its node sleeps sleep, see
// sideEffectGraphs), and a run of it on a new thread of the first replica;
// it returns the second replica, the first one's process, the thread, the
// run and the side-effects file.
func slowRunOnReplicas(t *testing.T, sleep string) (second string, first *exec.Cmd, thread, runID, side string) {
	t.Helper()
	dir, side := sideEffectGraphs(t, "slow", sleep)
	args := []string{"--graphs", dir, "--postgres", postgresURL(t), "--log-level", "error", "--run-lease", "1s"}
	a, procA := serveChild(t, args...)
	b, _ := serveChild(t, args...)
	thread = "slow-" + sleep
	return b, procA, thread, startSlowRun(t, a, thread), side
}

// A run that lasts several leases (--run-lease 1s, the node sleeps 4s) on
// one of two replicas is kept by its replica's heartbeats: the other
// replica, whose claim loop looks for expired leases all along, never
// takes it over, and the node executes once.
func TestRunLongerThanItsLeaseExecutesOnce(t *testing.T) {
	b, _, thread, runID, side := slowRunOnReplicas(t, "4s")
	joinedSuccess(t, b, thread, runID)
	if starts, ends := sideEffects(t, side); starts != 1 || ends != 1 {
		t.Fatalf("the node started %d and ended %d times, want once each", starts, ends)
	}
}

// A replica killed (SIGKILL) while it executes a run leaves it to another
// replica, which resumes it once its lease has expired and finishes it: the
// run ends in success, not running forever, and the node cut by the kill is
// executed again to its end, once.
func TestKilledReplicasRunIsFinishedByAnother(t *testing.T) {
	b, procA, thread, runID, side := slowRunOnReplicas(t, "2s")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if starts, _ := sideEffects(t, side); starts > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run's node never started")
		}
	}
	if err := procA.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = procA.Wait()
	joinedSuccess(t, b, thread, runID)
	if starts, ends := sideEffects(t, side); starts != 2 || ends != 1 {
		t.Fatalf("the node started %d and ended %d times, want 2 starts (the killed one, the resumed one) and 1 end", starts, ends)
	}
}
