package llm_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
)

// talkGraph is a one-node chat graph with the given defaults and node settings.
func talkGraph(t *testing.T, defaults, nodeSrc string) *compile.Graph {
	t.Helper()
	src := `dsl_version: "graphctl/v1"
name: "talk"
defaults: {` + defaults + `}
state: messages: {type: "messages"}
start: "talk"
nodes: talk: ` + nodeSrc + "\n"
	g, diags := runtime.LoadSource("talk.cue", []byte(src))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	return g
}

// talk runs one turn (input "hello", or a resume when input is false).
func talk(t *testing.T, eng *engine.Engine, g *compile.Graph, input bool) (*engine.Result, *events) {
	t.Helper()
	req := engine.Request{ThreadID: "t1"}
	if input {
		in, err := engine.TextInput(g, "hello")
		if err != nil {
			t.Fatal(err)
		}
		req.Input = in
	}
	rec := &events{}
	res, err := eng.Run(context.Background(), req, rec.sink)
	if res == nil {
		t.Fatalf("run: %v", err)
	}
	if err != nil && res.Err == nil {
		res.Err = err
	}
	return res, rec
}

func assistantMessages(state map[string]any) []string {
	var out []string
	msgs, _ := state["messages"].([]any)
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "assistant" {
			out = append(out, mm["content"].(string))
		}
	}
	return out
}

// callRetries returns the retry events of model calls.
func callRetries(rec *events) []map[string]any {
	var out []map[string]any
	for _, ev := range rec.of("retry") {
		if ev.Payload["call"] == "model" {
			out = append(out, ev.Payload)
		}
	}
	return out
}

// TestBrokenStreamIsAnErrorNeverAReply: a reply stream that ends before its
// final chunk, carries a chunk that is not JSON, reports an error or is
// reset half-way fails the node with a retryable llm_error and saves
// nothing; the thread stays resumable and the resumed run answers. A
// non-streamed answer cut or garbled likewise.
func TestBrokenStreamIsAnErrorNeverAReply(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		fault  llmtest.Fault
	}{
		{"stream ends without final chunk or DONE", true, llmtest.FaultCutBeforeDone},
		{"stream carries invalid JSON", true, llmtest.FaultGarbage},
		{"stream reports an error", true, llmtest.FaultErrorEvent},
		{"connection reset mid-stream", true, llmtest.FaultResetMidStream},
		{"non-streamed body cut", false, llmtest.FaultCutBeforeDone},
		{"non-streamed body not JSON", false, llmtest.FaultGarbage},
	}
	const answer = "Hello there, nice to meet you."
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Broken(llmtest.Text(answer), tt.fault)))
			g := talkGraph(t, "", `{type: "llm", config: {model: "openai:gpt-4o-mini", stream: `+map[bool]string{true: "true", false: "false"}[tt.stream]+`}, next: "END"}`)
			eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, envModels(srv))})
			defer eng.Close()

			res, _ := talk(t, eng, g, true)
			var ne *node.Error
			if res.Status != engine.StatusError || !errors.As(res.Err, &ne) || ne.Code != "llm_error" || !ne.Retryable {
				t.Fatalf("status %s, err %#v: want the run failed with a retryable llm_error", res.Status, res.Err)
			}
			if got := assistantMessages(res.State); len(got) != 0 {
				t.Fatalf("a broken reply was saved: %q", got)
			}

			srv.Push(llmtest.Text(answer))
			res, _ = talk(t, eng, g, false)
			if res.Status != engine.StatusCompleted {
				t.Fatalf("resume: status %s, err %v", res.Status, res.Err)
			}
			if got := assistantMessages(res.State); len(got) != 1 || got[0] != answer {
				t.Errorf("after resume, assistant messages = %q, want the one answer", got)
			}
		})
	}
}

