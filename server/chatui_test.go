package server

import "testing"

// TestLangGraphJSChatUI runs .ci/langgraph-sdk/chatui.mjs: the requests
// agent-chat-ui's useStream sends, and the values frames its screen relies
// on, through the official client.
func TestLangGraphJSChatUI(t *testing.T) {
	sdk := requireJSClient(t)
	f := newGraphFixture(t, testGraphsDir(t, "echo.cue", "approve.cue"), nil)
	sdk.run(t, "chatui.mjs", f.http.URL)
}
