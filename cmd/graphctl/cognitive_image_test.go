package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunShowsTheImageMemoryForm: `graphctl run graphs/cognitive.cue` with an
// image to analyze for memory stops on the memory form and lists its fields,
// so the user knows what the answer holds; `graphctl resume` with the answer
// stores the memory.
func TestRunShowsTheImageMemoryForm(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "replies.json")
	replies := []any{
		map[string]any{"node": "vision", "content": "Dentist on Friday at 3pm"},
		map[string]any{"node": "vision", "json": map[string]any{"key": "dentist", "value": "Dentist on Friday at 3pm",
			"category": "plan", "confidence": 0.9, "target_time": "Friday 15:00"}},
	}
	raw, _ := json.Marshal(replies)
	if err := os.WriteFile(script, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAAABJRU5ErkJggg==")
	input, _ := json.Marshal(map[string]any{"image": base64.StdEncoding.EncodeToString(png), "image_action": "analyze_for_memory"})
	graph := filepath.Join(repoRoot(t), "graphs", "cognitive.cue")
	data := filepath.Join(dir, "data")
	stdout, stderr, code := run(t, "run", graph, "--llm", "script:"+script, "--data-dir", data, "--thread", "img", "--input", string(input))
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Dentist on Friday at 3pm", "? 保存计划到日程", "  key: ", "  value: ", "  category: ", "  target_time: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("run output lacks %q:\n%s", want, stdout)
		}
	}
	answer := `{"key": "dentist", "value": "Dentist on Friday at 3pm", "category": "plan", "target_time": "Friday 15:00"}`
	stdout, stderr, code = run(t, "resume", graph, "--llm", "script:"+script, "--data-dir", data, "--thread", "img", "--value", answer)
	if code != 0 || !strings.Contains(stderr, "remembered: [dentist]") {
		t.Errorf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
