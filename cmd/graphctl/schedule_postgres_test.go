package main

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serveChild starts the test binary as `graphctl serve` with args and
// returns its base URL; the process is killed when the test ends.
func serveChild(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := testChild(append([]string{"serve", "--addr", "127.0.0.1:0", "--no-studio", "--no-mcp"}, args...)...)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if i := strings.Index(out.String(), " on http://"); i >= 0 {
			return strings.Fields(out.String()[i+4:])[0], cmd
		}
	}
	t.Fatalf("serve did not start:\n%s", out.String())
	return "", nil
}

// A run created with after_seconds on PostgreSQL survives the replica that
// created it being killed, and is started by exactly one of the replicas
// serving the schema, no earlier than its start time; a run waiting for
// its start time is pending on every replica, makes a reject run busy, and
// is cancelled or deleted from any replica.
func TestScheduledRunOnPostgresReplicas(t *testing.T) {
	pg := postgresURL(t)
	dir, side := sideEffectGraphs(t, "sched", "0s")
	args := []string{"--graphs", dir, "--postgres", pg, "--log-level", "error"}
	type run struct {
		RunID     string `json:"run_id"`
		Status    string `json:"status"`
		CreatedAt string `json:"created_at"`
	}
	create := func(base, thread string, body map[string]any) run {
		t.Helper()
		call(t, "POST", base+"/threads", map[string]any{"thread_id": thread, "if_exists": "do_nothing"}, nil)
		body["assistant_id"], body["input"] = "sched", map[string]any{}
		var r run
		if code := call(t, "POST", base+"/threads/"+thread+"/runs", body, &r); code != 200 || r.Status != "pending" {
			t.Fatalf("scheduled run on %s: %d %+v", thread, code, r)
		}
		return r
	}
	status := func(base, thread, id string) string {
		t.Helper()
		var r run
		if code := call(t, "GET", base+"/threads/"+thread+"/runs/"+id, nil, &r); code == 404 {
			return "gone"
		}
		return r.Status
	}
	// joined joins a run and checks that it ran after its start time.
	joined := func(base, thread string, r run) {
		t.Helper()
		var vals map[string]any
		call(t, "GET", base+"/threads/"+thread+"/runs/"+r.RunID+"/join", nil, &vals)
		if got := status(base, thread, r.RunID); got != "success" {
			t.Fatalf("run %s on %s: %s, want success", r.RunID, thread, got)
		}
		if fmt.Sprint(vals["log"]) != "[ran]" {
			t.Fatalf("run %s on %s: values %v, want it to have run once", r.RunID, thread, vals)
		}
		var st struct {
			CreatedAt string `json:"created_at"`
		}
		call(t, "GET", base+"/threads/"+thread+"/state", nil, &st)
		wrote, err1 := time.Parse(time.RFC3339Nano, st.CreatedAt)
		startAt, err2 := time.Parse(time.RFC3339Nano, r.CreatedAt)
		if err1 != nil || err2 != nil || wrote.Before(startAt) {
			t.Fatalf("run %s wrote its thread at %q, before its start time %q (%v %v)", r.RunID, st.CreatedAt, r.CreatedAt, err1, err2)
		}
	}

	a, procA := serveChild(t, args...)
	orphan := create(a, "p1", map[string]any{"after_seconds": 1})
	waiting := create(a, "p2", map[string]any{"after_seconds": 3600})
	doomed := create(a, "p3", map[string]any{"after_seconds": 3600})
	procA.Process.Signal(syscall.SIGKILL)
	_ = procA.Wait()

	b, _ := serveChild(t, args...)
	c, _ := serveChild(t, args...)
	if got := status(b, "p2", waiting.RunID); got != "pending" {
		t.Fatalf("a run waiting for its start time is %s on another replica, want pending", got)
	}
	if code := call(t, "POST", b+"/threads/p2/runs", map[string]any{"assistant_id": "sched", "input": map[string]any{}}, nil); code != 409 {
		t.Fatalf("reject run beside a scheduled one: %d, want 409", code)
	}
	// The killed replica's run starts on one of the others.
	joined(c, "p1", orphan)
	// Cancelled on one replica, it is interrupted on every one.
	if code := call(t, "POST", c+"/threads/p2/runs/"+waiting.RunID+"/cancel", nil, nil); code != 202 {
		t.Fatalf("cancel a scheduled run: %d", code)
	}
	if got := status(b, "p2", waiting.RunID); got != "interrupted" {
		t.Fatalf("cancelled scheduled run on another replica: %s, want interrupted", got)
	}
	if code := call(t, "DELETE", c+"/threads/p3/runs/"+doomed.RunID, nil, nil); code != 204 {
		t.Fatalf("delete a scheduled run: %d", code)
	}
	if got := status(b, "p3", doomed.RunID); got != "gone" {
		t.Fatalf("deleted scheduled run on another replica: %s", got)
	}
	// With both replicas up, a run scheduled on one runs once.
	both := create(b, "p4", map[string]any{"after_seconds": 1})
	joined(c, "p4", both)

	if n, _ := sideEffects(t, side); n != 2 {
		t.Fatalf("the graph ran %d times, want 2: each scheduled run once, none cancelled or deleted", n)
	}
}
