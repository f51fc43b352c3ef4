package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
)

// A thread is copied under the hold a state update takes: while a run
// executes on it, a copy is refused (409, the run named) on every replica —
// the copy would mix checkpoints from before and during the run's steps —
// and once the run has ended the copy is of the state the run left.
func TestCopyThreadHoldsTheThread(t *testing.T) {
	cases := []struct {
		name string
		// replicas returns the server a run starts on and the one the
		// copies are asked of.
		replicas func(t *testing.T, dir string) (runOn, copyOn *fixture)
	}{
		{"badger", func(t *testing.T, dir string) (*fixture, *fixture) {
			f := backendFixture(t, "badger", dir)
			return f, f
		}},
		{"postgres, copy on another replica", func(t *testing.T, dir string) (*fixture, *fixture) {
			db := pgtest.Open(t, postgres.Options{})
			gate := t.TempDir()
			t.Setenv(gateEnv, gate)
			return postgresFixture(t, db, dir, gate), postgresFixture(t, db, dir, gate)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runOn, copyOn := c.replicas(t, threadGraphs(t))
			_, th := runOn.do("POST", "/threads", map[string]any{})
			thread := field(th, "thread_id").(string)
			code, run := runOn.do("POST", "/threads/"+thread+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
			if code != 200 {
				t.Fatalf("run: %d %v", code, run)
			}
			runID := field(run, "run_id").(string)
			runOn.waitStarted(thread)

			code, refused := copyOn.do("POST", "/threads/"+thread+"/copy", nil)
			if code != 409 {
				t.Fatalf("copy while a run executes: %d %v, want 409", code, refused)
			}
			if msg := fmt.Sprint(field(refused, "error", "message")); !strings.Contains(msg, "copy it when the run has ended") {
				t.Errorf("refused copy's message %q does not say when to copy", msg)
			}
			if code, n := copyOn.do("POST", "/threads/count", map[string]any{}); code != 200 || n != float64(1) {
				t.Errorf("threads after the refused copy: %d %v, want only the original", code, n)
			}

			runOn.release(thread)
			if code, out := runOn.do("GET", "/threads/"+thread+"/runs/"+runID+"/join", nil); code != 200 {
				t.Fatalf("join: %d %v", code, out)
			}
			code, copied := copyOn.do("POST", "/threads/"+thread+"/copy", nil)
			if code != 200 {
				t.Fatalf("copy once the run has ended: %d %v", code, copied)
			}
			_, orig := runOn.do("GET", "/threads/"+thread+"/state", nil)
			_, state := copyOn.do("GET", "/threads/"+field(copied, "thread_id").(string)+"/state", nil)
			if got, want := fmt.Sprint(field(state, "values")), fmt.Sprint(field(orig, "values")); got != want || !strings.Contains(got, "Finished.") {
				t.Fatalf("copy's values = %s, want the original's %s, with the run's reply", got, want)
			}
		})
	}
}

// State updates are written under the thread's hold — on PostgreSQL, with
// the hold's fence, which the write's transaction checks — on both
// backends: threads.create with supersteps and POST /threads/{id}/state go
// through and their values are read back.
func TestStateUpdatesUnderTheHold(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := backendFixture(t, backend, threadGraphs(t))
			code, th := f.do("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "slow"}, "supersteps": []any{
				map[string]any{"updates": []any{map[string]any{"values": map[string]any{"log": []any{"created"}}, "as_node": "work"}}},
			}})
			if code != 200 || fmt.Sprint(field(th, "values", "log")) != "[created]" {
				t.Fatalf("create with supersteps: %d %v", code, th)
			}
			thread := field(th, "thread_id").(string)
			if code, out := f.do("POST", "/threads/"+thread+"/state", map[string]any{"values": map[string]any{"log": []any{"updated"}}, "as_node": "work"}); code != 200 {
				t.Fatalf("state update: %d %v", code, out)
			}
			_, state := f.do("GET", "/threads/"+thread+"/state", nil)
			if got := fmt.Sprint(field(state, "values", "log")); got != "[created updated]" {
				t.Fatalf("values after the updates: log %s, want [created updated]", got)
			}
		})
	}
}
