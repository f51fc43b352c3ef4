// Package sse writes Server-Sent Events: named events with ids and JSON data,
// and keep-alive comments, flushed one frame at a time.
//
// A writer prepared for a request whose connection it knows (the server's
// ConnContext is ConnContext) can also try a frame (TryWrite): write it only
// when that cannot wait on the client, so that the goroutine producing a
// frame may write it itself instead of waking the stream's goroutine.
package sse

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Frame is one server-sent event.
type Frame struct {
	// ID is sent as the event's id (used by clients for Last-Event-ID); empty
	// sends none.
	ID string
	// Event is the event name; empty sends a plain "message" event.
	Event string
	// Data is the event's data, already encoded (JSON).
	Data []byte
}

// Writer writes frames to an HTTP response. It is safe for concurrent use, so
// that keep-alive comments can interleave with frames.
type Writer struct {
	mu      sync.Mutex
	w       *bufio.Writer
	flusher http.Flusher
	err     error
	// room returns how many more bytes the connection takes without
	// waiting; nil when that is unknown (TryWrite then writes nothing).
	// budget is what TryWrite may still write before it asks room again:
	// what room said less what TryWrite wrote since (the kernel's buffer
	// only empties meanwhile). Other writes zero it.
	room   func() int
	budget int
}

// roomMargin is kept free in the connection's send buffer beyond what the
// frames need (sendRoom), and tryOverhead is counted for each frame beyond
// its bytes: the kernel's buffers of the segments that carry it, and the
// chunk's header.
const (
	roomMargin  = 16 << 10
	tryOverhead = 2 << 10
)

// connKey is the context key of a request's connection (ConnContext).
type connKey struct{}

// ConnContext is an http.Server ConnContext: it lets the event streams of
// the connection's requests see the connection (PrepareRequest).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// Prepare sets the response headers of an event stream and returns a writer.
// The status code is written at once so that clients see the headers before
// the first event.
func Prepare(w http.ResponseWriter) *Writer {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	sw := &Writer{w: bufio.NewWriterSize(w, 4096), flusher: f}
	sw.mu.Lock()
	sw.flush()
	sw.mu.Unlock()
	return sw
}

// PrepareRequest is Prepare for the response to r: when r came over
// HTTP/1 on a connection whose send buffer can be read (ConnContext,
// TCP on Linux), the writer can also TryWrite.
func PrepareRequest(w http.ResponseWriter, r *http.Request) *Writer {
	sw := Prepare(w)
	if r.ProtoMajor == 1 {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			sw.room = sendRoom(c)
		}
	}
	return sw
}

// NewWriter returns a writer over any io.Writer (flushing it when it is an
// http.Flusher); headers are the caller's business.
func NewWriter(w io.Writer) *Writer {
	f, _ := w.(http.Flusher)
	return &Writer{w: bufio.NewWriterSize(w, 4096), flusher: f}
}

// Write sends one frame and flushes it.
func (s *Writer) Write(f Frame) error { return s.WriteWithIDPrefix("", f) }

// WriteWithIDPrefix sends one frame whose id is preceded by prefix, and
// flushes it: the frame as Write sends Frame{ID: prefix + f.ID, ...},
// without building that id.
func (s *Writer) WriteWithIDPrefix(prefix string, f Frame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.budget = 0
	return s.write(prefix, f)
}

// TryWrite writes and flushes f only when that cannot wait: nobody else
// is writing, and the connection's send buffer has room for the frame with
// a wide margin (its kernel buffer at most half full after it), so that a
// client that reads slowly or not at all never holds up the caller. It
// reports whether it wrote the frame; when it did not, nothing of it was
// written. The error is that of the write (or of an earlier one).
func (s *Writer) TryWrite(f Frame) (bool, error) {
	if s.room == nil || !s.mu.TryLock() {
		return false, nil
	}
	defer s.mu.Unlock()
	if s.err != nil {
		return false, s.err
	}
	need := len(f.ID) + len(f.Event) + 2*len(f.Data) + tryOverhead
	if s.budget < need {
		if s.budget = s.room(); s.budget < need {
			s.budget = 0
			return false, nil
		}
	}
	err := s.write("", f)
	s.budget -= need
	return true, err
}

// write writes a frame and flushes it; s.mu is held.
func (s *Writer) write(prefix string, f Frame) error {
	if prefix != "" || f.ID != "" {
		s.w.WriteString("id: ")
		s.w.WriteString(prefix)
		s.w.WriteString(f.ID)
		s.w.WriteByte('\n')
	}
	if f.Event != "" {
		s.writeField("event", f.Event)
	}
	data := f.Data
	if len(data) == 0 {
		data = []byte("null")
	}
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		s.w.WriteString("data: ")
		s.w.Write(line)
		s.w.WriteByte('\n')
		if !more {
			break
		}
		data = rest
	}
	s.w.WriteByte('\n')
	return s.flush()
}

// WriteJSON encodes v as the data of a frame and sends it.
func (s *Writer) WriteJSON(id, event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sse: encode %s event: %w", event, err)
	}
	return s.Write(Frame{ID: id, Event: event, Data: data})
}

// Comment sends a comment line (": text"), which clients ignore; it keeps
// idle connections open through proxies.
func (s *Writer) Comment(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.budget = 0
	s.w.WriteString(": ")
	s.w.WriteString(strings.ReplaceAll(text, "\n", " "))
	s.w.WriteString("\n\n")
	return s.flush()
}

func (s *Writer) writeField(name, value string) {
	s.w.WriteString(name)
	s.w.WriteString(": ")
	s.w.WriteString(value)
	s.w.WriteByte('\n')
}

func (s *Writer) flush() error {
	if err := s.w.Flush(); err != nil {
		s.err = fmt.Errorf("sse: write: %w", err)
		return s.err
	}
	if s.flusher != nil {
		s.flusher.Flush()
	}
	return nil
}

// Parse reads frames from an event stream until EOF, calling fn for each; it
// is the client side, used by tests and the load client. Comments are skipped.
// Each frame's data is its own (fn may keep it); the lines are read in place.
func Parse(r io.Reader, fn func(Frame) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var cur Frame
	var data []byte
	lines := 0
	has := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if has {
				if data == nil {
					data = []byte{}
				}
				cur.Data = data
				if err := fn(cur); err != nil {
					return err
				}
			}
			cur, data, lines, has = Frame{}, nil, 0, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		has = true
		switch string(name) {
		case "id":
			cur.ID = string(value)
		case "event":
			cur.Event = string(value)
		case "data":
			if lines > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
			lines++
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("sse: read: %w", err)
	}
	return nil
}