// TestBrokenStreamRetriedByNodePolicy: with a node retry policy the broken
// reply is retried at once and the run completes with the whole answer.
func TestBrokenStreamRetriedByNodePolicy(t *testing.T) {
	const answer = "All good now."
	srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Broken(llmtest.Text(answer), llmtest.FaultCutBeforeDone), llmtest.Text(answer)))
	g := talkGraph(t, "", `{type: "llm", config: model: "openai:gpt-4o-mini", retry: {max_attempts: 2, initial_interval: "1ms"}, next: "END"}`)
	eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, envModels(srv))})
	defer eng.Close()
	res, rec := talk(t, eng, g, true)
	if res.Status != engine.StatusCompleted {
		t.Fatalf("status %s, err %v", res.Status, res.Err)
	}
	if got := assistantMessages(res.State); len(got) != 1 || got[0] != answer {
		t.Errorf("assistant messages = %q, want the one answer", got)
	}
	retries := rec.of("retry")
	if len(retries) != 1 || !strings.Contains(retries[0].Payload["error"].(string), "final chunk") {
		t.Errorf("retry events = %v, want one naming the cut stream", retries)
	}
}

// TestCompleteStreamWithoutDone: a server that ends its stream after the
// final chunk (finish_reason) without [DONE] gave a complete reply.
func TestCompleteStreamWithoutDone(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Broken(llmtest.Text("Complete."), llmtest.FaultNoDone)))
	g := testGraph(t)
	up, _, err := run(t, g, build(t, g, map[string]any{"model": "openai:gpt-4o-mini"}), services(srv), userSays("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if msg, _ := up["messages"].(map[string]any); msg["content"] != "Complete." {
		t.Errorf("messages update = %v", up["messages"])
	}
}

// TestCutToolCallArguments: a stream cut in the middle of a tool call's
// arguments makes no contract and no message.
func TestCutToolCallArguments(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Broken(llmtest.Call("llmtest_weather", map[string]any{"city": "Paris"}), llmtest.FaultCutMidToolCall)))
		g := testGraph(t)
		n := build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "stream": stream, "tools": []any{"llmtest_weather"}, "contracts_field": "pending"})
		up, _, err := run(t, g, n, services(srv), userSays("weather?"))
		var ne *node.Error
		if !errors.As(err, &ne) || ne.Code != "llm_error" || !ne.Retryable || up != nil {
			t.Errorf("stream=%v: update %v, err %v: want no update and a retryable llm_error", stream, up, err)
		}
	}
}

