package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestHostileRequests sends what a careless or hostile client sends —
// malformed JSON, wrong types, huge or nested bodies, unknown and malformed
// ids, unicode, out-of-range numbers — to every kind of endpoint: each
// answer is the 4xx it names, with a JSON error (detail, error.code,
// error.message), in bounded time.
func TestHostileRequests(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxBody = 1 << 20 })
	if code, _ := f.do("POST", "/threads", map[string]any{"thread_id": "h1"}); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	if code, _ := f.do("POST", "/threads/h1/runs/wait", map[string]any{"assistant_id": "echo", "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}); code != 200 {
		t.Fatalf("run: %d", code)
	}
	huge := `{"metadata":{"a":"` + strings.Repeat("x", 2<<20) + `"}}`
	deep := `{"metadata":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	long := strings.Repeat("a", 300)
	unknown := "00000000-0000-4000-8000-000000000000"
	snowman := url.PathEscape("☃")
	tests := []struct {
		name, method, path, body string
		want                     int
		mentions                 string
	}{
		// Malformed JSON.
		{"truncated object", "POST", "/threads", `{"metadata":`, 400, "not valid JSON"},
		{"not JSON", "POST", "/threads/search", `limit=1`, 400, "not valid JSON"},
		{"data after the value", "POST", "/threads/search", `{"limit":1} xyz`, 400, "more after"},
		{"two values", "POST", "/assistants/search", `{"limit":1}{"limit":2}`, 400, "more after"},
		{"array for an object", "POST", "/threads", `[1,2]`, 422, "the body must be an object"},
		{"string for an object", "POST", "/runs/crons/search", `"x"`, 422, "the body must be an object"},
		{"object for a batch", "POST", "/runs/batch", `{"assistant_id":"echo"}`, 422, "the body must be a list"},
		{"nested too deep", "POST", "/threads", deep, 400, "depth"},
		{"over the body limit", "POST", "/threads", huge, 413, "exceeds the limit"},
		// Wrong types in fields.
		{"limit a string", "POST", "/assistants/search", `{"limit":"ten"}`, 422, "limit must be an integer"},
		{"limit a fraction", "POST", "/threads/search", `{"limit":1.5}`, 422, "limit must be an integer"},
		{"limit past int64", "POST", "/threads/search", `{"limit":99999999999999999999}`, 422, "limit must be an integer"},
		{"metadata a string", "POST", "/threads", `{"metadata":"m"}`, 422, "metadata must be an object"},
		{"ids a string", "POST", "/threads/search", `{"ids":"h1"}`, 422, "ids must be a list"},
		{"select a string", "POST", "/assistants/search", `{"select":"name"}`, 422, "select must be a list"},
		{"select unknown", "POST", "/threads/search", `{"select":["password"]}`, 422, "select"},
		{"graph_id a number", "POST", "/assistants", `{"graph_id":7}`, 422, "graph_id must be a string"},
		{"assistant_id a number", "POST", "/threads/h1/runs", `{"assistant_id":5}`, 422, "assistant_id must be a string"},
		{"input a number", "POST", "/threads/h1/runs/wait", `{"assistant_id":"echo","input":5}`, 422, "input"},
		{"stream_mode a number", "POST", "/threads/h1/runs/stream", `{"assistant_id":"echo","stream_mode":5}`, 422, "stream_mode"},
		{"interrupt_before a number", "POST", "/threads/h1/runs", `{"assistant_id":"echo","interrupt_before":5}`, 422, "interrupt_before"},
		{"after_seconds a string", "POST", "/runs", `{"assistant_id":"echo","after_seconds":"soon"}`, 422, "after_seconds"},
		{"command a string", "POST", "/threads/h1/runs/wait", `{"assistant_id":"echo","command":"go"}`, 422, "command must be an object"},
		{"goto a number", "POST", "/threads/h1/runs/wait", `{"assistant_id":"echo","command":{"goto":[{"node":5}]}}`, 422, "command.goto"},
		{"namespace a string", "PUT", "/store/items", `{"namespace":"a","key":"k","value":{}}`, 422, "namespace must be a list"},
		{"value a string", "PUT", "/store/items", `{"namespace":["a"],"key":"k","value":"v"}`, 422, "value must be an object"},
		{"schedule a number", "POST", "/runs/crons", `{"assistant_id":"echo","schedule":5}`, 422, "schedule must be a string"},
		{"end_time not a time", "POST", "/runs/crons", `{"assistant_id":"echo","schedule":"0 0 * * *","end_time":"yesterday"}`, 422, "RFC 3339"},
		{"version a string", "POST", "/assistants/echo/latest", `{"version":"one"}`, 422, "version must be an integer"},
		{"enabled a string", "PATCH", "/runs/crons/" + unknown, `{"enabled":"yes"}`, 422, "enabled must be a boolean"},
		// Out of range numbers.
		{"negative limit", "POST", "/store/items/search", `{"limit":-1}`, 422, "limit must be between"},
		{"huge limit", "POST", "/threads/search", `{"limit":1000000}`, 422, "limit must be between"},
		{"negative offset", "POST", "/assistants/search", `{"offset":-5}`, 422, "offset must not be negative"},
		{"history query limit not a number", "GET", "/threads/h1/history?limit=ten", "", 422, "limit must be an integer"},
		{"history query limit too big", "GET", "/threads/h1/history?limit=5000", "", 422, "limit must be between"},
		{"zero history limit", "POST", "/threads/h1/history", `{"limit":0}`, 422, "limit must be between"},
		{"negative runs limit", "GET", "/threads/h1/runs?limit=-1", "", 422, "limit must be between"},
		{"runs limit not a number", "GET", "/threads/h1/runs?limit=ten", "", 422, "limit must be an integer"},
		{"runs limit past int64", "GET", "/threads/h1/runs?limit=99999999999999999999", "", 422, "limit must be an integer"},
		{"huge thread ttl", "POST", "/threads", `{"ttl":{"ttl":1e300}}`, 422, "ttl must be at most"},
		{"negative thread ttl", "POST", "/threads", `{"ttl":-1}`, 422, "ttl must be a positive"},
		{"huge item ttl", "PUT", "/store/items", `{"namespace":["a"],"key":"k","value":{},"ttl":1e300}`, 422, "ttl must be between"},
		{"huge recursion limit", "POST", "/runs/wait", `{"assistant_id":"echo","config":{"recursion_limit":1e300}}`, 422, "recursion_limit"},
		{"negative max_depth", "POST", "/store/namespaces", `{"max_depth":-1}`, 422, "max_depth"},
		{"cron interrupt_before unknown node", "POST", "/runs/crons", `{"assistant_id":"echo","schedule":"0 0 * * *","interrupt_before":["nope"]}`, 422, "interrupt_before"},
		{"cron context a string", "POST", "/runs/crons", `{"assistant_id":"echo","schedule":"0 0 * * *","context":"x"}`, 422, "context"},
		{"impossible schedule", "POST", "/runs/crons", `{"assistant_id":"echo","schedule":"99 99 99 99 99"}`, 422, "schedule"},
		// Unknown and malformed ids, unicode.
		{"unknown thread", "GET", "/threads/" + unknown, "", 404, "not found"},
		{"unknown thread state", "GET", "/threads/" + unknown + "/state", "", 404, "not found"},
		{"unknown thread history", "POST", "/threads/" + unknown + "/history", `{}`, 404, "not found"},
		{"unknown thread stream", "GET", "/threads/" + unknown + "/stream", "", 404, "not found"},
		{"unknown thread run", "POST", "/threads/" + unknown + "/runs/wait", `{"assistant_id":"echo"}`, 404, "not found"},
		{"unknown run", "GET", "/threads/h1/runs/" + unknown, "", 404, "not found"},
		{"unknown run join", "GET", "/threads/h1/runs/" + unknown + "/join", "", 404, "not found"},
		{"unknown run cancel", "POST", "/threads/h1/runs/" + unknown + "/cancel", "", 404, "not found"},
		{"unknown run delete", "DELETE", "/threads/h1/runs/" + unknown, "", 404, "not found"},
		{"unknown checkpoint", "GET", "/threads/h1/state/" + unknown, "", 404, "not found"},
		{"malformed checkpoint", "GET", "/threads/h1/state/%FF%FE", "", 404, "not found"},
		{"unknown assistant", "GET", "/assistants/" + unknown, "", 404, "not found"},
		{"unknown assistant graph", "GET", "/assistants/" + snowman + "/graph", "", 404, "not found"},
		{"unknown assistant run", "POST", "/runs/wait", `{"assistant_id":"☃"}`, 404, "not found"},
		{"unknown cron", "DELETE", "/runs/crons/" + unknown, "", 404, "not found"},
		{"unicode thread", "GET", "/threads/" + snowman, "", 404, "not found"},
		{"thread id with a slash", "POST", "/threads", `{"thread_id":"../etc"}`, 422, "not valid"},
		{"thread id with NUL", "POST", "/threads", `{"thread_id":"a\u0000b"}`, 422, "not valid"},
		{"thread id too long", "POST", "/threads", `{"thread_id":"` + long + `"}`, 422, "not valid"},
		{"assistant id with a slash", "POST", "/assistants", `{"graph_id":"echo","assistant_id":"a/b"}`, 422, "not valid"},
		{"namespace label with a dot", "PUT", "/store/items", `{"namespace":["a.b"],"key":"k","value":{}}`, 422, "namespace label"},
		{"reserved namespace", "PUT", "/store/items", `{"namespace":["graphctl"],"key":"k","value":{}}`, 403, "reserved"},
		{"bad Last-Event-ID", "GET", "/threads/h1/stream", "", 422, "Last-Event-ID"},
		{"bad thread stream mode", "GET", "/threads/h1/stream?stream_mode=everything", "", 422, "stream_mode"},
		{"bad run status", "GET", "/threads/h1/runs?status=finished", "", 422, "status"},
		{"bad cancel action", "POST", "/threads/h1/runs/" + unknown + "/cancel?action=explode", "", 422, "action"},
		// Methods and routes.
		{"no such route", "GET", "/no/such/route", "", 404, "no route"},
		{"wrong method", "PUT", "/threads", "", 405, "not a method"},
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, f.http.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if tt.name == "bad Last-Event-ID" {
				req.Header.Set("Last-Event-ID", "seven")
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.want, raw)
			}
			var body struct {
				Detail string `json:"detail"`
				Error  struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(raw, &body); err != nil || body.Detail == "" || body.Error.Code == "" || body.Error.Message == "" {
				t.Fatalf("not a JSON error (detail, error.code, error.message): %.300s (%v)", raw, err)
			}
			if !strings.Contains(body.Detail, tt.mentions) {
				t.Fatalf("error %q does not mention %q", body.Detail, tt.mentions)
			}
		})
	}
	// The thread is still there and whole; GET /threads/{id}/history (the
	// query form) reads it as POST does.
	if code, body := f.do("GET", "/threads/h1/state", nil); code != 200 || !strings.Contains(fmt.Sprint(body), "You said: hi") {
		t.Fatalf("thread after the hostile requests: %d %v", code, body)
	}
	code, body := f.do("GET", "/threads/h1/history?limit=1", nil)
	if states, _ := body.([]any); code != 200 || len(states) != 1 || !strings.Contains(fmt.Sprint(states[0]), "You said: hi") {
		t.Fatalf("GET history?limit=1: %d %v", code, body)
	}
}
