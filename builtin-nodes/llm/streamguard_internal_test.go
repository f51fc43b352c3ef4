package llm

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestStreamGuard reads recorded-shape streams of both protocols through
// the guard: complete ones pass unchanged, broken ones end in ErrBrokenStream.
func TestStreamGuard(t *testing.T) {
	const (
		oaChunk  = `data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}` + "\n\n"
		oaFinish = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
		oaUsage  = `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}` + "\n\n"
		done     = "data: [DONE]\n\n"
		anStart  = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n"
		anDelta  = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
		anPing   = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
		anStop   = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		anError  = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	)
	tests := []struct {
		name    string
		kind    streamKind
		stream  string
		wantErr string
	}{
		{"openai complete", openaiStream, oaChunk + oaFinish + oaUsage + done, ""},
		{"openai finish without DONE", openaiStream, oaChunk + oaFinish, ""},
		{"openai comments and blank lines", openaiStream, ": keep-alive\n\n" + oaChunk + oaFinish + done, ""},
		{"openai cut before finish", openaiStream, oaChunk + oaChunk, "ended before its final chunk"},
		{"openai cut inside a chunk", openaiStream, oaChunk + `data: {"choices":[{"delta":{"cont`, "in the middle of a chunk"},
		{"openai garbage chunk", openaiStream, oaChunk + "data: not json\n\n" + oaFinish + done, "not JSON"},
		{"openai error object", openaiStream, oaChunk + `data: {"error":{"message":"boom"}}` + "\n\n", "reported an error"},
		{"anthropic complete", anthropicStream, anStart + anPing + anDelta + anStop, ""},
		{"anthropic cut before message_stop", anthropicStream, anStart + anDelta, "ended before its final chunk"},
		{"anthropic error event", anthropicStream, anStart + anError, "reported an error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := io.NopCloser(strings.NewReader(tt.stream))
			g := &streamGuard{src: src, r: newReader(src), kind: tt.kind}
			got, err := io.ReadAll(g)
			if tt.wantErr == "" {
				if err != nil || string(got) != tt.stream {
					t.Errorf("read %q, %v; want the stream unchanged", got, err)
				}
				return
			}
			if !errors.Is(err, ErrBrokenStream) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want ErrBrokenStream saying %q", err, tt.wantErr)
			}
		})
	}
}
