// Package llmtest runs a local OpenAI-compatible model server for tests.
//
// The server speaks the wire protocol real clients use (langchaingo's openai
// client, and any other OpenAI SDK pointed at URL()): POST /v1/chat/completions,
// non-streaming and streaming (SSE "data: {...}" chunks ending in
// "data: [DONE]"), tool calls in both modes, image inputs (content parts with
// image_url), token usage; and POST /v1/embeddings with deterministic vectors
// (a hashed bag of words, so texts sharing words are close). A test scripts
// the replies, may make the first calls fail (429 with Retry-After, 500),
// break a reply as broken servers do (Fault: a stream cut before its final
// chunk or mid tool call, a chunk that is not JSON, an error event, a
// connection reset), slow each token down, and inspects every request
// received. It refuses requests whose tool messages break OpenAI's pairing
// rule, as OpenAI does.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/graphctl/graphctl/builtin-nodes/llm/internal/hashvec"
)

// Reply is one scripted completion.
type Reply struct {
	// Content is the assistant's text, streamed token by token in stream mode.
	Content string
	// ToolCalls are returned as native tool calls.
	ToolCalls []ToolCall
	// Fault breaks the delivery of the reply (the reply is used up).
	Fault Fault
	// Delay holds the answer back this long (a slow model), or until the
	// request is given up.
	Delay time.Duration
}

// Fault is a way the server breaks a reply, as broken model servers and
// networks do.
type Fault string

// Faults a reply can carry.
const (
	// FaultCutBeforeDone ends a stream cleanly after the content, without
	// the final chunk (finish_reason) and without [DONE]; a non-streamed
	// body is cut half-way.
	FaultCutBeforeDone Fault = "cut_before_done"
	// FaultCutMidToolCall ends a stream cleanly after the first half of the
	// first tool call's arguments.
	FaultCutMidToolCall Fault = "cut_mid_tool_call"
	// FaultNoDone sends the final chunk but not [DONE] (a complete reply
	// from a server that never sends [DONE]).
	FaultNoDone Fault = "no_done"
	// FaultGarbage sends a chunk that is not JSON after the first token (a
	// non-streamed body that is not JSON).
	FaultGarbage Fault = "garbage"
	// FaultErrorEvent sends an error object in the stream after the first
	// token and ends it.
	FaultErrorEvent Fault = "error_event"
	// FaultResetMidStream resets the connection after the first token.
	FaultResetMidStream Fault = "reset_mid_stream"
	// FaultResetBeforeReply resets the connection before any answer.
	FaultResetBeforeReply Fault = "reset_before_reply"
	// FaultIgnoreStream answers a streaming request with one plain JSON
	// completion, as servers without streaming support do.
	FaultIgnoreStream Fault = "ignore_stream"
	// FaultRefuseStream answers a streaming request with 400 "stream is not
	// supported", as some servers without streaming support do, and keeps
	// the reply for the next request; a non-streaming request gets it.
	FaultRefuseStream Fault = "refuse_stream"
)

// Broken is a reply delivered with a fault.
func Broken(r Reply, f Fault) Reply {
	r.Fault = f
	return r
}

// ToolCall is a tool call in a reply, or in an assistant message of a
// request; Arguments is the JSON text.
type ToolCall struct {
	// ID is the call's id; in a reply it is generated when empty.
	ID        string
	Name      string
	Arguments string
}

// Text is a reply with text content.
func Text(s string) Reply { return Reply{Content: s} }

// JSON is a reply whose content is v encoded as JSON.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		return Reply{Content: fmt.Sprintf("llmtest: cannot encode %T: %v", v, err)}
	}
	return Reply{Content: string(b)}
}

// Call is a reply made of one tool call, given as a name and arguments.
func Call(name string, args map[string]any) Reply {
	return Calls(Fn(name, args))
}

// Calls is a reply made of several tool calls at once.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Fn is a tool call with arguments encoded as JSON.
func Fn(name string, args map[string]any) ToolCall {
	b, _ := json.Marshal(args)
	return ToolCall{Name: name, Arguments: string(b)}
}

