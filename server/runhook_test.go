package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hookCall is one request a webhook receiver got.
type hookCall struct {
	body map[string]any
	raw  string
}

// hookReceiver is an HTTP server that records the webhook calls it gets and
// answers the first fail of them with 503.
func hookReceiver(t *testing.T, fail int) (string, <-chan hookCall) {
	t.Helper()
	calls := make(chan hookCall, 16)
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil || r.Method != http.MethodPost {
			t.Errorf("webhook call %s with body %q: %v", r.Method, raw, err)
		}
		calls <- hookCall{body: body, raw: string(raw)}
		if n++; n <= fail {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook", calls
}

func nextHook(t *testing.T, calls <-chan hookCall) hookCall {
	t.Helper()
	select {
	case c := <-calls:
		return c
	case <-time.After(20 * time.Second):
		t.Fatal("the webhook was not called")
	}
	return hookCall{}
}

// A run that names a webhook is posted to it once it has ended: the run
// object with its final status, its times and the thread's final values;
// a failing call is made again.
func TestRunWebhook(t *testing.T) {
	f := newFixture(t, nil)
	if code, out := f.do("POST", "/threads", map[string]any{"thread_id": "th"}); code != 200 {
		t.Fatalf("create thread: %d %v", code, out)
	}
	hook, calls := hookReceiver(t, 1)
	code, out := f.do("POST", "/threads/th/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("hi"),
		"metadata": map[string]any{"who": "test"}, "webhook": hook})
	if code != 200 {
		t.Fatalf("run: %d %v", code, out)
	}
	first, second := nextHook(t, calls), nextHook(t, calls)
	if first.body["run_id"] != second.body["run_id"] || first.body["status"] != second.body["status"] {
		t.Fatalf("the call answered 503 was not made again: %s, then %s", first.raw, second.raw)
	}
	got := second.body
	for k, want := range map[string]any{"thread_id": "th", "assistant_id": "echo", "status": "success"} {
		if got[k] != want {
			t.Errorf("webhook %s = %v, want %v (%s)", k, got[k], want, second.raw)
		}
	}
	if md, _ := got["metadata"].(map[string]any); md["who"] != "test" {
		t.Errorf("webhook metadata = %v", got["metadata"])
	}
	if kw, _ := got["kwargs"].(map[string]any); kw["webhook"] != hook {
		t.Errorf("webhook kwargs = %v", got["kwargs"])
	}
	var times []time.Time
	for _, k := range []string{"created_at", "run_started_at", "run_ended_at", "webhook_sent_at"} {
		s, _ := got[k].(string)
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("webhook %s = %v: %v", k, got[k], err)
		}
		times = append(times, ts)
	}
	for i := 1; i < len(times); i++ {
		if times[i].Before(times[i-1]) {
			t.Errorf("webhook times out of order: %v", times)
		}
	}
	vals, _ := got["values"].(map[string]any)
	msgs, _ := vals["messages"].([]any)
	if len(msgs) != 2 || !strings.Contains(mustJSON(msgs[1]), "You said: hi") {
		t.Fatalf("webhook values = %v", got["values"])
	}
	if msg, _ := msgs[1].(map[string]any); msg["type"] != "ai" {
		t.Errorf("values are not in the API's message form: %v", msgs[1])
	}
}

// A webhook that is a path is a request to the server itself.
func TestRunWebhookPathOnThisServer(t *testing.T) {
	f := newFixture(t, nil)
	// The stateless run's thread is deleted when it ends; the webhook's
	// POST /threads then creates a thread of that id, with the run's metadata.
	code, out := f.do("POST", "/runs/wait", map[string]any{"assistant_id": "echo", "input": msgInput("hi"),
		"metadata": map[string]any{"mark": "from-webhook"}, "webhook": "/threads"})
	if code != 200 {
		t.Fatalf("run: %d %v", code, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		code, out := f.do("POST", "/threads/search", map[string]any{"metadata": map[string]any{"mark": "from-webhook"}})
		if list, _ := out.([]any); code == 200 && len(list) == 1 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the webhook's request to this server made no thread")
}

func TestRunWebhookRefused(t *testing.T) {
	f := newFixture(t, nil)
	if code, out := f.do("POST", "/threads", map[string]any{"thread_id": "th"}); code != 200 {
		t.Fatalf("create thread: %d %v", code, out)
	}
	for _, hook := range []any{42, "ftp://example.com/x", "//example.com/x", "http://", "not a url", true} {
		for _, path := range []string{"/threads/th/runs", "/runs/wait", "/runs/crons"} {
			body := map[string]any{"assistant_id": "echo", "input": msgInput("hi"), "webhook": hook, "schedule": "0 9 * * *"}
			if path != "/runs/crons" {
				delete(body, "schedule")
			}
			code, out := f.do("POST", path, body)
			if code != 422 || !strings.Contains(mustJSON(out), "webhook") {
				t.Errorf("POST %s with webhook %v: %d %v, want 422 naming webhook", path, hook, code, out)
			}
		}
	}
}
