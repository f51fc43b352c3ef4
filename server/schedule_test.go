package server

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/server/sse"
)

// These tests drive runs created with after_seconds through the HTTP API:
// such a run is created at once, pending, with its start time as
// created_at (as on LangGraph's Agent Server), and runs no earlier than
// that. Nothing is timed: the assertions are about statuses and the order
// of times the server records.

func echoInput(text string) map[string]any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}
}

// lastReply is the content of the last message in a run's values.
func lastReply(v any) string {
	msgs, _ := field(v, "messages").([]any)
	if len(msgs) == 0 {
		return ""
	}
	s, _ := field(msgs[len(msgs)-1], "content").(string)
	return s
}

func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return at
}

// checkStartedAfter checks that the thread's state was written no earlier
// than the run's start time (its created_at).
func checkStartedAfter(t *testing.T, f *fixture, thread string, startAt time.Time) {
	t.Helper()
	_, st := f.do("GET", "/threads/"+thread+"/state", nil)
	if wrote := parseTime(t, field(st, "created_at")); wrote.Before(startAt) {
		t.Fatalf("thread %s's state was written at %s, before the run's start time %s", thread, wrote, startAt)
	}
}

// Each endpoint that creates a run takes after_seconds: create answers at
// once with the run pending, wait and stream answer once the run has run
// after its delay, and the run's created_at is its start time.
func TestAfterSecondsDelaysTheRun(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name, path string
		thread     bool
		check      func(t *testing.T, thread string, before time.Time, code int, body any)
	}{
		{"create then join", "/runs", true, func(t *testing.T, thread string, before time.Time, code int, body any) {
			if code != 200 || field(body, "status") != "pending" {
				t.Fatalf("create: %d %v, want 200 and a pending run", code, body)
			}
			startAt := parseTime(t, field(body, "created_at"))
			if startAt.Before(before.Add(time.Second)) {
				t.Fatalf("created_at %s is not a second after the request (%s)", startAt, before)
			}
			runID := field(body, "run_id").(string)
			_, joined := f.do("GET", "/threads/"+thread+"/runs/"+runID+"/join", nil)
			if got := lastReply(joined); got != "You said: create then join" {
				t.Fatalf("joined values %v", joined)
			}
			if _, rec := f.do("GET", "/threads/"+thread+"/runs/"+runID, nil); field(rec, "status") != "success" {
				t.Fatalf("run after its join: %v", rec)
			}
			checkStartedAfter(t, f, thread, startAt)
		}},
		{"wait", "/runs/wait", true, func(t *testing.T, thread string, before time.Time, code int, body any) {
			if code != 200 || lastReply(body) != "You said: wait" {
				t.Fatalf("wait: %d %v", code, body)
			}
			_, list := f.do("GET", "/threads/"+thread+"/runs", nil)
			runs, _ := list.([]any)
			if len(runs) != 1 || field(runs[0], "status") != "success" {
				t.Fatalf("runs after wait: %v", list)
			}
			startAt := parseTime(t, field(runs[0], "created_at"))
			if startAt.Before(before.Add(time.Second)) {
				t.Fatalf("created_at %s is not a second after the request (%s)", startAt, before)
			}
			checkStartedAfter(t, f, thread, startAt)
		}},
		{"stateless wait", "/runs/wait", false, func(t *testing.T, _ string, _ time.Time, code int, body any) {
			if code != 200 || lastReply(body) != "You said: stateless wait" {
				t.Fatalf("stateless wait: %d %v", code, body)
			}
		}},
		{"stateless create", "/runs", false, func(t *testing.T, _ string, _ time.Time, code int, body any) {
			if code != 200 || field(body, "status") != "pending" {
				t.Fatalf("stateless create: %d %v, want a pending run", code, body)
			}
			runID := field(body, "run_id").(string)
			a, ok := f.srv.runs.Get(runID)
			if !ok {
				t.Fatalf("run %s unknown", runID)
			}
			<-a.Done()
			if st := a.Record().Status; st != "success" {
				t.Fatalf("stateless scheduled run ended %s", st)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, thread := tt.path, ""
			if tt.thread {
				thread = "after-" + strings.ReplaceAll(tt.name, " ", "-")
				f.do("POST", "/threads", map[string]any{"thread_id": thread})
				path = "/threads/" + thread + tt.path
			}
			before := time.Now()
			code, body := f.do("POST", path, map[string]any{"assistant_id": "echo", "input": echoInput(tt.name), "after_seconds": 1})
			tt.check(t, thread, before, code, body)
		})
	}
	for _, stateless := range []bool{false, true} {
		name := map[bool]string{false: "stream", true: "stateless stream"}[stateless]
		t.Run(name, func(t *testing.T) {
			path := "/runs/stream"
			if !stateless {
				f.do("POST", "/threads", map[string]any{"thread_id": "after-stream"})
				path = "/threads/after-stream/runs/stream"
			}
			code, frames := f.stream(path, map[string]any{"assistant_id": "echo", "input": echoInput(name), "after_seconds": 1})
			if code != 200 {
				t.Fatalf("stream: %d", code)
			}
			if got := strings.Join(eventNames(frames), ","); got != "metadata,values,values,end" {
				t.Fatalf("stream events %s, want the run's after its delay", got)
			}
			var last any
			jsonUnmarshal(frames[len(frames)-2].Data, &last)
			if lastReply(last) != "You said: "+name {
				t.Fatalf("last values %v", last)
			}
		})
	}
	t.Run("batch", func(t *testing.T) {
		code, body := f.do("POST", "/runs/batch", []any{map[string]any{"assistant_id": "echo", "input": echoInput("batched"), "after_seconds": 1}})
		list, _ := body.([]any)
		if code != 200 || len(list) != 1 || field(list[0], "status") != "pending" {
			t.Fatalf("batch: %d %v, want one pending run", code, body)
		}
		a, ok := f.srv.runs.Get(field(list[0], "run_id").(string))
		if !ok {
			t.Fatalf("batch run unknown")
		}
		<-a.Done()
		if st := a.Record().Status; st != "success" {
			t.Fatalf("batch run ended %s", st)
		}
	})
	t.Run("zero is immediate", func(t *testing.T) {
		f.do("POST", "/threads", map[string]any{"thread_id": "after-zero"})
		before := time.Now()
		code, body := f.do("POST", "/threads/after-zero/runs", map[string]any{"assistant_id": "echo", "input": echoInput("now"), "after_seconds": 0})
		if code != 200 || field(body, "status") == "pending" {
			t.Fatalf("after_seconds 0: %d %v, want a started run", code, body)
		}
		if at := parseTime(t, field(body, "created_at")); at.After(before.Add(time.Second)) {
			t.Fatalf("created_at %s of an immediate run is a start time", at)
		}
	})
}

