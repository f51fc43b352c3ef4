package server

import (
	"syscall"
	"testing"
	"time"
)

// TestScheduledRunSurvivesKill creates runs with after_seconds on a server
// process, kills it (SIGKILL) before their start time, and starts it again
// on the same Badger data dir: each run then runs once, at its start time
// or at once if that has passed; one cancelled before the kill stays
// cancelled; and with --on-restart fail a scheduled run, which nothing
// cut, still runs.
func TestScheduledRunSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, fail := range []bool{false, true} {
		name := map[bool]string{false: "resume", true: "on-restart fail"}[fail]
		t.Run(name, func(t *testing.T) {
			data, gate := t.TempDir(), t.TempDir()
			addr := freeAddr(t)
			c := startChild(t, data, gate, addr, fail)
			type sched struct {
				thread, run string
				startAt     time.Time
			}
			var runs []sched
			// One start time passes while the server is down, one most
			// likely after it is up again: either way the run runs once.
			for i, delay := range []float64{1, 3} {
				thread := []string{"k1", "k2"}[i]
				c.call(t, "POST", "/threads", map[string]any{"thread_id": thread})
				code, run := c.call(t, "POST", "/threads/"+thread+"/runs", map[string]any{"assistant_id": "echo", "input": echoInput(thread), "after_seconds": delay})
				if code != 200 || run["status"] != "pending" {
					t.Fatalf("create scheduled run: %d %v", code, run)
				}
				runs = append(runs, sched{thread, run["run_id"].(string), parseTime(t, run["created_at"])})
			}
			c.call(t, "POST", "/threads", map[string]any{"thread_id": "k3"})
			_, cancelled := c.call(t, "POST", "/threads/k3/runs", map[string]any{"assistant_id": "echo", "input": echoInput("k3"), "after_seconds": 1})
			if code, _ := c.call(t, "POST", "/threads/k3/runs/"+cancelled["run_id"].(string)+"/cancel", nil); code != 202 {
				t.Fatalf("cancel: %d", code)
			}
			for _, r := range runs {
				if _, rec := c.call(t, "GET", "/threads/"+r.thread+"/runs/"+r.run, nil); rec["status"] != "pending" {
					t.Fatalf("run %s before the kill: %v, want pending", r.run, rec)
				}
			}
			c.cmd.Process.Signal(syscall.SIGKILL)
			c.cmd.Wait()

			c = startChild(t, data, gate, addr, fail)
			for _, r := range runs {
				var rec map[string]any
				for i := 0; i < 3000; i++ {
					_, rec = c.call(t, "GET", "/threads/"+r.thread+"/runs/"+r.run, nil)
					if rec["status"] != "running" && rec["status"] != "pending" {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				if rec["status"] != "success" {
					t.Fatalf("scheduled run %s after the restart: %v, want success", r.run, rec)
				}
				_, st := c.call(t, "GET", "/threads/"+r.thread+"/state", nil)
				msgs, _ := field(st, "values", "messages").([]any)
				if len(msgs) != 2 || lastReply(field(st, "values")) != "You said: "+r.thread {
					t.Fatalf("thread %s after the restart: %v, want the run's turn once", r.thread, st)
				}
				if wrote := parseTime(t, st["created_at"]); wrote.Before(r.startAt) {
					t.Fatalf("run %s wrote its thread at %s, before its start time %s", r.run, wrote, r.startAt)
				}
			}
			if _, rec := c.call(t, "GET", "/threads/k3/runs/"+cancelled["run_id"].(string), nil); rec["status"] != "interrupted" {
				t.Fatalf("run cancelled before the kill: %v, want interrupted", rec)
			}
			if _, st := c.call(t, "GET", "/threads/k3/state", nil); field(st, "values", "messages") != nil {
				t.Fatalf("the cancelled run ran: %v", st)
			}
		})
	}
}
