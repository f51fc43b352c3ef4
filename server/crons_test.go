package server

import (
	"strings"
	"testing"
	"time"
)

// waitFor polls cond until it holds (or fails the test after a long bound).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestParseSchedule(t *testing.T) {
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		spec, tz string
		want     time.Time
		err      string
	}{
		{spec: "0 9 * * *", want: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)},
		{spec: "*/15 * * * *", want: time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)},
		{spec: "* * * * * */10", want: time.Date(2026, 3, 1, 10, 0, 10, 0, time.UTC)},
		{spec: "0 9 * * *", tz: "Asia/Tokyo", want: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{spec: "@daily", want: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{spec: "0 9 * *", err: "5 fields"},
		{spec: "61 * * * *", err: "schedule"},
		{spec: "0 9 * * *", tz: "Mars/Olympus", err: "time zone"},
	}
	for _, tt := range tests {
		sched, err := parseSchedule(tt.spec, tt.tz)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q %q: error %v, want one naming %q", tt.spec, tt.tz, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		if got := sched.Next(base).UTC(); !got.Equal(tt.want) {
			t.Errorf("%q %q: next %v, want %v", tt.spec, tt.tz, got, tt.want)
		}
	}
}

func TestCronsRunOnScheduleAndSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	f := newDirFixture(t, dir)
	f.do("POST", "/threads", map[string]any{"thread_id": "c1"})
	// Every second (croniter's sixth field is seconds).
	code, cr := f.do("POST", "/threads/c1/runs/crons", map[string]any{"assistant_id": "echo", "schedule": "* * * * * *", "input": msgInput("tick")})
	if code != 200 || field(cr, "thread_id") != "c1" || field(cr, "next_run_date") == nil || field(cr, "enabled") != true {
		t.Fatalf("create thread cron: %d %v", code, cr)
	}
	threadCron := field(cr, "cron_id").(string)
	runsOf := func(f *fixture, thread string) []any {
		_, list := f.do("GET", "/threads/"+thread+"/runs?limit=100", nil)
		l, _ := list.([]any)
		return l
	}
	waitFor(t, "the thread cron's first run", func() bool {
		l := runsOf(f.fixture, "c1")
		return len(l) > 0 && field(l[len(l)-1], "status") == "success"
	})
	first := runsOf(f.fixture, "c1")
	if field(first[len(first)-1], "metadata", "cron_id") != threadCron {
		t.Fatalf("cron run metadata %v", field(first[0], "metadata"))
	}
	// Disabled, it stops.
	if code, up := f.do("PATCH", "/runs/crons/"+threadCron, map[string]any{"enabled": false}); code != 200 || field(up, "enabled") != false || field(up, "next_run_date") != nil {
		t.Fatalf("disable: %d %v", code, up)
	}

	// A stateless cron that keeps its threads.
	code, cr = f.do("POST", "/runs/crons", map[string]any{"assistant_id": "echo", "schedule": "* * * * * *", "input": msgInput("hello"), "on_run_completed": "keep", "metadata": map[string]any{"job": "daily"}})
	if code != 200 || field(cr, "thread_id") != nil || field(cr, "on_run_completed") != "keep" {
		t.Fatalf("create stateless cron: %d %v", code, cr)
	}
	stateless := field(cr, "cron_id").(string)
	cronThreads := func(f *fixture) int {
		_, n := f.do("POST", "/threads/count", map[string]any{"metadata": map[string]any{"cron_id": stateless}})
		v, _ := n.(float64)
		return int(v)
	}
	waitFor(t, "a thread made by the stateless cron", func() bool { return cronThreads(f.fixture) > 0 })

	_, n := f.do("POST", "/runs/crons/count", map[string]any{"assistant_id": "echo"})
	_, found := f.do("POST", "/runs/crons/search", map[string]any{"thread_id": "c1"})
	if n != float64(2) || len(found.([]any)) != 1 || field(found.([]any)[0], "cron_id") != threadCron {
		t.Fatalf("count %v, search by thread %v", n, found)
	}

	// Restart: the crons are still there and the enabled one keeps running.
	f.close()
	g := newDirFixture(t, dir)
	_, n = g.do("POST", "/runs/crons/count", map[string]any{})
	if n != float64(2) {
		t.Fatalf("crons after restart: %v", n)
	}
	before := cronThreads(g.fixture)
	waitFor(t, "a stateless cron run after the restart", func() bool { return cronThreads(g.fixture) > before })
	if code, _ := g.do("DELETE", "/runs/crons/"+stateless, nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := g.do("DELETE", "/runs/crons/"+stateless, nil); code != 404 {
		t.Fatalf("delete twice: %d", code)
	}
	// Deleting a thread deletes its crons.
	g.do("DELETE", "/threads/c1", nil)
	if _, n := g.do("POST", "/runs/crons/count", map[string]any{}); n != float64(0) {
		t.Fatalf("crons after deleting their thread: %v", n)
	}
}

func TestCronValidation(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "v1"})
	for _, tt := range []struct {
		path string
		body map[string]any
		want int
		has  string
	}{
		{"/runs/crons", map[string]any{"assistant_id": "echo"}, 422, "schedule"},
		{"/runs/crons", map[string]any{"assistant_id": "echo", "schedule": "every day"}, 422, "schedule"},
		{"/runs/crons", map[string]any{"assistant_id": "nope", "schedule": "0 9 * * *"}, 404, "nope"},
		{"/runs/crons", map[string]any{"assistant_id": "echo", "schedule": "0 9 * * *", "input": map[string]any{"bogus": 1}}, 400, "bogus"},
		{"/runs/crons", map[string]any{"assistant_id": "echo", "schedule": "0 9 * * *", "on_run_completed": "archive"}, 422, "on_run_completed"},
		{"/runs/crons", map[string]any{"assistant_id": "echo", "schedule": "0 9 * * *", "webhook": "mailto:x@example.com"}, 422, "webhook"},
		{"/threads/missing/runs/crons", map[string]any{"assistant_id": "echo", "schedule": "0 9 * * *"}, 404, "missing"},
		{"/runs/crons/search", map[string]any{"limit": -1}, 422, "limit"},
	} {
		code, body := f.do("POST", tt.path, tt.body)
		if code != tt.want || !strings.Contains(mustJSON(body), tt.has) {
			t.Errorf("%s %v: %d %v, want %d naming %s", tt.path, tt.body, code, body, tt.want, tt.has)
		}
	}
	if code, _ := f.do("PATCH", "/runs/crons/nope", map[string]any{"enabled": false}); code != 404 {
		t.Errorf("update a missing cron: %d", code)
	}
}