// TestCallRetryHonoursRetryAfter: a 429 with Retry-After: 1 is retried
// after that second, by default, and the retry is an event.
func TestCallRetryHonoursRetryAfter(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithFailures(1, http.StatusTooManyRequests), llmtest.WithReplies(llmtest.Text("Hi again.")))
	g := talkGraph(t, "", `{type: "llm", config: model: "openai:gpt-4o-mini", next: "END"}`)
	eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, envModels(srv))})
	defer eng.Close()
	res, rec := talk(t, eng, g, true)
	if res.Status != engine.StatusCompleted {
		t.Fatalf("status %s, err %v", res.Status, res.Err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Status != 429 || reqs[1].Status != 200 {
		t.Fatalf("requests = %+v, want 429 then 200", reqs)
	}
	if gap := reqs[1].At.Sub(reqs[0].At); gap < time.Second {
		t.Errorf("retried %v after the 429, want at least the second Retry-After asked for", gap)
	}
	retries := callRetries(rec)
	if len(retries) != 1 {
		t.Fatalf("model call retry events = %v, want one", retries)
	}
	p := retries[0]
	if p["node"] != "talk" || p["status"] != 429 || p["attempt"] != 1 || p["retry_after_ms"] != int64(1000) || p["wait_ms"] != int64(1000) {
		t.Errorf("retry event = %v", p)
	}
	if len(rec.of(node.UsageEvent)) != 1 {
		t.Errorf("usage events = %v", rec.of(node.UsageEvent))
	}
}

// TestCallRetryPolicy: defaults.call_retry and a node's call_retry set the
// attempts, the backoff and the bound on Retry-After; a node's wins.
func TestCallRetryPolicy(t *testing.T) {
	tests := []struct {
		name       string
		defaults   string
		nodeRetry  string
		opts       []llmtest.Option
		replies    []llmtest.Reply
		wantStatus string
		requests   int
		waits      []int64
	}{
		{name: "retry-after bounded", defaults: `call_retry: max_retry_after: "20ms"`,
			opts:       []llmtest.Option{llmtest.WithFailures(1, 429), llmtest.WithRetryAfter("3600")},
			wantStatus: engine.StatusCompleted, requests: 2, waits: []int64{20}},
		{name: "retries off in defaults", defaults: `call_retry: max_attempts: 1`,
			opts:       []llmtest.Option{llmtest.WithFailures(1, 503)},
			wantStatus: engine.StatusError, requests: 1},
		{name: "node's policy wins", defaults: `call_retry: max_attempts: 1`, nodeRetry: `call_retry: {max_attempts: 3, initial_interval: "2ms", backoff: 3}`,
			opts:       []llmtest.Option{llmtest.WithFailures(2, 502)},
			wantStatus: engine.StatusCompleted, requests: 3, waits: []int64{2, 6}},
		{name: "attempts spent", nodeRetry: `call_retry: {max_attempts: 2, initial_interval: "1ms"}`,
			opts:       []llmtest.Option{llmtest.WithFailures(5, 500)},
			wantStatus: engine.StatusError, requests: 2, waits: []int64{1}},
		{name: "connection reset before the answer", defaults: `call_retry: initial_interval: "1ms"`,
			replies:    []llmtest.Reply{llmtest.Broken(llmtest.Text("lost"), llmtest.FaultResetBeforeReply)},
			wantStatus: engine.StatusCompleted, requests: 2, waits: []int64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := append(tt.opts, llmtest.WithReplies(append(tt.replies, llmtest.Text("Fine."))...))
			srv := llmtest.NewServer(t, opts...)
			g := talkGraph(t, tt.defaults, `{type: "llm", config: model: "openai:gpt-4o-mini", next: "END", `+tt.nodeRetry+`}`)
			eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, envModels(srv))})
			defer eng.Close()
			res, rec := talk(t, eng, g, true)
			if res.Status != tt.wantStatus {
				t.Fatalf("status %s (err %v), want %s", res.Status, res.Err, tt.wantStatus)
			}
			if got := len(srv.Requests()); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
			retries := callRetries(rec)
			if len(retries) != len(tt.waits) {
				t.Fatalf("retry events = %v, want %d", retries, len(tt.waits))
			}
			for i, p := range retries {
				if p["wait_ms"] != tt.waits[i] || p["attempt"] != i+1 {
					t.Errorf("retry %d = %v, want wait_ms %d", i, p, tt.waits[i])
				}
			}
			if tt.wantStatus == engine.StatusError {
				var ne *node.Error
				if !errors.As(res.Err, &ne) || !ne.Retryable {
					t.Errorf("err = %v, want a retryable node error once call retries are spent", res.Err)
				}
			}
		})
	}
}

// TestCallRetryValidation: call_retry settings are checked where written.
func TestCallRetryValidation(t *testing.T) {
	tests := []struct{ defaults, nodeSrc, want string }{
		{`call_retry: max_retry_after: "soon"`, `{type: "llm", next: "END"}`, `talk.cue:3:`},
		{``, `{type: "llm", call_retry: max_attempts: 0, next: "END"}`, `talk.cue:6:`},
		{`call_retry: {tries: 3}`, `{type: "llm", next: "END"}`, `tries`},
	}
	for _, tt := range tests {
		src := `dsl_version: "graphctl/v1"
name: "talk"
defaults: {` + tt.defaults + `}
state: messages: {type: "messages"}
start: "talk"
nodes: talk: ` + tt.nodeSrc + "\n"
		_, diags := runtime.LoadSource("talk.cue", []byte(src))
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.want) {
			t.Errorf("%s %s: diagnostics %v, want an error with %q", tt.defaults, tt.nodeSrc, diags, tt.want)
		}
	}
}

