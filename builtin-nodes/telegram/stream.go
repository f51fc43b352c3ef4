package telegram

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Stream shows a reply while it is being written: the first partial text is
// sent as a message, later text edits that message at most once per
// Interval, and the final answer (telegram_reply) replaces it. A Stream is
// bound to one run through its context (WithStream).
type Stream struct {
	Client *Client
	ChatID int64
	// ReplyTo makes the streamed message a reply to the user's message.
	ReplyTo int64
	// Interval bounds the edit rate; Telegram allows about one edit per
	// second per chat.
	Interval time.Duration
	// Now reads the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	text    []rune
	shown   string
	msgID   int64
	last    time.Time
	pending bool
	err     error
	// hold is when Telegram's flood control lets previews go again.
	hold time.Time
}

type streamKey struct{}

// WithStream binds s to ctx; telegram_reply nodes running under ctx finish
// the streamed message instead of sending a new one.
func WithStream(ctx context.Context, s *Stream) context.Context {
	return context.WithValue(ctx, streamKey{}, s)
}

// StreamFrom returns the Stream bound to ctx, or nil.
func StreamFrom(ctx context.Context) *Stream {
	s, _ := ctx.Value(streamKey{}).(*Stream)
	return s
}

func (s *Stream) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Append adds a partial token and shows the text so far when the last update
// is at least Interval old. Errors are kept (see Err), never returned: a
// failed preview must not fail the run.
func (s *Stream) Append(ctx context.Context, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text = append(s.text, []rune(token)...)
	s.pending = true
	if s.msgID != 0 && s.now().Sub(s.last) < s.Interval {
		return
	}
	s.flushLocked(ctx)
}

// Flush shows any text not shown yet.
func (s *Stream) Flush(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending {
		s.flushLocked(ctx)
	}
}

func (s *Stream) flushLocked(ctx context.Context) {
	// The preview shows the first message's worth; the final reply sends
	// the rest.
	preview := string(s.text[:fitUTF16(s.text, MaxMessageLen)])
	if preview == "" || preview == s.shown {
		s.pending = false
		return
	}
	if s.now().Before(s.hold) {
		return // flood control: the preview waits, the final reply does not
	}
	s.last = s.now()
	s.pending = false
	// A preview never waits out flood control: it is skipped until then.
	ctx = context.WithValue(ctx, noFloodWait{}, true)
	var err error
	if s.msgID == 0 {
		var m *Message
		if m, err = s.Client.SendMessage(ctx, s.ChatID, preview, s.ReplyTo); err == nil {
			s.msgID = m.MessageID
		}
	} else {
		err = s.Client.EditMessageText(ctx, s.ChatID, s.msgID, preview)
	}
	if err != nil {
		s.err = err
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			s.hold = s.now().Add(apiErr.RetryAfter)
		}
		return
	}
	s.shown = preview
}

// MessageID returns the streamed message's id, 0 before the first send.
func (s *Stream) MessageID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.msgID
}

// Shown returns the text the streamed message currently shows.
func (s *Stream) Shown() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shown
}

// Err returns the last error of a send or edit.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// finish makes the streamed message show text (the first piece of the final
// reply) and returns its id; 0 when nothing was streamed.
func (s *Stream) finish(ctx context.Context, text string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.msgID == 0 {
		return 0, nil
	}
	if text != s.shown {
		if err := s.Client.EditMessageText(ctx, s.ChatID, s.msgID, text); err != nil {
			return 0, err
		}
		s.shown = text
	}
	s.text = []rune(text)
	s.pending = false
	return s.msgID, nil
}
