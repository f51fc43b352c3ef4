package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/server/sse"
)

func TestEndpointStatuses(t *testing.T) {
	f := newFixture(t, nil)
	if code, _ := f.do("POST", "/threads", map[string]any{"thread_id": "t-exists"}); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	tests := []struct {
		method, path string
		body         any
		want         int
		contains     string
	}{
		{"GET", "/ok", nil, 200, `"ok":true`},
		{"GET", "/info", nil, 200, `"chatbot"`},
		{"GET", "/metrics", nil, 200, "graphctl_steps_total"},
		{"POST", "/assistants/search", map[string]any{}, 200, `"assistant_id":"echo"`},
		{"POST", "/assistants/search", map[string]any{"graph_id": "approve"}, 200, `"graph_id":"approve"`},
		{"POST", "/assistants/search", `{"limit": "x"}`, 422, "limit must be an integer"},
		{"POST", "/assistants/search", `{"limit": -1}`, 422, "limit must be between"},
		{"POST", "/threads/search", `{"limit": -1}`, 422, "limit must be between"},
		{"POST", "/threads/search", `{"offset": -1}`, 422, "offset must not be negative"},
		{"POST", "/store/items/search", `{"namespace_prefix": ["a"], "limit": -1}`, 422, "limit"},
		{"POST", "/store/namespaces", `{"limit": -5}`, 422, "limit"},
		{"GET", "/assistants/echo", nil, 200, `"assistant_id":"echo"`},
		{"GET", "/assistants/nope", nil, 404, "not_found"},
		{"GET", "/assistants/approve/graph", nil, 200, `"__start__"`},
		{"GET", "/assistants/echo/schemas", nil, 200, `"state_schema"`},
		{"GET", "/no/such/route", nil, 404, "no route"},
		{"POST", "/threads", `{"thread_id": "t-exists"}`, 409, "already exists"},
		{"POST", "/threads", `{"thread_id": "t-exists", "if_exists": "do_nothing"}`, 200, `"t-exists"`},
		{"POST", "/threads", `not json`, 400, "not valid JSON"},
		{"GET", "/threads/t-exists", nil, 200, `"status":"idle"`},
		{"GET", "/threads/missing", nil, 404, "not found"},
		{"GET", "/threads/t-exists/state", nil, 200, `"values":{}`},
		{"POST", "/threads/search", map[string]any{"ids": []string{"t-exists"}}, 200, `"thread_id":"t-exists"`},
		{"POST", "/threads/missing/runs", map[string]any{"assistant_id": "echo"}, 404, "not found"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "nope"}, 404, "assistant"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "stream_mode": "bogus"}, 422, "stream_mode"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "multitask_strategy": "bogus"}, 422, "multitask_strategy"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "webhook": "ftp://127.0.0.1/hook"}, 422, "webhook"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "after_seconds": -5}, 422, "after_seconds"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "after_seconds": "soon"}, 422, "after_seconds"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "durability": "bogus"}, 422, "durability"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "on_completion": "bogus"}, 422, "on_completion"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "checkpoint_during": "yes"}, 422, "checkpoint_during"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "stream_resumable": 1}, 422, "stream_resumable"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "feedback_keys": 5}, 422, "feedback_keys"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "context": "x"}, 422, "context"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "interrupt_before": 5}, 422, "interrupt_before"},
		{"POST", "/runs/wait", map[string]any{}, 422, "assistant_id is required"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "input": map[string]any{"nofield": 1}}, 400, "nofield"},
		{"POST", "/threads/t-exists/runs", map[string]any{"assistant_id": "echo", "input": map[string]any{"messages": []any{map[string]any{"role": "robot", "content": "x"}}}}, 400, "robot"},
		{"GET", "/threads/t-exists/runs/nope", nil, 404, "not found"},
		{"POST", "/threads/t-exists/runs/nope/cancel", nil, 404, "not found"},
		{"GET", "/threads/t-exists/runs/1/stream", nil, 404, "not found"},
		{"PUT", "/store/items", map[string]any{"namespace": []string{"docs"}, "key": "k"}, 422, "value"},
		{"PUT", "/store/items", map[string]any{"namespace": []string{"graphctl", "runs"}, "key": "k", "value": map[string]any{}}, 403, "reserved"},
		{"GET", "/store/items?namespace=docs&key=none", nil, 200, "null"},
		{"POST", "/threads/t-exists/history", `{"limit": -1}`, 422, "limit must be between"},
		{"POST", "/threads/t-exists/history", `{"limit": 0}`, 422, "limit must be between"},
		{"GET", "/threads/t-exists/runs?limit=-1", nil, 422, "limit must be between"},
		{"GET", "/threads/t-exists/runs?offset=-1", nil, 422, "offset must not be negative"},
		{"GET", "/threads/t-exists/runs?limit=x", nil, 422, "limit must be an integer"},
		{"GET", "/threads/t-exists/runs?limit=2&offset=0", nil, 200, "[]"},
		{"POST", "/chat", map[string]any{"session_id": "s"}, 400, "message"},
		{"POST", "/hitl/respond", map[string]any{"session_id": "nobody", "response": map[string]any{}}, 404, "not found"},
		{"POST", "/ecs/continue", map[string]any{}, 400, "session_id"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			code, body := f.do(tt.method, tt.path, tt.body)
			raw, _ := json.Marshal(body)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %s", code, tt.want, raw)
			}
			if !strings.Contains(string(raw), tt.contains) && !strings.Contains(asString(body), tt.contains) {
				t.Fatalf("body %s does not contain %q", raw, tt.contains)
			}
			if code >= 400 {
				if field(body, "error", "code") == nil || field(body, "error", "message") == nil || field(body, "detail") == nil {
					t.Fatalf("error body %s lacks detail, error.code and error.message", raw)
				}
			}
		})
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