// Message is a chat message as the server received it.
type Message struct {
	Role string
	// Content is the concatenated text parts.
	Content string
	// Images are the image_url URLs of the message's content parts.
	Images []string
	// ToolCallID is set on tool-result messages.
	ToolCallID string
	// ToolCalls are the tool calls of an assistant message.
	ToolCalls []ToolCall
}

// Request is a chat completion request as the server received it.
type Request struct {
	Model       string
	Stream      bool
	Messages    []Message
	Tools       []string
	Temperature *float64
	// JSONMode is true when response_format asked for a JSON object.
	JSONMode bool
	// Status is the HTTP status the server answered with.
	Status int
	// At is when the request arrived.
	At time.Time
	// Authorization is the request's Authorization header.
	Authorization string
	// Path is the request's URL path.
	Path string
}

// TokenWrite records one streamed content chunk leaving the server; At is
// taken just before the chunk is written and flushed.
type TokenWrite struct {
	Text string
	At   time.Time
}

// Option configures a Server.
type Option func(*Server)

// WithTokenDelay sleeps d after writing each streamed chunk.
func WithTokenDelay(d time.Duration) Option { return func(s *Server) { s.delay = d } }

// WithFailures answers the first n chat calls with status (429 carries a
// Retry-After header).
func WithFailures(n, status int) Option {
	return func(s *Server) { s.failN, s.failStatus = n, status }
}

// WithRetryAfter sets the Retry-After header of 429 answers (default "1").
func WithRetryAfter(v string) Option { return func(s *Server) { s.retryAfter = v } }

// WithReplies queues replies.
func WithReplies(r ...Reply) Option { return func(s *Server) { s.queue = append(s.queue, r...) } }

// WithBasePath serves the API under path instead of /v1, as providers with
// an OpenAI-compatible endpoint of their own do (e.g. "/v1beta/openai").
func WithBasePath(path string) Option { return func(s *Server) { s.basePath = path } }

// WithEmbeddingDim sets the length of embedding vectors (default 64).
func WithEmbeddingDim(n int) Option { return func(s *Server) { s.dim = n } }

// Server is a local OpenAI-compatible server.
type Server struct {
	srv *httptest.Server
	t   testing.TB

	basePath   string
	delay      time.Duration
	dim        int
	failStatus int
	retryAfter string

	mu         sync.Mutex
	failN      int
	queue      []Reply
	requests   []Request
	embedCalls [][]string
	tokens     []TokenWrite
	calls      int
}

// NewServer starts a server on 127.0.0.1, closed when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, basePath: "/v1", dim: 64, failStatus: http.StatusInternalServerError, retryAfter: "1"}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+s.basePath+"/chat/completions", s.chat)
	mux.HandleFunc("POST "+s.basePath+"/embeddings", s.embeddings)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL, including /v1 (or the WithBasePath path).
func (s *Server) URL() string { return s.srv.URL + s.basePath }

// Push queues replies.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, r...)
	s.mu.Unlock()
}

// Fail makes the next n chat calls fail with status.
func (s *Server) Fail(n, status int) {
	s.mu.Lock()
	s.failN, s.failStatus = n, status
	s.mu.Unlock()
}

// Requests returns the chat requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Embeddings returns the inputs of every embeddings call.
func (s *Server) Embeddings() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.embedCalls...)
}

// Tokens returns every streamed content chunk written, with its time.
func (s *Server) Tokens() []TokenWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TokenWrite(nil), s.tokens...)
}

// Pending returns how many queued replies are left.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

type wireRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Temperature    *float64 `json:"temperature"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
}

func decodeMessage(role string, raw json.RawMessage, toolID string) (Message, error) {
	m := Message{Role: role, ToolCallID: toolID}
	if len(raw) == 0 || string(raw) == "null" {
		return m, nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		m.Content = text
		return m, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return m, fmt.Errorf("content is neither a string nor a list of parts: %w", err)
	}
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image_url":
			m.Images = append(m.Images, p.ImageURL.URL)
		default:
			return m, fmt.Errorf("unknown content part type %q", p.Type)
		}
	}
	m.Content = strings.Join(texts, "")
	return m, nil
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+err.Error())
		return
	}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not a chat request: "+err.Error())
		return
	}
	req := Request{Model: wr.Model, Stream: wr.Stream, Temperature: wr.Temperature, At: time.Now(), Authorization: r.Header.Get("Authorization"), Path: r.URL.Path,
		JSONMode: wr.ResponseFormat != nil && wr.ResponseFormat.Type == "json_object"}
	for i, m := range wr.Messages {
		msg, err := decodeMessage(m.Role, m.Content, m.ToolCallID)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages[%d]: %v", i, err))
			return
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	if problem := checkToolPairing(req.Messages); problem != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", problem)
		return
	}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}

	s.mu.Lock()
	s.calls++
	id := s.calls
	var reply Reply
	status := http.StatusOK
	refused := false
	switch {
	case s.failN > 0:
		s.failN--
		status = s.failStatus
	case len(s.queue) == 0:
		status = http.StatusBadRequest
	case s.queue[0].Fault == FaultRefuseStream && wr.Stream:
		status = http.StatusBadRequest
		refused = true
	default:
		reply = s.queue[0]
		s.queue = s.queue[1:]
	}
	req.Status = status
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	switch {
	case status == http.StatusTooManyRequests:
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		writeError(w, status, "rate_limit_exceeded", "Rate limit reached for requests")
		return
	case refused:
		writeError(w, status, "invalid_request_error", "stream is not supported by this server")
		return
	case status == http.StatusBadRequest:
		writeError(w, status, "invalid_request_error", "llmtest: no scripted reply left")
		return
	case status != http.StatusOK:
		writeError(w, status, "server_error", "The server had an error while processing your request")
		return
	}

	prompt := 0
	for _, m := range req.Messages {
		prompt += len(hashvec.Words(m.Content))
	}
	tokens := splitTokens(reply.Content)
	completion := len(tokens) + len(reply.ToolCalls)
	usage := map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if reply.Fault == FaultResetBeforeReply {
		reset(w)
		return
	}
	if !wr.Stream || reply.Fault == FaultIgnoreStream {
		s.writeReply(w, wr.Model, id, reply, usage)
		return
	}
	s.writeStream(w, r, wr, id, reply, tokens, usage)
}

// finishReason is the finish_reason of a reply.
func finishReason(reply Reply) string {
	if len(reply.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// writeReply answers a non-streaming request with one JSON completion;
// FaultCutBeforeDone cuts the body half-way, FaultGarbage sends a body that
// is not JSON.
func (s *Server) writeReply(w http.ResponseWriter, model string, id int, reply Reply, usage map[string]any) {
	msg := map[string]any{"role": "assistant", "content": reply.Content}
	if len(reply.ToolCalls) > 0 {
		var calls []map[string]any
		for i, tc := range reply.ToolCalls {
			calls = append(calls, map[string]any{"id": callID(tc, id, i), "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		msg["tool_calls"] = calls
	}
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-" + strconv.Itoa(id), "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(reply)}},
		"usage":   usage,
	})
	switch reply.Fault {
	case FaultCutBeforeDone, FaultCutMidToolCall, FaultResetMidStream:
		body = body[:len(body)/2]
	case FaultGarbage:
		body = []byte(`{"id": "chatcmpl-x", "choices": [{"message": {"content": "oops`)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// writeStream answers a streaming request with SSE chunks ending in
// "data: [DONE]", applying the reply's fault.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, wr wireRequest, id int, reply Reply, tokens []string, usage map[string]any) {
	chatID := "chatcmpl-" + strconv.Itoa(id)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	raw := func(line string) bool {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", line); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	send := func(delta map[string]any, finishReason any) bool {
		chunk := map[string]any{"id": chatID, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": wr.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason}}}
		b, _ := json.Marshal(chunk)
		return raw(string(b))
	}
	if !send(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	for i, tok := range tokens {
		// The time is taken before the write, so that a reader can never see
		// the chunk before it was recorded as written.
		s.mu.Lock()
		s.tokens = append(s.tokens, TokenWrite{Text: tok, At: time.Now()})
		s.mu.Unlock()
		if !send(map[string]any{"content": tok}, nil) {
			return
		}
		if i == 0 && !s.midStreamFault(w, reply.Fault, raw) {
			return
		}
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-r.Context().Done():
				return
			}
		}
	}
	for i, tc := range reply.ToolCalls {
		first := map[string]any{"index": i, "id": callID(tc, id, i), "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}
		if !send(map[string]any{"tool_calls": []any{first}}, nil) {
			return
		}
		// Arguments arrive in two pieces, as real servers split them.
		half := len(tc.Arguments) / 2
		for _, piece := range []string{tc.Arguments[:half], tc.Arguments[half:]} {
			if piece == "" {
				continue
			}
			if !send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": piece}}}}, nil) {
				return
			}
			if reply.Fault == FaultCutMidToolCall {
				return
			}
		}
	}
	if reply.Fault == FaultCutBeforeDone || !send(map[string]any{}, finishReason(reply)) {
		return
	}
	if wr.StreamOptions != nil && wr.StreamOptions.IncludeUsage {
		b, _ := json.Marshal(map[string]any{"id": chatID, "object": "chat.completion.chunk", "model": wr.Model, "choices": []any{}, "usage": usage})
		raw(string(b))
	}
	if reply.Fault != FaultNoDone {
		raw("[DONE]")
	}
}

// midStreamFault applies a fault that strikes after the first token; it
// reports whether the stream goes on.
func (s *Server) midStreamFault(w http.ResponseWriter, f Fault, raw func(string) bool) bool {
	switch f {
	case FaultGarbage:
		return raw(`{"id": "chatcmpl-x", "choices": [{"delta": {"content": "oops`)
	case FaultErrorEvent:
		raw(`{"error": {"message": "The server is overloaded", "type": "server_error", "code": 503}}`)
		return false
	case FaultResetMidStream:
		reset(w)
		return false
	}
	return true
}

// reset drops the connection with a TCP reset.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not an embeddings request: "+err.Error())
		return
	}
	var inputs []string
	var one string
	if err := json.Unmarshal(req.Input, &one); err == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "input must be a string or a list of strings")
		return
	}
	s.mu.Lock()
	s.embedCalls = append(s.embedCalls, inputs)
	s.mu.Unlock()
	data := make([]any, len(inputs))
	words := 0
	for i, in := range inputs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": hashvec.Vector(in, s.dim)}
		words += len(hashvec.Words(in))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": words, "total_tokens": words}})
}

