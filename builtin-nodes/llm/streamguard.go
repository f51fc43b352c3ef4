package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// ErrBrokenStream is wrapped by the error of a model call whose streamed
// reply broke: it ended before its final chunk, carried a chunk that is not
// JSON, or reported an error half-way. Such a reply is never used; the
// node fails with a retryable llm_error.
var ErrBrokenStream = errors.New("the model's reply stream broke")

// streamKind says how a provider's server-sent events end.
type streamKind int

const (
	notGuarded streamKind = iota
	// openaiStream ends with "data: [DONE]"; a chunk with a finish_reason
	// followed by the end of the body is accepted too (servers that never
	// send [DONE]).
	openaiStream
	// anthropicStream ends with an event of type message_stop.
	anthropicStream
)

// guardTransport checks the server-sent events of model replies as the
// client reads them: langchaingo's clients skip chunks that are not JSON
// and take a body that simply ends for a complete reply, which would save a
// cut reply as if it were whole.
type guardTransport struct {
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil && req.Context().Err() == nil && unreachable(err) {
		// The model clients replace a network error by a bare "failed to
		// reach API server"; as a 502 naming the address, the reason
		// reaches the user (and the call is retried as before).
		u := *req.URL
		u.RawQuery, u.User = "", nil
		return errorResponse(req, http.StatusBadGateway, "server_error", fmt.Sprintf("cannot reach the model server at %s: %v", u.String(), err)), nil
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if resp, err = asStream(req, resp); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, nil
	}
	kind, chat := notGuarded, false
	switch path := req.URL.Path; {
	case strings.HasSuffix(path, "/chat/completions"):
		kind, chat = openaiStream, true
	case strings.HasSuffix(path, "/completions"):
		kind = openaiStream
	case strings.HasSuffix(path, "/messages"):
		kind = anthropicStream
	}
	if kind != notGuarded {
		g := &streamGuard{src: resp.Body, r: newReader(resp.Body), kind: kind}
		if tap := textTapFrom(req.Context()); chat && tap != nil && tap.take() {
			g.tap = tap
		}
		resp.Body = g
	}
	return resp, nil
}

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }

// streamGuard passes a stream through line by line, after checking each
// line; it turns the end of a stream that did not finish into an error.
//
// With a text tap (an OpenAI chat completion streamed for a node), it also
// sends the tap the text of each chunk as it reads it, and holds back the
// chunks that carry nothing but text: their text is passed on merged into
// one chunk just before the next other chunk (or every mergeLimit bytes),
// so the client reading the stream decodes, hands over and appends a few
// chunks instead of one per token.
type streamGuard struct {
	src  io.ReadCloser
	r    *bufio.Reader
	kind streamKind
	tap  *textTap

	pending  []byte
	err      error
	done     bool // [DONE] or message_stop seen
	finished bool // a finish_reason seen

	// chunk is the decoded chunk of a tapped stream, reused, and dec the
	// decoder that reads the chunks from line (its buffers and state kept
	// from chunk to chunk).
	chunk openaiChunk
	dec   *json.Decoder
	line  lineSource
	// merged is the text of the chunks held back; holding is set while
	// there are any (their text may be empty).
	merged  []byte
	holding bool
	// heldLine is set when the last line was held back: the blank line
	// that ends its event is dropped with it.
	heldLine bool
	// long gathers a line longer than the reader's buffer; out is where a
	// merged chunk is written with the line that follows it.
	long, out []byte
}

// mergeLimit is how much held-back text a merged chunk carries at most
// before it is passed on: its line stays far below the 64 KiB a line may
// have in the client's scanner, even with every byte escaped.
const mergeLimit = 8 << 10