func TestStreamModes(t *testing.T) {
	f := newFixture(t, nil)
	input := map[string]any{"messages": []any{map[string]any{"role": "human", "content": "hi there"}}}
	tests := []struct {
		modes      any
		wantEvents []string
		check      func(t *testing.T, frames []sse.Frame)
	}{
		{nil, []string{"metadata", "values", "end"}, func(t *testing.T, frames []sse.Frame) {
			last := lastOf(frames, "values")
			if !strings.Contains(last, "You said: hi there") || !strings.Contains(last, `"type":"ai"`) {
				t.Fatalf("final values %s", last)
			}
		}},
		{"updates", []string{"metadata", "updates", "end"}, func(t *testing.T, frames []sse.Frame) {
			if u := lastOf(frames, "updates"); !strings.Contains(u, `"answer":{"messages":[{`) || strings.Contains(u, `"role":"user"`) {
				t.Fatalf("updates %s should hold only the answer node's new message", u)
			}
		}},
		{"messages-tuple", []string{"metadata", "messages", "end"}, func(t *testing.T, frames []sse.Frame) {
			var tuple []map[string]any
			json.Unmarshal([]byte(lastOf(frames, "messages")), &tuple)
			if len(tuple) != 2 || tuple[0]["content"] != "You said: hi there" || tuple[1]["langgraph_node"] != "answer" {
				t.Fatalf("messages tuple %v", tuple)
			}
		}},
		{"messages", []string{"metadata", "messages/metadata", "messages/complete", "end"}, nil},
		{"debug", []string{"metadata", "debug", "end"}, func(t *testing.T, frames []sse.Frame) {
			all := joinData(frames)
			for _, typ := range []string{`"type":"task"`, `"type":"task_result"`, `"type":"checkpoint"`} {
				if !strings.Contains(all, typ) {
					t.Fatalf("debug frames lack %s", typ)
				}
			}
		}},
		{"events", []string{"metadata", "events", "end"}, func(t *testing.T, frames []sse.Frame) {
			if all := joinData(frames); !strings.Contains(all, "on_chain_start") || !strings.Contains(all, "on_chat_model_stream") {
				t.Fatalf("events frames %s", all)
			}
		}},
	}
	for _, tt := range tests {
		name, _ := tt.modes.(string)
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			code, frames := f.stream("/runs/stream", map[string]any{"assistant_id": "echo", "input": input, "stream_mode": tt.modes})
			if code != 200 {
				t.Fatalf("status %d", code)
			}
			got := dedupe(eventNames(frames))
			if strings.Join(got, ",") != strings.Join(tt.wantEvents, ",") {
				t.Fatalf("events %v, want %v", got, tt.wantEvents)
			}
			for i, fr := range frames {
				if fr.ID == "" || fr.ID != itoa(i+1) {
					t.Fatalf("frame %d has id %q", i, fr.ID)
				}
			}
			if tt.check != nil {
				tt.check(t, frames)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

func lastOf(frames []sse.Frame, event string) string {
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i].Event == event {
			return string(frames[i].Data)
		}
	}
	return ""
}

func joinData(frames []sse.Frame) string {
	var b strings.Builder
	for _, f := range frames {
		b.Write(f.Data)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestInterruptResumeStateHistory(t *testing.T) {
	f := newFixture(t, nil)
	f.do("POST", "/threads", map[string]any{"thread_id": "a1"})
	code, out := f.do("POST", "/threads/a1/runs/wait", map[string]any{"assistant_id": "approve", "input": map[string]any{}})
	if code != 200 {
		t.Fatalf("wait: %d %v", code, out)
	}
	ins, _ := field(out, "__interrupt__").([]any)
	if len(ins) != 1 || field(ins[0], "value", "message") != "Approve it? (yes/no)" || field(ins[0], "id") == "" {
		t.Fatalf("__interrupt__ = %v", out)
	}
	_, th := f.do("GET", "/threads/a1", nil)
	if field(th, "status") != "interrupted" {
		t.Fatalf("thread status %v", field(th, "status"))
	}
	_, st := f.do("GET", "/threads/a1/state", nil)
	if next, _ := field(st, "next").([]any); len(next) != 1 || next[0] != "ask" {
		t.Fatalf("state next %v", field(st, "next"))
	}
	// New input while waiting starts a new turn, as in LangGraph: the graph asks again.
	code, out = f.do("POST", "/threads/a1/runs/wait", map[string]any{"assistant_id": "approve", "input": map[string]any{"approved": "x"}})
	if again, _ := field(out, "__interrupt__").([]any); code != 200 || len(again) != 1 || field(again[0], "id") == field(ins[0], "id") {
		t.Fatalf("input on a waiting thread: %d %v", code, out)
	}
	code, frames := f.stream("/threads/a1/runs/stream", map[string]any{"assistant_id": "approve", "command": map[string]any{"resume": "yes"}, "stream_mode": []string{"values", "updates"}})
	if code != 200 || !strings.Contains(lastOf(frames, "values"), "Approved.") {
		t.Fatalf("resume: %d %s", code, joinData(frames))
	}
	_, hist := f.do("POST", "/threads/a1/history", map[string]any{"limit": 10})
	list, _ := hist.([]any)
	if len(list) < 2 {
		t.Fatalf("history has %d states", len(list))
	}
	if !strings.Contains(mustJSON(field(list[0], "values")), "Approved.") || strings.Contains(mustJSON(field(list[len(list)-1], "values")), "Approved.") {
		t.Fatal("history is not newest first")
	}
	_, runsList := f.do("GET", "/threads/a1/runs", nil)
	// The run that stopped at the interrupt ran to completion: success, as
	// on the Agent Server (its thread was the one interrupted).
	if rl, _ := runsList.([]any); len(rl) != 3 || field(rl[0], "status") != "success" || field(rl[2], "status") != "success" {
		t.Fatalf("runs %v", runsList)
	}
	// Update state as a node, then read it back.
	code, _ = f.do("POST", "/threads/a1/state", map[string]any{"values": map[string]any{"approved": "later"}})
	_, st = f.do("GET", "/threads/a1/state", nil)
	if code != 200 || field(st, "values", "approved") != "later" {
		t.Fatalf("update state: %d %v", code, field(st, "values"))
	}
	if code, _ := f.do("DELETE", "/threads/a1", nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := f.do("GET", "/threads/a1/state", nil); code != 404 {
		t.Fatalf("state after delete: %d", code)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestStoreAPI(t *testing.T) {
	f := newFixture(t, nil)
	if code, out := f.do("PUT", "/store/items", map[string]any{"namespace": []string{"docs", "u1"}, "key": "a", "value": map[string]any{"title": "blue whale", "n": 1}}); code != 204 {
		t.Fatalf("put: %d %v", code, out)
	}
	f.do("PUT", "/store/items", map[string]any{"namespace": []string{"docs", "u2"}, "key": "b", "value": map[string]any{"title": "red fox", "n": 2}})
	code, it := f.do("GET", "/store/items?namespace=docs.u1&key=a", nil)
	if code != 200 || field(it, "value", "title") != "blue whale" || field(it, "created_at") == nil {
		t.Fatalf("get: %d %v", code, it)
	}
	tests := []struct {
		body map[string]any
		keys string
	}{
		{map[string]any{"namespace_prefix": []string{"docs"}}, "a,b"},
		{map[string]any{"namespace_prefix": []string{"docs"}, "query": "fox"}, "b"},
		{map[string]any{"namespace_prefix": []string{"docs"}, "filter": map[string]any{"n": 1}}, "a"},
		{map[string]any{"namespace_prefix": []string{"docs", "u2"}}, "b"},
	}
	for _, tt := range tests {
		_, res := f.do("POST", "/store/items/search", tt.body)
		items, _ := field(res, "items").([]any)
		var keys []string
		for _, it := range items {
			keys = append(keys, field(it, "key").(string))
		}
		sortStrings(keys)
		if strings.Join(keys, ",") != tt.keys {
			t.Errorf("search %v: keys %v, want %s", tt.body, keys, tt.keys)
		}
	}
	_, ns := f.do("POST", "/store/namespaces", map[string]any{})
	if s := mustJSON(ns); !strings.Contains(s, `["docs","u1"]`) || strings.Contains(s, "graphctl") {
		t.Fatalf("namespaces %s", s)
	}
	if code, _ := f.do("DELETE", "/store/items", map[string]any{"namespace": []string{"docs", "u1"}, "key": "a"}); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, body := f.do("GET", "/store/items?namespace=docs.u1&key=a", nil); code != 200 || body != nil {
		t.Fatalf("get after delete: %d %v, want 200 null", code, body)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestAuthRateLimitBodyAndPanic(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.APIKeys = []string{"secret"}
		c.RateLimit = 1
		c.RateBurst = 3
		c.MaxBody = 64
	})
	f.srv.engine.GET("/test-panic", func(*gin.Context) { panic("boom") })
	req := func(method, path, key, body string) int {
		r, _ := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := req("GET", "/info", "", ""); got != 401 {
		t.Fatalf("no key: %d", got)
	}
	if got := req("GET", "/info", "wrong", ""); got != 401 {
		t.Fatalf("wrong key: %d", got)
	}
	if got := req("POST", "/threads", "secret", `{"metadata":{"x":"`+strings.Repeat("a", 100)+`"}}`); got != 413 {
		t.Fatalf("large body: %d", got)
	}
	if got := req("GET", "/test-panic", "secret", ""); got != 500 {
		t.Fatalf("panic: %d", got)
	}
	if got := req("GET", "/info", "secret", ""); got != 200 {
		t.Fatalf("third request in a burst of 3: %d", got)
	}
	if got := req("GET", "/info", "secret", ""); got != 429 {
		t.Fatalf("fourth request in a burst of 3: %d", got)
	}
}

func TestCheckAddress(t *testing.T) {
	tests := []struct {
		addr string
		keys []string
		ok   bool
	}{
		{"127.0.0.1:8123", nil, true},
		{"[::1]:8123", nil, true},
		{"localhost:8123", nil, true},
		{"0.0.0.0:8123", nil, false},
		{"10.1.2.3:80", nil, false},
		{"0.0.0.0:8123", []string{"k"}, true},
		{"nonsense", nil, false},
	}
	for _, tt := range tests {
		if err := CheckAddress(tt.addr, tt.keys); (err == nil) != tt.ok {
			t.Errorf("CheckAddress(%q, %v) = %v, want ok=%v", tt.addr, tt.keys, err, tt.ok)
		}
	}
}
