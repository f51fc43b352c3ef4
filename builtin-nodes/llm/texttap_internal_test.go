package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// oaEvent is one event of an OpenAI chat completion stream.
func oaEvent(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return "data: " + string(b) + "\n\n"
}

// oaText is a chunk carrying a piece of text.
func oaText(s string) string {
	return oaEvent(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}, "finish_reason": nil}}})
}

func oaDelta(delta map[string]any, finish any) string {
	return oaEvent(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
}

// tapStreams are OpenAI chat completion streams of every shape the text
// tap meets.
func tapStreams() []struct {
	name   string
	stream string
} {
	role := oaDelta(map[string]any{"role": "assistant", "content": ""}, nil)
	stop := oaDelta(map[string]any{}, "stop")
	usage := oaEvent(map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})
	const done = "data: [DONE]\n\n"
	var long, escaped strings.Builder
	for i := range 3000 {
		long.WriteString(oaText(fmt.Sprintf("token %04d of a long reply ", i)))
		// Every byte escaped six times over in JSON.
		escaped.WriteString(oaText(strings.Repeat("\x01", 40)))
	}
	return []struct {
		name   string
		stream string
	}{
		{"text", role + oaText("Hello") + oaText(", ") + oaText("world") + stop + usage + done},
		{"escapes and unicode", role + oaText(`"quoted" <b>&</b> \ `) + oaText("line\nbreak\ttab \u2028 é ✓ \x01") + stop + done},
		{"finish without DONE", oaText("a") + oaText("b") + stop},
		{"comments and CRLF", ": keep-alive\n\n" + strings.ReplaceAll(oaText("a")+oaText("b"), "\n", "\r\n") + ": ping\n\n" + stop + done},
		{"text in the finish chunk", oaText("a") + oaDelta(map[string]any{"content": "b"}, "stop") + done},
		{"text after the finish chunk", oaText("a") + stop + oaText("late") + done},
		{"tool calls between text", role + oaText("Let me look. ") +
			oaDelta(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "lookup", "arguments": ""}}}}, nil) +
			oaDelta(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": `{"q":1}`}}}}, nil) +
			oaDelta(map[string]any{"content": "with text", "tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": ""}}}}, nil) +
			oaDelta(map[string]any{}, "tool_calls") + usage + done},
		{"reasoning", oaDelta(map[string]any{"reasoning_content": "thinking"}, nil) + oaText("answer") + stop + done},
		{"a chunk the client cannot decode", oaText("a") +
			oaEvent(map[string]any{"created": "yesterday", "choices": []any{map[string]any{"delta": map[string]any{"content": "skipped"}}}}) +
			oaEvent(map[string]any{"choices": []any{map[string]any{"delta": map[string]any{"role": 7, "content": "skipped too"}}}}) +
			oaText("b") + stop + done},
		{"two choices", oaEvent(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": "first"}},
			map[string]any{"index": 1, "delta": map[string]any{"content": "second"}}}}) + oaText("!") + stop + done},
		{"long reply", role + long.String() + stop + usage + done},
		{"escaped reply", escaped.String() + stop + done},
	}
}

// generate calls langchaingo's OpenAI client on a server answering stream
// through the stream guard, with a text tap or without, and returns the
// choice and the text streamed.
func generateThrough(t *testing.T, stream string, tapped bool) (*llms.ContentChoice, []string, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(stream))
	}))
	defer srv.Close()
	model, err := openai.New(openai.WithToken("k"), openai.WithBaseURL(srv.URL+"/v1"), openai.WithModel("m"),
		openai.WithHTTPClient(&http.Client{Transport: guardTransport{}}))
	if err != nil {
		t.Fatal(err)
	}
	var pieces []string
	ctx := context.Background()
	tap := &textTap{send: func(s string) { pieces = append(pieces, s) }}
	if tapped {
		ctx = withTextTap(ctx, tap)
	}
	resp, err := model.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			if len(chunk) > 0 && !tap.isTaken() && !isToolCallChunk(chunk) {
				pieces = append(pieces, string(chunk))
			}
			return nil
		}))
	tap.close()
	if err != nil {
		return nil, pieces, err
	}
	if tapped != tap.isTaken() {
		t.Fatalf("tapped %v, but the guard took the tap: %v", tapped, tap.isTaken())
	}
	return resp.Choices[0], pieces, nil
}