// after_seconds that is not a number of seconds from 0 on is refused with
// a 422 naming it, and no run is created.
func TestAfterSecondsValidation(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "after-bad"})
	for _, v := range []any{-1, -0.5, "soon", "5", true, map[string]any{}, []any{1}, 1e12} {
		code, body := f.do("POST", "/threads/after-bad/runs", map[string]any{"assistant_id": "echo", "after_seconds": v})
		if code != 422 || !strings.Contains(field(body, "detail").(string), "after_seconds") {
			t.Errorf("after_seconds %v: %d %v, want 422 naming after_seconds", v, code, body)
		}
	}
	if _, list := f.do("GET", "/threads/after-bad/runs", nil); len(list.([]any)) != 0 {
		t.Fatalf("refused requests created runs: %v", list)
	}
}

// A run waiting for its start time is listed and read as pending, can be
// joined, cancelled (interrupt, rollback, with wait) and deleted; its
// thread is busy and refuses state updates meanwhile (409), as on
// LangGraph's Agent Server.
func TestScheduledRunWhileItWaits(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "later"})
	create := func() string {
		t.Helper()
		code, body := f.do("POST", "/threads/later/runs", map[string]any{"assistant_id": "echo", "input": echoInput("later"),
			"after_seconds": 3600, "multitask_strategy": "enqueue"})
		if code != 200 || field(body, "status") != "pending" {
			t.Fatalf("create: %d %v", code, body)
		}
		return field(body, "run_id").(string)
	}
	first := create()
	if _, rec := f.do("GET", "/threads/later/runs/"+first, nil); field(rec, "status") != "pending" {
		t.Fatalf("get: %v, want pending", rec)
	}
	_, list := f.do("GET", "/threads/later/runs?status=pending", nil)
	if l, _ := list.([]any); len(l) != 1 || field(l[0], "run_id") != first {
		t.Fatalf("pending runs %v, want %s", list, first)
	}
	if _, th := f.do("GET", "/threads/later", nil); field(th, "status") != "busy" {
		t.Fatalf("thread with a run waiting for its start: %v, want busy", th)
	}
	if code, body := f.do("POST", "/threads/later/state", map[string]any{"values": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "meanwhile"}}}}); code != 409 {
		t.Fatalf("state update while a run waits for its start: %d %v, want 409", code, body)
	}

	// A join waits for the run; the cancel ends both.
	joined := make(chan any, 1)
	go func() {
		_, v := f.do("GET", "/threads/later/runs/"+first+"/join", nil)
		joined <- v
	}()
	if code, body := f.do("POST", "/threads/later/runs/"+first+"/cancel?wait=1", nil); code != 204 {
		t.Fatalf("cancel with wait: %d %v", code, body)
	}
	v := <-joined
	if m, ok := v.(map[string]any); !ok || len(m) != 0 {
		t.Fatalf("join of the cancelled run answered %v, want the thread's values (none)", v)
	}
	if _, rec := f.do("GET", "/threads/later/runs/"+first, nil); field(rec, "status") != "interrupted" {
		t.Fatalf("cancelled run: %v, want interrupted", rec)
	}

	second := create()
	if code, _ := f.do("POST", "/threads/later/runs/"+second+"/cancel?action=rollback", nil); code != 202 {
		t.Fatalf("rollback cancel: %d", code)
	}
	if code, rec := f.do("GET", "/threads/later/runs/"+second, nil); code != 404 {
		t.Fatalf("rolled-back scheduled run: %d %v, want 404", code, rec)
	}

	third := create()
	if code, body := f.do("DELETE", "/threads/later/runs/"+third, nil); code != 204 {
		t.Fatalf("delete a scheduled run: %d %v", code, body)
	}
	if code, rec := f.do("GET", "/threads/later/runs/"+third, nil); code != 404 {
		t.Fatalf("deleted scheduled run: %d %v, want 404", code, rec)
	}
	// Deleting the thread drops the runs waiting on it.
	f.do("POST", "/threads", map[string]any{"thread_id": "dropped"})
	if code, _ := f.do("POST", "/threads/dropped/runs", map[string]any{"assistant_id": "echo", "input": echoInput("x"), "after_seconds": 3600}); code != 200 {
		t.Fatalf("scheduled run on the thread to delete: %d", code)
	}
	if code, body := f.do("DELETE", "/threads/dropped", nil); code != 204 {
		t.Fatalf("delete a thread with a scheduled run: %d %v", code, body)
	}
	if f.srv.runs.ActiveCount() != 0 || len(f.srv.runs.Unfinished()) != 0 {
		t.Fatalf("runs left after cancelling and deleting: %v", f.srv.runs.Unfinished())
	}
	// Nothing ran: the thread has no state.
	_, st := f.do("GET", "/threads/later/state", nil)
	if vals, _ := field(st, "values").(map[string]any); len(vals) != 0 {
		t.Fatalf("thread values %v, want none", st)
	}
}

