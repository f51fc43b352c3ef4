package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// TestCognitiveRecallMatchesWordForms: `graphctl run graphs/cognitive.cue`
// with a local OpenAI-compatible model server and no embedding model
// ($GRAPHCTL_EMBEDDER=none, so recall is lexical) remembers what the user
// said and recalls it for questions using other forms of its words ("cat"
// for "cats", "hike" for "hiking") or, in Japanese, sharing a character
// with it ("猫について" for "猫を二匹飼っています"), and puts it in the
// prompt; an unrelated question recalls nothing.
func TestCognitiveRecallMatchesWordForms(t *testing.T) {
	srv := llmtest.NewServer(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", srv.URL())
	t.Setenv("GRAPHCTL_LLM", "")
	t.Setenv(llm.EmbedderEnv, "none")
	t.Setenv(llm.EmbeddingsURLEnv, "")
	graph := filepath.Join(repoRoot(t), "graphs", "cognitive.cue")
	data := t.TempDir()

	srv.Push(llmtest.JSON(map[string]any{"response": "Noted!", "memory_update": []any{
		map[string]any{"key": "about_me", "value": "The user has two cats and loves hiking", "category": "fact", "confidence": 0.9},
		map[string]any{"key": "neko", "value": "猫を二匹飼っています", "category": "fact", "confidence": 0.9},
	}}))
	events := runCognitive(t, graph, data, "tell", "I have two cats and I love hiking. 猫を二匹飼っています。")
	if stored := ofType(events, "memory_stored"); len(stored) != 1 {
		t.Fatalf("memory_stored events = %v", stored)
	}

	tests := []struct {
		question string
		want     []string
		inPrompt string
	}{
		{"Tell me about my cat", []string{"about_me"}, "two cats"},
		{"Do I like to hike?", []string{"about_me"}, "loves hiking"},
		{"猫について教えて", []string{"neko"}, "猫を二匹飼っています"},
		{"What is the capital of Peru?", []string{}, ""},
	}
	for i, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			srv.Push(llmtest.JSON(map[string]any{"response": "ok"}))
			events := runCognitive(t, graph, data, "ask-"+string(rune('a'+i)), tt.question)
			recalled := ofType(events, "memory_recalled")
			if len(recalled) != 1 {
				t.Fatalf("memory_recalled events = %v", recalled)
			}
			if mode := recalled[0]["mode"]; mode != "bm25" {
				t.Errorf("recall mode %v, want bm25", mode)
			}
			var keys []string
			for _, k := range recalled[0]["keys"].([]any) {
				keys = append(keys, k.(string))
			}
			if !slices.Equal(keys, tt.want) && !(len(keys) == 0 && len(tt.want) == 0) {
				t.Errorf("recalled %v, want %v", keys, tt.want)
			}
			reqs := srv.Requests()
			prompt := ""
			for _, m := range reqs[len(reqs)-1].Messages {
				prompt += m.Content + "\n"
			}
			if tt.inPrompt != "" && !strings.Contains(prompt, tt.inPrompt) {
				t.Errorf("the model's prompt lacks the recalled memory %q:\n%s", tt.inPrompt, prompt)
			}
		})
	}
}

// runCognitive runs one turn of the cognitive graph on a new thread and
// returns the payloads of its events, each with its type under "type".
func runCognitive(t *testing.T, graph, data, thread, text string) []map[string]any {
	t.Helper()
	stdout, stderr, code := run(t, "run", graph, "--data-dir", data, "--thread", thread, "--json", "-i", text)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev struct {
			Type    string         `json:"type"`
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		if ev.Payload == nil {
			ev.Payload = map[string]any{}
		}
		ev.Payload["type"] = ev.Type
		out = append(out, ev.Payload)
	}
	return out
}
