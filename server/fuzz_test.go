package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzJSONHandlers posts arbitrary bodies to the JSON endpoints: whatever the
// body, the answer is never a 5xx and the server does not crash.
func FuzzJSONHandlers(f *testing.F) {
	fx := newFixture(f, nil)
	seeds := []string{
		`{}`, `null`, `[]`, `{"assistant_id":"echo","input":{"messages":"hi"}}`,
		`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}}`,
		`{"assistant_id":"approve","command":{"resume":"yes"}}`, `{"namespace":["a"],"key":"k","value":{"x":1}}`,
		`{"limit":-1}`, `{"thread_id":"a/b"}`, `{"stream_mode":["values",3]}`, `{"message":"hi","session_id":"s"}`,
		`{"values":{"approved":1}}`, `{"before":{"configurable":{"checkpoint_id":"x"}}}`, "\x00\xff",
	}
	for i, s := range seeds {
		f.Add(i, s)
	}
	routes := []struct{ method, path string }{
		{"POST", "/threads"}, {"POST", "/threads/search"}, {"POST", "/assistants/search"},
		{"POST", "/runs/wait"}, {"POST", "/threads/fz/runs/wait"}, {"POST", "/threads/fz/runs"},
		{"POST", "/threads/fz/state"}, {"POST", "/threads/fz/history"}, {"PUT", "/store/items"},
		{"POST", "/store/items/search"}, {"POST", "/store/namespaces"}, {"DELETE", "/store/items"},
		{"POST", "/chat"}, {"POST", "/hitl/respond"}, {"POST", "/ecs/respond"}, {"POST", "/hitl/continue"},
	}
	h := fx.srv.Handler()
	fx.do("POST", "/threads", map[string]any{"thread_id": "fz"})
	f.Fuzz(func(t *testing.T, route int, body string) {
		if route < 0 {
			route = -route
		}
		r := routes[route%len(routes)]
		req := httptest.NewRequest(r.method, r.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s with %q: %d %s", r.method, r.path, body, rec.Code, rec.Body.String())
		}
		if rec.Code == http.StatusOK && r.path == "/runs/wait" && strings.Contains(rec.Body.String(), `"error":{"code"`) {
			t.Fatalf("200 with an error body: %s", rec.Body.String())
		}
	})
}
