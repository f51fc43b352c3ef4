package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// TestLangGraphJSChatUI runs .ci/langgraph-sdk/chatui.mjs: the requests
// agent-chat-ui's useStream sends, and the values frames its screen relies
// on, through the official client.
func TestLangGraphJSChatUI(t *testing.T) {
	sdk := requireJSClient(t)
	f := newGraphFixture(t, testGraphsDir(t, "echo.cue", "approve.cue"), nil)
	sdk.run(t, "chatui.mjs", f.http.URL)
}

// TestLangGraphJSChatUIImage runs .ci/langgraph-sdk/chatui-image.mjs: the
// image blocks agent-chat-ui sends for an uploaded picture reach a local
// OpenAI-compatible model as image_url parts.
func TestLangGraphJSChatUIImage(t *testing.T) {
	sdk := requireJSClient(t)
	model := llmtest.NewServer(t, llmtest.WithReplies(llmtest.Text("A dot."), llmtest.Text("A dot."), llmtest.Text("A dot.")))
	t.Setenv("OPENAI_BASE_URL", model.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	f := newGraphFixture(t, "testdata/modelgraphs", nil)
	sdk.run(t, "chatui-image.mjs", f.http.URL)
	const dataURL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
	want := [][]string{{dataURL}, {dataURL}, {"https://example.com/dot.png"}}
	reqs := model.Requests()
	if len(reqs) != len(want) {
		t.Fatalf("the model got %d requests, want %d (the file block is refused before it)", len(reqs), len(want))
	}
	for i, req := range reqs {
		last := req.Messages[len(req.Messages)-1]
		if !slices.Equal(last.Images, want[i]) {
			t.Errorf("request %d: images %v, want %v", i, last.Images, want[i])
		}
	}
}

// TestFirstStepErrorInHistory: a thread whose first model call failed has
// its error on the head's task, where useStream reads a thread's error
// (POST /threads/{id}/history with limit 10, as agent-chat-ui opens a
// thread). Without it useStream takes the head's pending __start__ task for
// a breakpoint, and agent-chat-ui fails to render a thread that has no
// messages but an interrupt.
func TestFirstStepErrorInHistory(t *testing.T) {
	model := llmtest.NewServer(t, llmtest.WithFailures(1, http.StatusBadRequest))
	t.Setenv("OPENAI_BASE_URL", model.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	f := newGraphFixture(t, "testdata/modelgraphs", nil)
	if code, out := f.do("POST", "/threads", map[string]any{"thread_id": "first-fails"}); code != http.StatusOK {
		t.Fatalf("create thread: %d %v", code, out)
	}
	input := map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hi"}}}
	if code, out := f.do("POST", "/threads/first-fails/runs/wait", map[string]any{"assistant_id": "assistant", "input": input}); code != http.StatusOK {
		t.Fatalf("run: %d %v", code, out)
	}
	code, out := f.do("POST", "/threads/first-fails/history", map[string]any{"limit": 10})
	if code != http.StatusOK {
		t.Fatalf("history: %d %v", code, out)
	}
	history, _ := out.([]any)
	if len(history) == 0 {
		t.Fatalf("history is empty: %v", out)
	}
	head, _ := history[0].(map[string]any)
	tasks, _ := head["tasks"].([]any)
	if len(tasks) == 0 {
		t.Fatalf("the head has no tasks: %v", head)
	}
	last, _ := tasks[len(tasks)-1].(map[string]any)
	if msg, _ := last["error"].(string); !strings.Contains(msg, `node "answer" failed`) {
		t.Errorf("the head's last task error = %v, want the failure of node answer", last["error"])
	}
}
