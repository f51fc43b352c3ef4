package server

import (
	"io"
	"testing"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/sse"
)

// BenchmarkStreamedToken is the server's own part of a streamed token, one
// per op: the engine's text event rendered as a messages-tuple frame,
// appended to the run's buffer as the run manager appends it, read back
// and written to an SSE stream as a run's stream writes it.
func BenchmarkStreamedToken(b *testing.B) {
	for _, bb := range []struct {
		name  string
		modes map[string]bool
	}{
		{"messages-tuple", map[string]bool{modeMessagesTuple: true}},
		{"messages", map[string]bool{modeMessages: true}},
		{"chat", map[string]bool{modeChat: true}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			buf := runs.NewBuffer()
			st := &streamer{g: &compile.Graph{Spec: &graph.Graph{Name: "bench_stream"}},
				rec:   &runs.Record{RunID: "1f0c5a8e-4a7b-6c1d-8e2f-3a4b5c6d7e8f", ThreadID: "2f0c5a8e-4a7b-6c1d-8e2f-3a4b5c6d7e8f", AssistantID: "bench_stream"},
				modes: bb.modes, streamed: map[string]string{}, completed: map[string]bool{},
				emit: func(mode, ev string, data any) {
					if e, ok := data.(runs.Encoded); ok {
						buf.Append(mode, ev, e)
						return
					}
					buf.Append(mode, ev, mustJSONBytes(data))
				}}
			w := sse.NewWriter(io.Discard)
			after := 0
			b.ReportAllocs()
			for b.Loop() {
				// As the engine sends a token of the llm node (its payload
				// copied with the message id added).
				st.sink(event.Event{Type: event.Text, Node: "talk", Step: 1,
					Payload: map[string]any{"content": "1764185530123456789 ", "delta": true, "message_id": "run-1f0c5a8e-talk"}})
				entries, _, _ := buf.Since(after)
				for _, e := range entries {
					after = e.Seq
					if err := w.Write(e.Frame); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