// Read implements io.Reader.
func (g *streamGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, err := g.readLine()
		if len(line) > 0 {
			held, cerr := g.check(line, err == io.EOF)
			if cerr != nil {
				g.err = cerr
				continue
			}
			switch {
			case held && len(g.merged) >= mergeLimit:
				g.pending = g.release(nil)
			case held:
			case g.heldLine && len(bytes.TrimRight(line, "\r\n")) == 0:
				// The end of a held-back chunk's event.
			default:
				g.pending = g.release(line)
			}
			g.heldLine = held
		}
		switch {
		case err == io.EOF && g.complete():
			g.pending = g.release(g.pending)
			g.err = io.EOF
		case err == io.EOF:
			g.err = fmt.Errorf("%w: it ended before its final chunk (no finish_reason and no [DONE])", ErrBrokenStream)
		case err != nil:
			g.err = fmt.Errorf("%w: reading it failed: %w", ErrBrokenStream, err)
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// readLine returns the next line of the stream, valid until the next call.
func (g *streamGuard) readLine() ([]byte, error) {
	line, err := g.r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	g.long = append(g.long[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = g.r.ReadSlice('\n')
		g.long = append(g.long, line...)
	}
	return g.long, err
}

// release returns line preceded by the held-back text as one chunk, if
// any is held.
func (g *streamGuard) release(line []byte) []byte {
	if !g.holding {
		return line
	}
	b := append(g.out[:0], `data: {"choices":[{"index":0,"delta":{"content":`...)
	b = jsonenc.AppendString(b, string(g.merged))
	b = append(b, "}}]}\n\n"...)
	b = append(b, line...)
	g.out, g.merged, g.holding = b, g.merged[:0], false
	return b
}

// Close implements io.Closer.
func (g *streamGuard) Close() error { return g.src.Close() }

func (g *streamGuard) complete() bool {
	return g.done || (g.kind == openaiStream && g.finished)
}

// check reads one line of the stream: a data line must be JSON (or [DONE]),
// and must not be an error object. last is set for a final line without its
// newline, which a cut stream leaves. held is set for a tapped chunk that
// carries only text, which is passed on later, merged.
func (g *streamGuard) check(line []byte, last bool) (held bool, err error) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
	if !ok || g.done {
		return false, nil
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		g.done = true
		return false, nil
	}
	if g.tap != nil {
		return g.checkTapped(data, last)
	}
	return false, g.checkChunk(data, last)
}

// checkChunk checks a chunk of any protocol.
func (g *streamGuard) checkChunk(data []byte, last bool) error {
	var chunk struct {
		Type    string          `json:"type"`
		Error   json.RawMessage `json:"error"`
		Choices []struct {
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &chunk); err != nil {
		if last {
			return fmt.Errorf("%w: it ended in the middle of a chunk", ErrBrokenStream)
		}
		return fmt.Errorf("%w: a chunk is not JSON (%v): %q", ErrBrokenStream, err, truncate(string(data), 80))
	}
	finished := false
	for _, c := range chunk.Choices {
		if c.FinishReason != nil && *c.FinishReason != "" {
			finished = true
		}
	}
	return g.verdict(chunk.Type, chunk.Error, finished, data)
}

// verdict reads what a decoded chunk says of its stream: an error breaks
// it; a message_stop or a finish_reason completes it.
func (g *streamGuard) verdict(typ string, errObj json.RawMessage, finished bool, data []byte) error {
	if len(errObj) > 0 && string(errObj) != "null" {
		return fmt.Errorf("%w: the server reported an error in it: %s", ErrBrokenStream, truncate(string(errObj), 200))
	}
	switch {
	case typ == "message_stop":
		g.done = true
	case typ == "error" && g.kind == anthropicStream:
		return fmt.Errorf("%w: the server reported an error in it: %s", ErrBrokenStream, truncate(string(data), 200))
	}
	if finished {
		g.finished = true
	}
	return nil
}

// checkTapped checks a chunk of a tapped OpenAI chat stream, sends its text
// to the tap, and holds it back when text is all it carries. A chunk that
// langchaingo's client would not decode (a member of another type than its
// own) is neither sent nor held: the client skips it.
func (g *streamGuard) checkTapped(data []byte, last bool) (held bool, err error) {
	if text, ok := plainTextChunk(data); ok {
		g.tap.text(text)
		g.merged = append(g.merged, text...)
		g.holding = true
		return true, nil
	}
	c := &g.chunk
	clear(c.Choices[:cap(c.Choices)])
	*c = openaiChunk{Choices: c.Choices[:0]}
	if g.dec == nil {
		g.dec = json.NewDecoder(&g.line)
	}
	g.line.data = data
	start := g.dec.InputOffset()
	if err := g.dec.Decode(c); err != nil || g.dec.InputOffset()-start != int64(len(data)) {
		// Not one JSON value of the client's types: the decoder starts
		// over with the next chunk, and the chunk is checked on its own.
		g.dec = nil
		return false, g.checkChunk(data, last)
	}
	finished := false
	for i := range c.Choices {
		if c.Choices[i].FinishReason != "" {
			finished = true
		}
	}
	if err := g.verdict(c.Type, c.Error, finished, data); err != nil {
		return false, err
	}
	if len(c.Choices) == 0 {
		return false, nil
	}
	g.tap.text(c.Choices[0].Delta.Content)
	if !c.textOnly() {
		return false, nil
	}
	g.merged = append(g.merged, c.Choices[0].Delta.Content...)
	g.holding = true
	return true, nil
}

// lineSource is the reader of a stream guard's decoder: the data of the
// line being checked, then the end of input.
type lineSource struct{ data []byte }

// Read implements io.Reader.
func (s *lineSource) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// openaiChunk is a chunk of an OpenAI chat completion stream: the members
// langchaingo's OpenAI client decodes, with its types (so that a chunk it
// cannot decode is told apart), and those the guard checks.
type openaiChunk struct {
	Type              string          `json:"type"`
	Error             json.RawMessage `json:"error"`
	ID                stringMember    `json:"id"`
	Created           float64         `json:"created"`
	Model             stringMember    `json:"model"`
	Object            stringMember    `json:"object"`
	SystemFingerprint stringMember    `json:"system_fingerprint"`
	Usage             *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
			AudioTokens  int `json:"audio_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens          int `json:"reasoning_tokens"`
			AudioTokens              int `json:"audio_tokens"`
			AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
			RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	Choices []openaiChoice `json:"choices"`
}

type openaiChoice struct {
	Index float64 `json:"index"`
	Delta struct {
		Role         stringMember `json:"role"`
		Content      string       `json:"content"`
		FunctionCall *struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function_call"`
		ToolCalls []*struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ReasoningContent stringMember `json:"reasoning_content"`
	} `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

// textOnly reports whether a chunk carries nothing for the client but the
// text of its one choice.
func (c *openaiChunk) textOnly() bool {
	if len(c.Choices) != 1 || c.Usage != nil {
		return false
	}
	ch := &c.Choices[0]
	return ch.FinishReason == "" && ch.Delta.FunctionCall == nil && len(ch.Delta.ToolCalls) == 0 && !ch.Delta.ReasoningContent.nonEmpty
}

// stringMember is a member decoded as a string would be (a string or null,
// else an error), without keeping it; nonEmpty is set for a string that is
// not "".
type stringMember struct{ nonEmpty bool }

// UnmarshalJSON implements json.Unmarshaler.
func (m *stringMember) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) >= 2 && b[0] == '"':
		m.nonEmpty = len(b) > 2
		return nil
	}
	return fmt.Errorf("not a string: %.20s", b)
}

// unreachable reports whether err is a failure to connect to the server
// (refused, no route, unknown host), not one of a request under way.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial")
}

// errorResponse is a response in the shape model servers give errors
// ({"error": {"message", "type", "code"}}), which the model clients report
// with their status and message.
func errorResponse(req *http.Request, status int, kind, message string) *http.Response {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": kind, "code": status}})
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
