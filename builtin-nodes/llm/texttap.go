package llm

import (
	"context"
	"sync"
)

// textTap hands the text of a streamed reply to the node as the stream
// guard reads it off the connection, instead of as langchaingo passes it to
// the call's streaming function: one goroutine hand-off less per token (the
// client's reader goroutine passes each chunk to the caller's over a
// channel) and no decoding of the chunk a second time.
//
// A model call that streams puts a tap in its context; the stream guard of
// an OpenAI chat completion stream takes it (take) and sends it the text of
// every chunk. The call's streaming function then passes on no text (taken
// reports it), only what the guard does not see. Once the call returns, the
// tap is closed: nothing more is sent, whatever goroutine still reads.
type textTap struct {
	// send receives each piece of text, in order; it is called with mu
	// held, never concurrently.
	send func(string)

	mu     sync.Mutex
	taken  bool
	closed bool
}

// textTapKey is the context key of a model call's textTap.
type textTapKey struct{}

// withTextTap returns ctx carrying tap.
func withTextTap(ctx context.Context, tap *textTap) context.Context {
	return context.WithValue(ctx, textTapKey{}, tap)
}

// textTapFrom returns the tap of a model call's context, or nil.
func textTapFrom(ctx context.Context) *textTap {
	tap, _ := ctx.Value(textTapKey{}).(*textTap)
	return tap
}

// take claims the tap for a stream guard; false when it is closed.
func (t *textTap) take() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.taken = true
	return true
}

// isTaken reports whether a stream guard sends the call's text.
func (t *textTap) isTaken() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.taken
}

// text sends a piece of text to the node, unless the tap is closed.
func (t *textTap) text(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed && s != "" {
		t.send(s)
	}
}

// close ends the tap: the call returned.
func (t *textTap) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}
