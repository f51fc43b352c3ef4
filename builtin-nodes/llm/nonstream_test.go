package llm_test

import (
	"slices"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// TestServerWithoutStreaming: a server that answers a streaming request with
// one plain JSON completion (it has no streaming) still gives the reply —
// as one text event — and its tool calls; it is never taken for an empty
// answer.
func TestServerWithoutStreaming(t *testing.T) {
	const reply = "One whole answer, sent at once."
	// A server that ignores "stream" answers at once; one that refuses it
	// (400 "stream is not supported") is asked again without streaming.
	for _, tt := range []struct {
		fault    llmtest.Fault
		requests []bool // whether each request asked for a stream
	}{
		{llmtest.FaultIgnoreStream, []bool{true}},
		{llmtest.FaultRefuseStream, []bool{true, false}},
	} {
		t.Run("text, "+string(tt.fault), func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Broken(llmtest.Text(reply), tt.fault)))
			g := testGraph(t)
			up, ev, err := run(t, g, build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "stream": true}), services(srv), userSays("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if msg, _ := up["messages"].(map[string]any); msg["content"] != reply {
				t.Errorf("messages update = %v, want the whole reply", up["messages"])
			}
			texts := ev.of("text")
			if len(texts) != 1 || texts[0].Payload["content"] != reply {
				t.Errorf("text events = %v, want one with the whole reply", texts)
			}
			var streamed []bool
			for _, r := range srv.Requests() {
				streamed = append(streamed, r.Stream)
			}
			if !slices.Equal(streamed, tt.requests) {
				t.Errorf("requests streamed %v, want %v (no repair, no other call)", streamed, tt.requests)
			}
		})
	}
	t.Run("tool call", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Broken(llmtest.Call("llmtest_weather", map[string]any{"city": "Paris"}), llmtest.FaultIgnoreStream)))
		g := testGraph(t)
		n := build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "stream": true, "tools": []any{"llmtest_weather"}, "contracts_field": "pending"})
		up, _, err := run(t, g, n, services(srv), userSays("weather in Paris?"))
		if err != nil {
			t.Fatal(err)
		}
		list, _ := up["pending"].([]any)
		if len(list) != 1 {
			t.Fatalf("pending = %v, want one contract for the tool call", up["pending"])
		}
	})
}

// TestServerRefusingStreaming: only a 4xx about streaming is asked again
// without it; another 400 (here: no reply left) is not.
func TestServerRefusingStreaming(t *testing.T) {
	srv := llmtest.NewServer(t)
	g := testGraph(t)
	if _, _, err := run(t, g, build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "stream": true}), services(srv), userSays("hi")); err == nil {
		t.Fatal("a 400 that is not about streaming succeeded")
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !reqs[0].Stream {
		t.Errorf("requests = %+v, want the one streaming request", reqs)
	}
}
