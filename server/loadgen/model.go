package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Model is a local OpenAI-compatible chat model server (POST
// /v1/chat/completions, plain and streamed) whose answer depends on the last
// user message:
//
//	tokens N INTERVAL   streams N tokens INTERVAL apart, each token's text
//	                    being the time it was sent (Unix nanoseconds)
//	hold                answers only once Release is called
//	anything else       answers "ok"
type Model struct {
	// URL is the server's OpenAI base URL (ending in /v1).
	URL string

	srv      *http.Server
	ln       net.Listener
	release  chan struct{}
	once     sync.Once
	holding  atomic.Int64
	requests atomic.Int64
}

// StartModel starts a model server on 127.0.0.1.
func StartModel() (*Model, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("model server: %w", err)
	}
	m := &Model{URL: "http://" + ln.Addr().String() + "/v1", ln: ln, release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", m.chat)
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(ln)
	return m, nil
}

// Holding is the number of requests waiting for Release.
func (m *Model) Holding() int { return int(m.holding.Load()) }

// Release answers every held request, and every later "hold", at once.
func (m *Model) Release() { m.once.Do(func() { close(m.release) }) }

// Close releases held requests and stops the server.
func (m *Model) Close() error {
	m.Release()
	return m.srv.Close()
}

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// lastUserText returns the text of the request's last user message.
func (r chatRequest) lastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(r.Messages[i].Content, &s) == nil {
			return s
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		json.Unmarshal(r.Messages[i].Content, &parts)
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

func (m *Model) chat(w http.ResponseWriter, r *http.Request) {
	m.requests.Add(1)
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"the body is not a chat completion request"}}`, http.StatusBadRequest)
		return
	}
	text := strings.Fields(req.lastUserText())
	switch {
	case len(text) > 0 && text[0] == "hold":
		m.holding.Add(1)
		select {
		case <-m.release:
		case <-r.Context().Done():
		}
		m.holding.Add(-1)
		m.answer(w, req, []string{"released"}, 0)
	case len(text) == 3 && text[0] == "tokens":
		n, err1 := strconv.Atoi(text[1])
		every, err2 := time.ParseDuration(text[2])
		if err1 != nil || err2 != nil || n < 1 {
			http.Error(w, `{"error":{"message":"tokens N INTERVAL: N a positive number, INTERVAL a duration"}}`, http.StatusBadRequest)
			return
		}
		m.answer(w, req, make([]string, n), every)
	default:
		m.answer(w, req, []string{"ok"}, 0)
	}
}

// answer writes tokens as one completion, or streams them every interval;
// an empty token is replaced by the time it is sent.
func (m *Model) answer(w http.ResponseWriter, req chatRequest, tokens []string, every time.Duration) {
	created := time.Now().Unix()
	if !req.Stream {
		var b strings.Builder
		for _, t := range tokens {
			if t == "" {
				t = strconv.FormatInt(time.Now().UnixNano(), 10) + " "
			}
			b.WriteString(t)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-bench", "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": b.String()}}},
			"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": len(tokens), "total_tokens": 1 + len(tokens)}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	chunk := func(delta map[string]any, finish any) {
		data, _ := json.Marshal(map[string]any{"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", data)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	// A timed token's chunk is encoded before its time is taken, so that
	// the time is when it is written, not when its encoding started.
	const mark = "\x00time\x00"
	data, _ := json.Marshal(map[string]any{"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": created, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": mark}, "finish_reason": nil}}})
	encodedMark, _ := json.Marshal(mark)
	before, after, _ := bytes.Cut(append([]byte("data: "), data...), encodedMark[1:len(encodedMark)-1])
	after = append(after, "\n\n"...)
	var frame []byte
	for i, t := range tokens {
		if i > 0 && every > 0 {
			time.Sleep(every)
		}
		if t != "" {
			chunk(map[string]any{"content": t}, nil)
			continue
		}
		frame = append(append(strconv.AppendInt(append(frame[:0], before...), time.Now().UnixNano(), 10), ' '), after...)
		w.Write(frame)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk(map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}