// The multitask strategies apply to a run waiting for its start time as to
// a queued one, as on LangGraph's Agent Server: it makes a reject run
// busy, an enqueued run without a delay starts before it, an interrupt or
// rollback run cancels it; and a run whose start time comes while another
// run is active waits for that run's end.
func TestScheduledRunMultitask(t *testing.T) {
	f := newFixture(t, nil)
	scheduled := func(thread string, delay float64, strategy string) string {
		t.Helper()
		code, body := f.do("POST", "/threads/"+thread+"/runs", map[string]any{"assistant_id": "echo", "input": echoInput("scheduled"),
			"after_seconds": delay, "multitask_strategy": strategy})
		if code != 200 || field(body, "status") != "pending" {
			t.Fatalf("scheduled run: %d %v", code, body)
		}
		return field(body, "run_id").(string)
	}
	status := func(thread, run string) any {
		code, rec := f.do("GET", "/threads/"+thread+"/runs/"+run, nil)
		if code == 404 {
			return "gone"
		}
		return field(rec, "status")
	}
	for _, tt := range []struct {
		strategy  string
		code      int
		scheduled string // the scheduled run's status once the new run ended
	}{
		{"reject", 409, "pending"},
		{"enqueue", 200, "pending"},
		{"interrupt", 200, "interrupted"},
		{"rollback", 200, "gone"},
	} {
		t.Run(tt.strategy, func(t *testing.T) {
			th := "busy-" + tt.strategy
			f.do("POST", "/threads", map[string]any{"thread_id": th})
			s := scheduled(th, 3600, "enqueue")
			code, body := f.do("POST", "/threads/"+th+"/runs/wait", map[string]any{"assistant_id": "echo", "input": echoInput("now"), "multitask_strategy": tt.strategy})
			if code != tt.code {
				t.Fatalf("run beside a scheduled one: %d %v, want %d", code, body, tt.code)
			}
			if code == 200 && lastReply(body) != "You said: now" {
				t.Fatalf("run beside a scheduled one answered %v", body)
			}
			if got := status(th, s); got != tt.scheduled {
				t.Fatalf("scheduled run is %v, want %s", got, tt.scheduled)
			}
			if tt.scheduled == "pending" {
				f.do("POST", "/threads/"+th+"/runs/"+s+"/cancel", nil)
			}
		})
	}

	t.Run("reject while busy", func(t *testing.T) {
		f.do("POST", "/threads", map[string]any{"thread_id": "busy-slow"})
		code, slow := f.do("POST", "/threads/busy-slow/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
		if code != 200 {
			t.Fatalf("slow run: %d %v", code, slow)
		}
		f.waitStarted("busy-slow")
		code, body := f.do("POST", "/threads/busy-slow/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}, "after_seconds": 1})
		if code != 409 {
			t.Fatalf("scheduled reject run on a busy thread: %d %v, want 409", code, body)
		}
		// Enqueued, it waits for the active run past its own start time.
		code, body = f.do("POST", "/threads/busy-slow/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}, "after_seconds": 1, "multitask_strategy": "enqueue"})
		if code != 200 {
			t.Fatalf("scheduled enqueued run: %d %v", code, body)
		}
		next := field(body, "run_id").(string)
		startAt := parseTime(t, field(body, "created_at"))
		for !time.Now().After(startAt.Add(100 * time.Millisecond)) {
			time.Sleep(50 * time.Millisecond)
		}
		if got := status("busy-slow", next); got != "pending" {
			t.Fatalf("scheduled run past its start time on a busy thread is %v, want pending", got)
		}
		f.release("busy-slow")
		f.do("GET", "/threads/busy-slow/runs/"+next+"/join", nil)
		first := field(slow, "run_id").(string)
		if status("busy-slow", first) != "success" || status("busy-slow", next) != "success" {
			t.Fatalf("runs: %v then %v, want both success", status("busy-slow", first), status("busy-slow", next))
		}
		_, st := f.do("GET", "/threads/busy-slow/state", nil)
		if log, _ := field(st, "values", "log").([]any); len(log) != 2 {
			t.Fatalf("log %v, want both runs' entries", log)
		}
	})
}

// A stream of a scheduled run opened by join gets its frames once it runs.
func TestJoinStreamOfScheduledRun(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "js"})
	_, body := f.do("POST", "/threads/js/runs", map[string]any{"assistant_id": "echo", "input": echoInput("joined"), "after_seconds": 1, "stream_mode": []string{"values"}})
	runID := field(body, "run_id").(string)
	resp, err := http.Get(f.http.URL + "/threads/js/runs/" + runID + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []string
	sse.Parse(bufio.NewReader(resp.Body), func(fr sse.Frame) error { events = append(events, fr.Event); return nil })
	if got := strings.Join(events, ","); got != "metadata,values,values,end" {
		t.Fatalf("joined stream events %s", got)
	}
}

// TestScheduledRunWithTheJSClient runs .ci/langgraph-sdk/schedule.mjs:
// runs.create, wait and stream with afterSeconds through the official
// client.
func TestScheduledRunWithTheJSClient(t *testing.T) {
	sdk := requireJSClient(t)
	f := newFixture(t, nil)
	sdk.run(t, "schedule.mjs", f.http.URL)
}
