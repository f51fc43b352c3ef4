package server

import (
	"encoding/json"
	"testing"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/server/runs"
)

// A streamed token's messages-tuple frame is what encoding the chunk and
// metadata maps gives, for every kind of text, and the metadata follows
// the task.
func TestTokenTupleIsTheEncodedChunkAndMetadata(t *testing.T) {
	var frames []string
	st := &streamer{g: &compile.Graph{Spec: &graph.Graph{Name: "g"}}, rec: &runs.Record{RunID: "r1", ThreadID: "t1", AssistantID: "a"},
		modes: map[string]bool{modeMessagesTuple: true}, streamed: map[string]string{}, completed: map[string]bool{},
		emit: func(mode, ev string, data any) { frames = append(frames, string(runsJSON(t, data))) }}
	for i, tt := range []struct {
		node  string
		step  int
		piece string
	}{
		{"talk", 1, "Hello"},
		{"talk", 1, ` "quoted" <b>&amp;</b>`},
		{"talk", 1, "line\nbreak\ttab \u2028 é ✓ \x01"},
		{"talk", 2, ""},
		{"other", 3, "bad utf-8 \xff"},
	} {
		ev := event.Event{Type: event.Text, Node: tt.node, Step: tt.step, Payload: map[string]any{"delta": tt.piece}}
		st.text(ev)
		chunk := lcMessage(map[string]any{"type": "AIMessageChunk", "id": st.messageID(ev), "content": tt.piece})
		chunk["tool_call_chunks"] = []any{}
		want, _ := json.Marshal([]any{chunk, st.meta(ev)})
		if len(frames) != i+1 {
			t.Fatalf("token %d: %d frames", i, len(frames))
		}
		if frames[i] != string(want) {
			t.Errorf("token %q:\n got %s\nwant %s", tt.piece, frames[i], want)
		}
	}
}

// runsJSON is the data of a frame as the run manager encodes it.
func runsJSON(t *testing.T, data any) []byte {
	t.Helper()
	if e, ok := data.(runs.Encoded); ok {
		return e
	}
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Streamed text in the legacy messages mode carries the whole text so far
// (messages/partial), and in the chat format its deltas, then nothing when
// the whole text is what streamed, or a replace when it is not; a whole
// text that did not stream is shown at once in both.
func TestStreamedTextInMessagesAndChat(t *testing.T) {
	type frame struct {
		mode, event string
		data        string
	}
	var got []frame
	st := &streamer{g: &compile.Graph{Spec: &graph.Graph{Name: "g"}}, rec: &runs.Record{RunID: "r1", ThreadID: "t1", AssistantID: "a"},
		modes: map[string]bool{modeMessages: true, modeChat: true}, streamed: map[string]string{}, completed: map[string]bool{},
		emit: func(mode, ev string, data any) { got = append(got, frame{mode, ev, string(runsJSON(t, data))}) }}
	text := func(msg, piece string, delta bool) event.Event {
		p := map[string]any{"content": piece, "message_id": msg}
		if delta {
			p["delta"] = true
		}
		return event.Event{Type: event.Text, Node: "talk", Step: 1, Payload: p}
	}
	meta, _ := json.Marshal(map[string]any{"m1": map[string]any{"metadata": st.meta(text("m1", "", true))}})
	metaOf := func(id string) string {
		b, _ := json.Marshal(map[string]any{id: map[string]any{"metadata": st.meta(text(id, "", true))}})
		return string(b)
	}
	ai := func(id, content string) string {
		b, _ := json.Marshal([]any{lcMessage(map[string]any{"type": "ai", "id": id, "content": content})})
		return string(b)
	}
	chat := func(payload map[string]any) string {
		b, _ := json.Marshal(map[string]any{"type": "text", "payload": payload})
		return string(b)
	}
	tests := []struct {
		name   string
		events []event.Event
		want   []frame
	}{
		{"deltas then the same whole text", []event.Event{text("m1", "Hel", true), text("m1", "lo <&>", true), text("m1", "Hello <&>", false)}, []frame{
			{modeChat, "", chat(map[string]any{"content": "Hel", "delta": true})},
			{modeMessages, "messages/metadata", string(meta)},
			{modeMessages, "messages/partial", ai("m1", "Hel")},
			{modeChat, "", chat(map[string]any{"content": "lo <&>", "delta": true})},
			{modeMessages, "messages/partial", ai("m1", "Hello <&>")},
		}},
		{"deltas then a repaired whole text", []event.Event{text("m2", "draft", true), text("m2", "final", false)}, []frame{
			{modeChat, "", chat(map[string]any{"content": "draft", "delta": true})},
			{modeMessages, "messages/metadata", metaOf("m2")},
			{modeMessages, "messages/partial", ai("m2", "draft")},
			{modeChat, "", chat(map[string]any{"content": "final", "replace": true})},
		}},
		{"a whole text that did not stream", []event.Event{text("m3", "at once", false)}, []frame{
			{modeChat, "", chat(map[string]any{"content": "at once"})},
			{modeMessages, "messages/metadata", metaOf("m3")},
			{modeMessages, "messages/complete", ai("m3", "at once")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			for _, ev := range tt.events {
				st.handle(ev)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d frames, want %d:\n%v", len(got), len(tt.want), got)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("frame %d:\n got %v\nwant %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
