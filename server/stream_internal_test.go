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
