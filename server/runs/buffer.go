package runs

import (
	"strconv"
	"sync"

	"github.com/graphctl/graphctl/server/sse"
)

// Entry is one buffered stream frame and the stream mode that produced it
// (empty for frames every subscriber gets: metadata, error, end).
type Entry struct {
	Seq   int
	Mode  string
	Frame sse.Frame
}

// Buffer holds a run's stream frames so that clients can join late or
// reconnect with Last-Event-ID. Appends wake every waiting subscriber.
type Buffer struct {
	mu      sync.Mutex
	entries []Entry
	closed  bool
	notify  chan struct{}
	// watched is set once Since has handed out notify: the next append
	// closes it and makes another. Appends that nobody waits for (a
	// subscriber still writing the frames it has) leave it as it is.
	watched bool
}

// NewBuffer returns an empty, open buffer.
func NewBuffer() *Buffer { return &Buffer{notify: make(chan struct{})} }

// Append adds a frame; its id is its sequence number, starting at 1.
func (b *Buffer) Append(mode, event string, data []byte) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	seq := len(b.entries) + 1
	b.entries = append(b.entries, Entry{Seq: seq, Mode: mode, Frame: sse.Frame{ID: strconv.Itoa(seq), Event: event, Data: data}})
	if !b.watched {
		b.mu.Unlock()
		return
	}
	ch := b.notify
	b.notify, b.watched = make(chan struct{}), false
	b.mu.Unlock()
	close(ch)
}

// Close marks the stream complete and wakes subscribers.
func (b *Buffer) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	ch := b.notify
	b.mu.Unlock()
	close(ch)
}

// Since returns the entries after sequence number after, whether the stream
// is complete, and a channel closed at the next append or close.
func (b *Buffer) Since(after int) ([]Entry, bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if after < 0 {
		after = 0
	}
	var out []Entry
	if after < len(b.entries) {
		out = b.entries[after:len(b.entries):len(b.entries)]
	}
	b.watched = true
	return out, b.closed, b.notify
}

// Len returns the number of frames appended so far.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}
