package faulttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// faultyModel is an OpenAI-compatible server that breaks replies at random:
// 429s with and without Retry-After, 500s, connection resets before and in
// the middle of a stream, streams cut before their end, garbage JSON, error
// events, and very slow tokens (every token is 2ms late, some streams 40ms
// per write). A reply that was broken says BROKEN:
// no such text may ever be saved as a reply.
type faultyModel struct {
	srv   *httptest.Server
	model *llmtest.Server
	mu    sync.Mutex
	n     int
	// faults counts the faults served, by kind.
	faults map[string]int
}

func newFaultyModel(t *testing.T, rate float64) *faultyModel {
	m := &faultyModel{model: llmtest.NewServer(t, llmtest.WithTokenDelay(2*time.Millisecond)), faults: map[string]int{}}
	target, _ := url.Parse(m.model.URL())
	target.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(target)
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			proxy.ServeHTTP(w, r)
			return
		}
		m.mu.Lock()
		m.n++
		n := m.n
		kind := "ok"
		if rand.Float64() < rate {
			kinds := []string{"429 retry-after", "429", "500", "reset before reply", "reset mid-stream", "cut before done", "garbage", "error event", "very slow tokens"}
			kind = kinds[rand.IntN(len(kinds))]
		}
		m.faults[kind]++
		m.mu.Unlock()
		switch kind {
		case "429 retry-after":
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}`, http.StatusTooManyRequests)
			return
		case "429":
			http.Error(w, `{"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}`, http.StatusTooManyRequests)
			return
		case "500":
			http.Error(w, `{"error": {"message": "The server had an error", "type": "server_error"}}`, http.StatusInternalServerError)
			return
		}
		faults := map[string]llmtest.Fault{"reset before reply": llmtest.FaultResetBeforeReply, "reset mid-stream": llmtest.FaultResetMidStream,
			"cut before done": llmtest.FaultCutBeforeDone, "garbage": llmtest.FaultGarbage, "error event": llmtest.FaultErrorEvent}
		if f, ok := faults[kind]; ok {
			m.model.Push(llmtest.Broken(llmtest.Text(fmt.Sprintf("BROKEN reply %d, which must never be saved", n)), f))
		} else {
			m.model.Push(llmtest.Text(fmt.Sprintf("OK reply %d.", n)))
		}
		if kind == "very slow tokens" {
			w = slowWriter{w}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

// slowWriter delivers each write of a stream 40ms late.
type slowWriter struct{ http.ResponseWriter }

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(40 * time.Millisecond)
	n, err := s.ResponseWriter.Write(p)
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	return n, err
}

func (s slowWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (m *faultyModel) table() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var parts []string
	for k, n := range m.faults {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

const chatGraph = `dsl_version: "graphctl/v1"
name: "chat"
defaults: call_retry: {max_attempts: 8, initial_interval: "20ms", max_interval: "200ms", max_retry_after: "1s"}
state: {
	messages: {type: "messages"}
	turn: {type: "string"}
	log: {type: "list<string>", reducer: "append"}
}
start: "chat"
nodes: {
	chat: {type: "llm", config: {model: "openai:gpt-4o-mini", system: "You answer briefly."}, retry: {max_attempts: 6, initial_interval: "10ms"}, next: "note"}
	note: {type: "set", config: set: log: "[turn]", next: "END"}
}
`

// TestModelServerFaults runs conversations through graphctl serve against
// a model server that breaks a third of its answers.
func TestModelServerFaults(t *testing.T) {
	turnsPerThread := 10
	if long {
		turnsPerThread = 25
	}
	model := newFaultyModel(t, 0.35)
	graphs := writeGraph(t, "chat", chatGraph)
	data := filepath.Join(t.TempDir(), "data")
	srv := startServer(t, graphs, data, []string{"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.srv.URL + "/v1", "GRAPHCTL_LLM="})
	c := newClient()
	var v violations
	threads := []string{"m0", "m1", "m2", "m3", "m4", "m5"}
	var mu sync.Mutex
	succeeded := map[string][]string{}
	statuses := map[string]int{}
	var wg sync.WaitGroup
	for _, th := range threads {
		c.must(t, srv.url, http.MethodPost, "/threads", map[string]any{"thread_id": th}, http.StatusOK)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < turnsPerThread; i++ {
				turn := fmt.Sprintf("%s/%d", th, i)
				code, out, err := c.call(context.Background(), srv.url, http.MethodPost, "/threads/"+th+"/runs/wait",
					map[string]any{"assistant_id": "chat", "input": turnInput(turn)})
				if err != nil || code != http.StatusOK {
					v.add("the server keeps answering", "run %s: %d %v %v", turn, code, out, err)
					continue
				}
				status := "success"
				if e := field(out, "__error__"); e != nil {
					status = "error"
					t.Logf("run %s ended in error: %v", turn, field(e, "message"))
				}
				mu.Lock()
				statuses[status]++
				if status == "success" {
					succeeded[th] = append(succeeded[th], turn)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	waitFinal(t, c, srv.url, threads)
	for _, th := range threads {
		st := c.must(t, srv.url, http.MethodGet, "/threads/"+th+"/state", nil, http.StatusOK)
		replies := 0
		for _, m := range asList(field(st, "values", "messages")) {
			content := str(field(m, "content"))
			if strings.Contains(content, "BROKEN") {
				v.add("a broken model answer is never a reply", "thread %s saved %q", th, content)
			}
			if str(field(m, "role")) == "assistant" || str(field(m, "type")) == "ai" {
				replies++
			}
		}
		if replies != len(succeeded[th]) {
			v.add("no input applied twice", "thread %s has %d replies for %d successful turns", th, replies, len(succeeded[th]))
		}
	}
	for _, e := range c.serverErrors() {
		v.add("the server keeps answering", "%s", e)
	}
	srv.stop()
	_, latest := checkDataDir(t, data, &v)
	for _, th := range threads {
		checkTurns(th, stringList(latest[th]["log"]), succeeded[th], &v)
	}
	t.Logf("runs %v; model answers: %s", statuses, model.table())
	v.report(t, "model server: 429 (with/without Retry-After), 500, resets before and mid-stream, cut streams, garbage, error events, very slow tokens", len(threads)*turnsPerThread)
}