// TestCutCallSaysCancelledOrTimedOut: a model call the run cuts while the
// server holds the reply (the run cancelled, or the node's timeout spent)
// fails with the context's error and says so, not as a network failure of
// the model's server.
func TestCutCallSaysCancelledOrTimedOut(t *testing.T) {
	tests := []struct {
		name, nodeSrc string
		cancel        bool
		want          error
		code, says    string
	}{
		{name: "cancelled", cancel: true, want: context.Canceled, code: "canceled", says: "model call cancelled",
			nodeSrc: `{type: "llm", config: model: "openai:gpt-4o-mini", call_retry: max_attempts: 1, next: "END"}`},
		{name: "cancelled, not streamed", cancel: true, want: context.Canceled, code: "canceled", says: "model call cancelled",
			nodeSrc: `{type: "llm", config: {model: "openai:gpt-4o-mini", stream: false}, call_retry: max_attempts: 1, next: "END"}`},
		{name: "node timeout", want: context.DeadlineExceeded, code: "timeout", says: "model call timed out",
			nodeSrc: `{type: "llm", config: model: "openai:gpt-4o-mini", timeout: "100ms", call_retry: max_attempts: 1, next: "END"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := llmtest.Text("too late")
			held.Delay = time.Minute // until the request is given up
			srv := llmtest.NewServer(t, llmtest.WithReplies(held))
			g := talkGraph(t, "", tt.nodeSrc)
			eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, envModels(srv))})
			defer eng.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				go func() {
					for len(srv.Requests()) == 0 && ctx.Err() == nil {
						time.Sleep(time.Millisecond)
					}
					cancel()
				}()
			}
			in, err := engine.TextInput(g, "hello")
			if err != nil {
				t.Fatal(err)
			}
			res, err := eng.Run(ctx, engine.Request{ThreadID: "t1", Input: in}, (&events{}).sink)
			if err == nil && res != nil {
				err = res.Err
			}
			if err == nil {
				t.Fatal("the cut call succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %q does not wrap %v", err, tt.want)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.says) || strings.Contains(msg, "network error") {
				t.Errorf("error %q, want it to say %q, not blame the network", msg, tt.says)
			}
			if code := node.CodeOf(err); code != tt.code {
				t.Errorf("code %q, want %q", code, tt.code)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d model requests, want 1 (a cut call is not retried)", n)
			}
		})
	}
}

// TestUnreachableModelServerIsNamed: a model server nobody listens at fails
// the call with an error naming its address (the model clients alone say
// only "failed to reach API server"), retryable as network failures are.
func TestUnreachableModelServerIsNamed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			env := map[string]string{"OPENAI_BASE_URL": "http://" + addr + "/v1", "ANTHROPIC_BASE_URL": "http://" + addr + "/v1", "ANTHROPIC_API_KEY": "test"}
			models := llm.NewModels(func(k string) string { return env[k] })
			g := talkGraph(t, `call_retry: max_attempts: 1`, `{type: "llm", config: model: "`+provider+`:some-model", next: "END"}`)
			eng := engine.New(g, memory.New(), engine.Options{Extra: llm.ServiceKey.Bind(node.Extra{}, models)})
			defer eng.Close()
			res, _ := talk(t, eng, g, true)
			var ne *node.Error
			if res.Status != engine.StatusError || !errors.As(res.Err, &ne) || ne.Code != "llm_error" || !ne.Retryable {
				t.Fatalf("status %s, err %v: want a retryable llm_error", res.Status, res.Err)
			}
			if msg := res.Err.Error(); !strings.Contains(msg, "cannot reach the model server at http://"+addr+"/v1") || !strings.Contains(msg, "refused") {
				t.Errorf("error %q does not name the address and the reason", msg)
			}
		})
	}
}
