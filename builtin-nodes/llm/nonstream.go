package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxPlainCompletion bounds the JSON completion read when a server answers
// a streaming request without streaming.
const maxPlainCompletion = 32 << 20

// asStream turns the answer of an OpenAI-compatible server that ignored
// "stream": true — one plain JSON completion instead of server-sent events —
// into the equivalent event stream: one chunk with the whole message (text
// and tool calls), its finish_reason and usage, then [DONE]. langchaingo's
// streaming client reads no content from a JSON body; with this, the reply
// arrives as one text event, as from a model that sends its answer at once.
// It returns resp unchanged when the request did not ask for a stream or
// the body is not a chat completion.
func asStream(req *http.Request, resp *http.Response) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/chat/completions") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !askedStream(req) {
		return resp, nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxPlainCompletion))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the model's reply: %w", err)
	}
	var completion struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Created int64  `json:"created"`
		Choices []struct {
			Index   int `json:"index"`
			Message struct {
				Role      string            `json:"role"`
				Content   *string           `json:"content"`
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"message"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(data, &completion); err != nil || len(completion.Choices) == 0 {
		// Not a completion: hand the body back for the client to report.
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return resp, nil
	}
	var out bytes.Buffer
	write := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		out.WriteString("data: ")
		out.Write(b)
		out.WriteString("\n\n")
		return nil
	}
	for _, c := range completion.Choices {
		delta := map[string]any{"role": "assistant"}
		if c.Message.Content != nil {
			delta["content"] = *c.Message.Content
		}
		if len(c.Message.ToolCalls) > 0 {
			calls := make([]map[string]any, 0, len(c.Message.ToolCalls))
			for i, raw := range c.Message.ToolCalls {
				var call map[string]any
				if err := json.Unmarshal(raw, &call); err != nil {
					return nil, fmt.Errorf("the model's tool call %d is not JSON: %w", i, err)
				}
				call["index"] = i
				calls = append(calls, call)
			}
			delta["tool_calls"] = calls
		}
		chunk := map[string]any{"id": completion.ID, "object": "chat.completion.chunk", "created": completion.Created, "model": completion.Model,
			"choices": []any{map[string]any{"index": c.Index, "delta": delta, "finish_reason": c.FinishReason}}}
		if len(completion.Usage) > 0 {
			chunk["usage"] = completion.Usage
		}
		if err := write(chunk); err != nil {
			return nil, err
		}
	}
	out.WriteString("data: [DONE]\n\n")
	resp.Body = io.NopCloser(&out)
	resp.ContentLength = int64(out.Len())
	resp.Header.Set("Content-Type", "text/event-stream")
	resp.Header.Del("Content-Length")
	return resp, nil
}

// askedStream reports whether a chat request's body asks for a stream.
func askedStream(req *http.Request) bool {
	if req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	var r struct {
		Stream bool `json:"stream"`
	}
	dec := json.NewDecoder(io.LimitReader(body, 64<<20))
	return dec.Decode(&r) == nil && r.Stream
}
