package llm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

func TestScriptReplays(t *testing.T) {
	sc, err := llm.NewScript([]any{
		"Hello world, friend.",
		map[string]any{"node": "judge", "json": map[string]any{"score": 3.0}},
		map[string]any{"tool_calls": []any{map[string]any{"name": "search", "arguments": map[string]any{"q": "go"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := llm.WithNode(context.Background(), "reasoning")
	var chunks []string
	stream := llms.WithStreamingFunc(func(_ context.Context, b []byte) error { chunks = append(chunks, string(b)); return nil })
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi there")}

	resp, err := sc.GenerateContent(ctx, msgs, stream)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Content != "Hello world, friend." || strings.Join(chunks, "|") != "Hello |world, |friend." {
		t.Errorf("first reply %q streamed as %q", resp.Choices[0].Content, chunks)
	}
	if info := resp.Choices[0].GenerationInfo; info["PromptTokens"] != 2 || info["CompletionTokens"] != 3 || info["TotalTokens"] != 5 {
		t.Errorf("usage = %v, want 2 prompt, 3 completion, 5 total", info)
	}
	// The reply reserved for "judge" is skipped: reasoning gets the tool call.
	resp, err = sc.GenerateContent(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	tcs := resp.Choices[0].ToolCalls
	if len(tcs) != 1 || tcs[0].FunctionCall.Name != "search" || tcs[0].FunctionCall.Arguments != `{"q":"go"}` {
		t.Errorf("tool calls = %+v", tcs)
	}
	if _, err := sc.GenerateContent(ctx, msgs); err == nil || !strings.Contains(err.Error(), `no reply left for node "reasoning" after 2 replies`) {
		t.Errorf("error = %v, want no reply left for reasoning", err)
	}
	resp, err = sc.GenerateContent(llm.WithNode(context.Background(), "judge"), msgs)
	if err != nil || resp.Choices[0].Content != `{"score":3}` {
		t.Fatalf("judge reply = %v, %v", resp, err)
	}
	_, err = sc.GenerateContent(ctx, msgs)
	if err == nil || !strings.Contains(err.Error(), "scripted model: script exhausted after 3 replies") {
		t.Errorf("error = %v, want exhaustion after 3 replies", err)
	}
}

func TestScriptParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply any
		want  string
	}{
		{"number", 3.0, "want a string or an object"},
		{"unknown key", map[string]any{"text": "x"}, `unknown key "text"`},
		{"content and json", map[string]any{"content": "x", "json": map[string]any{}}, "not both"},
		{"nameless tool call", map[string]any{"tool_calls": []any{map[string]any{}}}, "tool_calls[0] has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.NewScript([]any{"ok", tt.reply})
			if err == nil || !strings.Contains(err.Error(), "scripted reply 2: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q in reply 2", err, tt.want)
			}
		})
	}
}

func TestTokensRoundTrip(t *testing.T) {
	for _, s := range []string{"", "one", "two  words\n", " leading space", "日本語 の テキスト"} {
		if got := strings.Join(llm.Tokens(s), ""); got != s {
			t.Errorf("Tokens(%q) joins to %q", s, got)
		}
	}
}

func TestModelResolution(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "replies.json")
	if err := os.WriteFile(file, []byte(`["from the file"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	tests := []struct {
		name       string
		extra      node.Extra
		nodeSpec   string
		graphSpec  string
		wantReply  string
		wantErrHas []string
	}{
		{name: "graph default", graphSpec: "script:" + file, wantReply: "from the file"},
		{name: "node wins over graph", nodeSpec: "script:" + file, graphSpec: "openai:gpt-4o", wantReply: "from the file"},
		{name: "override wins over node", extra: llm.OverrideKey.Bind(node.Extra{}, "script:"+file), nodeSpec: "openai:gpt-4o", wantReply: "from the file"},
		{name: "test script wins over all", extra: llm.ScriptKey.Bind(llm.OverrideKey.Bind(node.Extra{}, "script:"+file), []any{"scripted"}), nodeSpec: "openai:x", wantReply: "scripted"},
		{name: "nothing configured", wantErrHas: []string{"no model configured", "--llm", "GRAPHCTL_LLM", "defaults.llm", "OPENAI_API_KEY", "OLLAMA_HOST"}},
		{name: "missing key", nodeSpec: "openai:gpt-4o-mini", wantErrHas: []string{"OPENAI_API_KEY is not set"}},
		{name: "missing anthropic key", nodeSpec: "anthropic:claude-3-5-haiku-latest", wantErrHas: []string{"ANTHROPIC_API_KEY is not set"}},
		{name: "unknown provider", nodeSpec: "acme:big", wantErrHas: []string{`unknown provider "acme"`}},
		{name: "missing script file", nodeSpec: "script:" + filepath.Join(dir, "nope.json"), wantErrHas: []string{"scripted model", "nope.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			extra := llm.ServiceKey.Bind(tt.extra, llm.NewModels(noEnv))
			s := &node.Services{Extra: extra}
			m, err := llm.Model(context.Background(), s, tt.nodeSpec, tt.graphSpec)
			if len(tt.wantErrHas) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tt.wantErrHas {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := llms.GenerateFromSinglePrompt(context.Background(), m, "hi")
			if err != nil || got != tt.wantReply {
				t.Errorf("reply = %q, %v; want %q", got, err, tt.wantReply)
			}
			again, err := llm.Model(context.Background(), s, tt.nodeSpec, tt.graphSpec)
			if err != nil || again != m {
				t.Errorf("second Model call returned %p (%v), want the cached %p", again, err, m)
			}
		})
	}
	if _, err := llm.Model(context.Background(), &node.Services{}, "", ""); !errors.Is(err, llm.ErrNoModel) {
		t.Errorf("error = %v, want ErrNoModel", err)
	}
}

// TestScriptedNode runs the llm node on a test case's scripted replies: the
// reply streams token by token as delta text events.
func TestScriptedNode(t *testing.T) {
	g := testGraph(t)
	n := build(t, g, map[string]any{})
	s := &node.Services{Extra: llm.ScriptKey.Bind(node.Extra{}, []any{"Good morning to you."})}
	up, rec, err := run(t, g, n, s, userSays("morning"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range rec.of(event.Text) {
		got = append(got, ev.Payload["content"].(string))
	}
	if strings.Join(got, "|") != "Good |morning |to |you." {
		t.Errorf("text events = %q", got)
	}
	if msg, _ := up["messages"].(map[string]any); msg["content"] != "Good morning to you." {
		t.Errorf("messages update = %v", up["messages"])
	}
}
