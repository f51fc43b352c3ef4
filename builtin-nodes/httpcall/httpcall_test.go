package httpcall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/workspace"
)

// graphFile writes a graph whose fetch node has the given config (CUE) and
// returns its path.
func graphFile(t *testing.T, config string) string {
	t.Helper()
	src := fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "http_test"
state: {
	city:   {type: "string"}
	result: {type: "any"}
	status: {type: "int"}
}
start: "fetch"
nodes: {
	fetch: {
		type: "http"
		config: %s
		next: "END"
	}
}
`, config)
	path := filepath.Join(t.TempDir(), "http_test.cue")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type runOutcome struct {
	res    *engine.Result
	events []event.Event
	eng    *engine.Engine
}

// runGraph loads the graph file as graphctl does and runs one turn on a real
// Badger data directory.
func runGraph(t *testing.T, path string, input map[string]any) runOutcome {
	t.Helper()
	g, diags, err := runtime.Load(path)
	if err != nil || diags.HasErrors() {
		t.Fatalf("load: %v\n%v", err, diags)
	}
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	eng := ws.Engine(g, engine.Options{})
	t.Cleanup(func() { eng.Close() })
	var out runOutcome
	out.eng = eng
	out.res, err = eng.Run(context.Background(), engine.Request{ThreadID: "t1", Input: input}, func(ev event.Event) {
		out.events = append(out.events, ev)
	})
	if out.res == nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

func eventsOf(evs []event.Event, typ string) []event.Event {
	var out []event.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func TestPostJSONWithSecretHeaderAndPick(t *testing.T) {
	t.Setenv("WEATHER_TOKEN", "tok-123")
	t.Setenv("WEATHER_KEY", "key-456")
	var got struct {
		method, path, query, auth, key, agent, ctype string
		body                                         map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.query = r.Method, r.URL.Path, r.URL.RawQuery
		got.auth, got.key, got.agent, got.ctype = r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Client"), r.Header.Get("Content-Type")
		json.NewDecoder(r.Body).Decode(&got.body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data": {"forecast": [{"day": "mon", "temp": 21}, {"day": "tue", "temp": 19}]}}`)
	}))
	defer srv.Close()
	path := graphFile(t, fmt.Sprintf(`{
			method: "POST"
			url: "%s/v1/forecast/${city}"
			query: {units: "metric"}
			headers: {"X-Api-Key": {env: "WEATHER_KEY"}, "X-Client": "graphctl ${city}"}
			bearer_token: {env: "WEATHER_TOKEN"}
			json_body: {city: "city", days: "2"}
			output: "result"
			pick: "/data/forecast/1"
			status_output: "status"
		}`, srv.URL))
	out := runGraph(t, path, map[string]any{"city": "Osaka"})
	if out.res.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %v", out.res.Status, out.res.Err)
	}
	if got.method != "POST" || got.path != "/v1/forecast/Osaka" || got.query != "units=metric" {
		t.Errorf("request = %s %s?%s", got.method, got.path, got.query)
	}
	if got.auth != "Bearer tok-123" || got.key != "key-456" || got.agent != "graphctl Osaka" || got.ctype != "application/json" {
		t.Errorf("headers: auth %q, key %q, client %q, content-type %q", got.auth, got.key, got.agent, got.ctype)
	}
	if got.body["city"] != "Osaka" || got.body["days"] != float64(2) {
		t.Errorf("body = %v", got.body)
	}
	res, _ := json.Marshal(out.res.State["result"])
	if string(res) != `{"day":"tue","temp":19}` {
		t.Errorf("result = %s, want the picked forecast", res)
	}
	if fmt.Sprint(out.res.State["status"]) != "200" {
		t.Errorf("status field = %v", out.res.State["status"])
	}
	if r := eventsOf(out.events, "http_result"); len(r) != 1 || fmt.Sprint(r[0].Payload["status"]) != "200" {
		t.Errorf("http_result events = %v", r)
	}
}