// callID is a reply's tool call id: its own, or call_<request>_<n>.
func callID(tc ToolCall, request, i int) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("call_%d_%d", request, i+1)
}

// checkToolPairing refuses what OpenAI refuses: a tool message that does not
// answer a call of the assistant message before its run of tool messages,
// and an assistant message whose tool calls are not all answered by the
// tool messages right after it.
func checkToolPairing(msgs []Message) string {
	for i, m := range msgs {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		open := map[string]bool{}
		for _, tc := range m.ToolCalls {
			open[tc.ID] = true
		}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == "tool"; j++ {
			if !open[msgs[j].ToolCallID] {
				return fmt.Sprintf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", j, msgs[j].ToolCallID)
			}
			delete(open, msgs[j].ToolCallID)
		}
		if len(open) > 0 {
			return fmt.Sprintf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (%d unanswered)", i, len(open))
		}
	}
	for i, m := range msgs {
		if m.Role != "tool" {
			continue
		}
		k := i - 1
		for k >= 0 && msgs[k].Role == "tool" {
			k--
		}
		if k < 0 || msgs[k].Role != "assistant" || len(msgs[k].ToolCalls) == 0 {
			return fmt.Sprintf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls'", i)
		}
	}
	return ""
}

// splitTokens splits text into words with their trailing spaces.
func splitTokens(text string) []string {
	var out []string
	start, inSpace := 0, false
	for i, r := range text {
		sp := unicode.IsSpace(r)
		if inSpace && !sp {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
