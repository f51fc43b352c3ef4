package llm_test

import (
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// TestServerWithoutStreaming: a server that answers a streaming request with
// one plain JSON completion (it has no streaming) still gives the reply —
// as one text event — and its tool calls; it is never taken for an empty
// answer.
func TestServerWithoutStreaming(t *testing.T) {
	const reply = "One whole answer, sent at once."
	t.Run("text", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Broken(llmtest.Text(reply), llmtest.FaultIgnoreStream)))
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
		if reqs := srv.Requests(); len(reqs) != 1 || !reqs[0].Stream {
			t.Errorf("requests = %+v, want one streaming request (no repair, no second call)", reqs)
		}
	})
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

// TestServerRefusingStreaming: a server that answers a streaming request
// with 400 "stream is not supported" is asked again without streaming; the
// reply comes as one text event. Other 4xx answers are not retried.
func TestServerRefusingStreaming(t *testing.T) {
	const reply = "One whole answer, sent at once."
	srv := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Broken(llmtest.Text(reply), llmtest.FaultRefuseStream)))
	g := testGraph(t)
	up, ev, err := run(t, g, build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "stream": true}), services(srv), userSays("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if msg, _ := up["messages"].(map[string]any); msg["content"] != reply {
		t.Errorf("messages update = %v, want the whole reply", up["messages"])
	}
	if texts := ev.of("text"); len(texts) != 1 || texts[0].Payload["content"] != reply {
		t.Errorf("text events = %v, want one with the whole reply", texts)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || !reqs[0].Stream || reqs[1].Stream {
		t.Errorf("requests = %+v, want a refused streaming request, then one without streaming", reqs)
	}
	// A 400 for another reason (here: no reply left) is not retried.
	if _, _, err := run(t, g, build(t, g, map[string]any{"model": "openai:gpt-4o-mini", "stream": true}), services(srv), userSays("hi")); err == nil {
		t.Fatal("a 400 that is not about streaming succeeded")
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want one more (no retry without streaming)", n)
	}
}