// A 429 with Retry-After is waited out (bounded by max_retry_after) and
// retried; each retry is an event.
func TestRetryAfterIsHonouredAndBounded(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusBadGateway)
		default:
			io.WriteString(w, `{"ok": true}`)
		}
	}))
	defer srv.Close()
	path := graphFile(t, fmt.Sprintf(`{url: "%s", output: "result", retry: {max_attempts: 3, initial_interval: "5ms", max_retry_after: "30ms"}}`, srv.URL))
	out := runGraph(t, path, nil)
	if out.res.Status != engine.StatusCompleted {
		t.Fatalf("status %s: %v", out.res.Status, out.res.Err)
	}
	if calls.Load() != 3 {
		t.Errorf("server saw %d calls, want 3", calls.Load())
	}
	retries := eventsOf(out.events, "http_retry")
	if len(retries) != 2 {
		t.Fatalf("retry events = %v, want 2", retries)
	}
	if w := fmt.Sprint(retries[0].Payload["wait_ms"]); w != "30" {
		t.Errorf("first retry waited %s ms, want Retry-After bounded to 30", w)
	}
	if r := fmt.Sprint(retries[0].Payload["reason"]); r != "status 429" {
		t.Errorf("first retry reason = %s", r)
	}
}

// Failures: what is transient is retried then fails the run resumably; what
// is permanent fails at once; a too-large or non-JSON answer is an error.
func TestFailures(t *testing.T) {
	tests := []struct {
		name      string
		handler   func(w http.ResponseWriter)
		extra     string
		wantCalls int32
		wantCode  string
	}{
		{"server errors outlast retries", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, "", 3, "http_unavailable"},
		{"not found is not retried", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotFound); io.WriteString(w, "no such city") }, "", 1, "http_status"},
		{"too large", func(w http.ResponseWriter) { io.WriteString(w, `"`+strings.Repeat("x", 2000)+`"`) }, "max_response_bytes: 1000", 1, "http_response"},
		{"not JSON", func(w http.ResponseWriter) { io.WriteString(w, "<html>") }, "", 1, "http_response"},
		{"pick misses", func(w http.ResponseWriter) { io.WriteString(w, `{"a": 1}`) }, `pick: "/b"`, 1, "http_response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				tt.handler(w)
			}))
			defer srv.Close()
			path := graphFile(t, fmt.Sprintf(`{url: "%s", output: "result", retry: {initial_interval: "1ms"}, %s}`, srv.URL, tt.extra))
			out := runGraph(t, path, nil)
			if out.res.Status != engine.StatusError {
				t.Fatalf("status %s, want error", out.res.Status)
			}
			if !strings.Contains(out.res.Err.Error(), tt.wantCode) {
				t.Errorf("error %q does not carry code %s", out.res.Err, tt.wantCode)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("server saw %d calls, want %d", calls.Load(), tt.wantCalls)
			}
		})
	}
}

// A run that failed on the API continues from its checkpoint once the API is back.
func TestFailedCallIsResumable(t *testing.T) {
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"temp": 18}`)
	}))
	defer srv.Close()
	path := graphFile(t, fmt.Sprintf(`{url: "%s", output: "result", retry: {max_attempts: 1}}`, srv.URL))
	out := runGraph(t, path, map[string]any{"city": "Kyoto"})
	if out.res.Status != engine.StatusError {
		t.Fatalf("status %s, want error", out.res.Status)
	}
	up.Store(true)
	res, err := out.eng.Run(context.Background(), engine.Request{ThreadID: "t1"}, nil)
	if res == nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusCompleted || res.State["city"] != "Kyoto" || fmt.Sprint(res.State["result"]) != "map[temp:18]" {
		t.Fatalf("continued run: status %s, state %v, err %v", res.Status, res.State, res.Err)
	}
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"inline secret header", `{url: "http://x", output: "result", headers: {Authorization: "Bearer sk-live"}}`, "from the environment"},
		{"body with GET", `{url: "http://x", output: "result", body: "hi"}`, "body with GET"},
		{"unknown output", `{url: "http://x", output: "resutl"}`, "not a declared state field"},
		{"pick is not a pointer", `{url: "http://x", output: "result", pick: "data.items"}`, "JSON pointer"},
		{"bad timeout", `{url: "http://x", output: "result", timeout: "soon"}`, "positive duration"},
		{"template names unknown field", `{url: "http://x/${town}", output: "result"}`, "town"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := graphFile(t, tt.config)
			_, diags, err := runtime.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !diags.HasErrors() {
				t.Fatalf("no error for %s", tt.config)
			}
			s := diags.Error()
			if !strings.Contains(s, tt.want) || !strings.Contains(s, "http_test.cue:") {
				t.Errorf("diagnostics %q lack %q or the file position", s, tt.want)
			}
		})
	}
}
