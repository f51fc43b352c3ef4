package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if resp, err = asStream(req, resp); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, nil
	}
	kind := notGuarded
	switch path := req.URL.Path; {
	case strings.HasSuffix(path, "/chat/completions"), strings.HasSuffix(path, "/completions"):
		kind = openaiStream
	case strings.HasSuffix(path, "/messages"):
		kind = anthropicStream
	}
	if kind != notGuarded {
		resp.Body = &streamGuard{src: resp.Body, r: newReader(resp.Body), kind: kind}
	}
	return resp, nil
}

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }

// streamGuard passes a stream through line by line, after checking each
// line; it turns the end of a stream that did not finish into an error.
type streamGuard struct {
	src  io.ReadCloser
	r    *bufio.Reader
	kind streamKind

	pending  []byte
	err      error
	done     bool // [DONE] or message_stop seen
	finished bool // a finish_reason seen
}

// Read implements io.Reader.
func (g *streamGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, err := g.r.ReadBytes('\n')
		if len(line) > 0 {
			if cerr := g.check(line, err == io.EOF); cerr != nil {
				g.err = cerr
				continue
			}
			g.pending = line
		}
		switch {
		case err == io.EOF && g.complete():
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

// Close implements io.Closer.
func (g *streamGuard) Close() error { return g.src.Close() }

func (g *streamGuard) complete() bool {
	return g.done || (g.kind == openaiStream && g.finished)
}

// check reads one line of the stream: a data line must be JSON (or [DONE]),
// and must not be an error object. last is set for a final line without its
// newline, which a cut stream leaves.
func (g *streamGuard) check(line []byte, last bool) error {
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
	if !ok || g.done {
		return nil
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		g.done = true
		return nil
	}
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
	if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
		return fmt.Errorf("%w: the server reported an error in it: %s", ErrBrokenStream, truncate(string(chunk.Error), 200))
	}
	switch {
	case chunk.Type == "message_stop":
		g.done = true
	case chunk.Type == "error" && g.kind == anthropicStream:
		return fmt.Errorf("%w: the server reported an error in it: %s", ErrBrokenStream, truncate(string(data), 200))
	}
	for _, c := range chunk.Choices {
		if c.FinishReason != nil && *c.FinishReason != "" {
			g.finished = true
		}
	}
	return nil
}
