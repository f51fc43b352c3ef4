package server

import (
	"slices"
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
