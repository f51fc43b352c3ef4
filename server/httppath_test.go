package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// A run request read in one pass gives the run the kwargs and the answer
// that encoding/json's decoding of it gives, over HTTP: escaped and
// non-ASCII strings, big numbers, repeated members, names in another case,
// members of the wrong type.
func TestRunRequestBodiesOverHTTP(t *testing.T) {
	f := newFixture(t, nil)
	for _, tt := range []struct {
		body   string
		status int
	}{
		{`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"hi"}]}}`, 200},
		{`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"tab\tquote\" \u00e9 \ud83d\ude00 <&>"}],"note":"n"},"metadata":{"n":12345678901234567890,"f":1.50}}`, 200},
		{"{\"assistant_id\":\"echo\",\"input\":{\"messages\":[{\"role\":\"user\",\"content\":\"bad \xff byte\"}]}}", 200},
		{`{"assistant_id":"echo","input":{"messages":["plain"]},"config":{"recursion_limit":5},"metadata":{"a":1},"metadata":{"b":2}}`, 200},
		{`{"Assistant_ID":"echo","input":{"messages":[{"role":"user","content":"case"}]}}`, 200},
		{`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"x"}]},"stream_subgraphs":"yes"}`, 422},
		{`{"assistant_id":"echo","input":[1]}`, 422},
		{`{"assistant_id":"echo","after_seconds":1e400}`, 422},
		{`{"assistant_id":"echo"} {}`, 400},
		{`{"assistant_id":"echo",}`, 400},
	} {
		_, th := f.do(http.MethodPost, "/threads", map[string]any{})
		thread, _ := field(th, "thread_id").(string)
		status, out := f.do(http.MethodPost, "/threads/"+thread+"/runs", tt.body)
		if status != tt.status {
			t.Errorf("%s: status %d (%v), want %d", tt.body, status, out, tt.status)
			continue
		}
		if status != http.StatusOK {
			continue
		}
		var want runBody
		if err := decodeBody(strings.NewReader(tt.body), &want); err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if want.AssistantID == "" {
			want.AssistantID = "echo"
		}
		wantKwargs, _ := json.Marshal(kwargsByJSON(t, &want))
		gotKwargs, _ := json.Marshal(field(out, "kwargs"))
		var wantMap, gotMap map[string]any
		json.Unmarshal(wantKwargs, &wantMap)
		json.Unmarshal(gotKwargs, &gotMap)
		delete(gotMap, "config") // the assistant's config merged in
		delete(wantMap, "config")
		if g, w := mustJSON(gotMap), mustJSON(wantMap); g != w {
			t.Errorf("%s: kwargs\n got %s\nwant %s", tt.body, g, w)
		}
	}
}

// Each run submitted is logged at info with its run, thread and assistant.
func TestRunSubmittedIsLogged(t *testing.T) {
	logs := &syncWriter{w: &bytes.Buffer{}}
	f := newFixture(t, func(c *Config) { c.Log = slog.New(slog.NewJSONHandler(logs, nil)) })
	status, out := f.do(http.MethodPost, "/runs/wait", `{"assistant_id":"echo","input":{"messages":["hi"]}}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, out)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "run submitted" {
			continue
		}
		if rec["level"] != "INFO" || rec["assistant_id"] != "echo" || rec["run_id"] == "" || rec["thread_id"] == "" || rec["run_id"] == nil || rec["thread_id"] == nil {
			t.Errorf("run submitted line: %v", rec)
		}
		return
	}
	t.Errorf("no run submitted line in %s", logs.String())
}

// syncWriter serialises writes to w (the server logs from several
// goroutines).
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
