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
// reconnect with Last-Event-ID. Appends wake every waiting subscriber, or
// hand the frame to a waiting Direct subscriber, which takes it there.
type Buffer struct {
	mu      sync.Mutex
	entries []Entry
	closed  bool
	notify  chan struct{}
	// watched is set once Since has handed out notify: the next append
	// closes it and makes another. Appends that nobody waits for (a
	// subscriber still writing the frames it has) leave it as it is.
	watched bool
	// direct are the Direct subscribers waiting (SinceDirect).
	direct []*Direct
}

// Direct is a subscriber that is offered each frame appended while it
// waits, by the goroutine that appends it: when it takes the frame (writes
// it, say, without ever waiting), nobody has to be woken for it. Frames it
// does not take wake it as Since's channel would.
type Direct struct {
	take func(Entry) bool
	wake chan struct{}
	// pos is the sequence number of the last frame the subscriber has (or
	// had no use for); waiting is set while the buffer offers it frames.
	// Both are guarded by the buffer's mu.
	pos     int
	waiting bool
}

// maxDirect is how many waiting Direct subscribers an append offers its
// frame to; the others are woken, so that a run many clients follow does
// not write to each of them itself.
const maxDirect = 4

// NewDirect returns a subscriber that take is offered frames for. take is
// called with the buffer locked and must not wait for anything; it returns
// true when it took the frame (or has no use for it), false to be woken
// instead, the frame left for the subscriber's next SinceDirect.
func NewDirect(take func(Entry) bool) *Direct {
	return &Direct{take: take, wake: make(chan struct{}, 1)}
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
	e := Entry{Seq: seq, Mode: mode, Frame: sse.Frame{ID: strconv.Itoa(seq), Event: event, Data: data}}
	b.entries = append(b.entries, e)
	for i := 0; i < len(b.direct); {
		d := b.direct[i]
		if i < maxDirect && d.pos == seq-1 && d.take(e) {
			d.pos = seq
			i++
			continue
		}
		b.drop(i)
	}
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
	for len(b.direct) > 0 {
		b.drop(0)
	}
	ch := b.notify
	b.mu.Unlock()
	close(ch)
}

// drop stops offering frames to the i-th waiting Direct subscriber and
// wakes it; b.mu is held.
func (b *Buffer) drop(i int) {
	d := b.direct[i]
	d.waiting = false
	b.direct = append(b.direct[:i], b.direct[i+1:]...)
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// SinceDirect is Since for a Direct subscriber: it returns the entries
// after sequence number after (or after the last frame d took, when it took
// frames since its previous call), whether the stream is complete, and the
// channel d is woken on. When there are no such entries and the stream is
// open, d waits: it is offered the frames appended from now on until one
// is not taken, the buffer closes, or Leave.
func (b *Buffer) SinceDirect(after int, d *Direct) ([]Entry, bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	after = b.leave(d, after)
	select {
	case <-d.wake:
	default:
	}
	var out []Entry
	if after < len(b.entries) {
		out = b.entries[after:len(b.entries):len(b.entries)]
	} else if !b.closed {
		d.pos, d.waiting = after, true
		b.direct = append(b.direct, d)
	}
	return out, b.closed, d.wake
}

// Leave stops offering frames to d and returns the sequence number of the
// last frame it has: after, or the last one it took.
func (b *Buffer) Leave(d *Direct, after int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.leave(d, after)
}

func (b *Buffer) leave(d *Direct, after int) int {
	if after < 0 {
		after = 0
	}
	if d.pos > after {
		after = d.pos
	}
	if d.waiting {
		d.waiting = false
		for i, w := range b.direct {
			if w == d {
				b.direct = append(b.direct[:i], b.direct[i+1:]...)
				break
			}
		}
	}
	return after
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