// A reply streamed through the text tap gives the client the same reply
// (text, tool calls, finish reason, usage) as the unmerged stream, and the
// tap the text of that reply, piece by piece.
func TestTextTapGivesTheSameReply(t *testing.T) {
	for _, tt := range tapStreams() {
		t.Run(tt.name, func(t *testing.T) {
			want, _, err := generateThrough(t, tt.stream, false)
			if err != nil {
				t.Fatalf("without a tap: %v", err)
			}
			got, pieces, err := generateThrough(t, tt.stream, true)
			if err != nil {
				t.Fatalf("with a tap: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("reply with a tap:\n%+v\nwithout:\n%+v", got, want)
			}
			if text := strings.Join(pieces, ""); text != want.Content {
				t.Errorf("the tap got %q, the reply is %q", truncate(text, 200), truncate(want.Content, 200))
			}
			if len(pieces) < 2 && len(want.Content) > 10 {
				t.Errorf("the tap got %d pieces: the text did not stream", len(pieces))
			}
		})
	}
}

// A broken stream is an error with the tap as without it.
func TestTextTapBrokenStream(t *testing.T) {
	tests := []struct {
		name, stream, want string
	}{
		{"cut before finish", oaText("a") + oaText("b"), "ended before its final chunk"},
		{"cut inside a chunk", oaText("a") + `data: {"choices":[{"delta":{"cont`, "in the middle of a chunk"},
		{"garbage chunk", oaText("a") + "data: not json\n\n" + oaDelta(map[string]any{}, "stop"), "not JSON"},
		{"garbage after a chunk", oaText("a") + `data: {"choices":[{"delta":{"content":"b"}}]} x` + "\n\n" + oaDelta(map[string]any{}, "stop"), "not JSON"},
		{"two values in a chunk", oaText("a") + `data: {"choices":[]} {"choices":[]}` + "\n\n" + oaDelta(map[string]any{}, "stop"), "not JSON"},
		{"error object", oaText("a") + `data: {"error":{"message":"boom"}}` + "\n\n", "reported an error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, tapped := range []bool{false, true} {
				_, _, err := generateThrough(t, tt.stream, tapped)
				if !errors.Is(err, ErrBrokenStream) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("tapped %v: err = %v, want ErrBrokenStream saying %q", tapped, err, tt.want)
				}
			}
		})
	}
}

// A closed tap sends nothing more.
func TestClosedTextTapSendsNothing(t *testing.T) {
	var got []string
	tap := &textTap{send: func(s string) { got = append(got, s) }}
	tap.text("a")
	tap.close()
	tap.text("b")
	if tap.take() {
		t.Error("a closed tap was taken")
	}
	if !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("sent %q, want only what came before close", got)
	}
}

// With a tap, the chunks that carry only text reach the client merged: a
// reply of many tokens is a handful of chunks, while the tap gets every
// token as it is read.
func TestTextTapMergesTextChunks(t *testing.T) {
	var stream strings.Builder
	for range 100 {
		stream.WriteString(oaText("tok "))
	}
	stream.WriteString(oaDelta(map[string]any{}, "stop") + "data: [DONE]\n\n")
	var pieces []string
	tap := &textTap{send: func(s string) { pieces = append(pieces, s) }, taken: true}
	src := io.NopCloser(strings.NewReader(stream.String()))
	out, err := io.ReadAll(&streamGuard{src: src, r: newReader(src), kind: openaiStream, tap: tap})
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 100 {
		t.Errorf("the tap got %d pieces, want 100", len(pieces))
	}
	want := `data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("tok ", 100) + `"}}]}` + "\n\n" +
		oaDelta(map[string]any{}, "stop") + "data: [DONE]\n\n"
	if string(out) != want {
		t.Errorf("the client reads\n%s\nwant\n%s", out, want)
	}
}

// BenchmarkTappedChunk is the stream guard's check of one token's chunk
// of an OpenAI chat stream read with a text tap: decoded, its text sent to
// the tap and held back.
func BenchmarkTappedChunk(b *testing.B) {
	line := []byte(oaText("1764185530123456789 "))
	tap := &textTap{send: func(string) {}, taken: true}
	g := &streamGuard{kind: openaiStream, tap: tap}
	b.ReportAllocs()
	for b.Loop() {
		if held, err := g.check(line, false); !held || err != nil {
			b.Fatalf("held %v, %v", held, err)
		}
		g.merged = g.merged[:0]
	}
}
