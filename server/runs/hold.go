package runs

import (
	"context"
	"fmt"
	"time"
)

// holder names what keeps a busy thread, for errors.
func (s *slot) holder() string {
	switch {
	case s.active != nil:
		return fmt.Sprintf("run %s is active", s.active.Record().RunID)
	case s.held:
		return "its state is being updated"
	case len(s.queue) > 0:
		rec := s.queue[0].Record()
		return fmt.Sprintf("run %s is pending, to start at %s", rec.RunID, rec.StartAt.UTC().Format(time.RFC3339))
	}
	return "it is busy"
}

// Hold claims an idle thread for a change made outside a run (a state
// update), so that the manager stays the one owner of thread locking: a run
// submitted meanwhile follows its multitask strategy (reject gets ErrBusy,
// the others wait for the release). A busy thread gets ErrBusy; a thread
// whose runs only wait for their start time is idle (one whose time comes
// during the hold starts at the release). The change is made with held, ctx
// carrying, with a Queue, the hold's fence (see Queue.Hold). The returned
// release must be called once the change is done.
func (m *Manager) Hold(ctx context.Context, threadID string) (held context.Context, release func(), err error) {
	if m.shared() {
		m.mu.Lock()
		closing := m.closing
		m.mu.Unlock()
		if closing {
			return nil, nil, ErrClosed
		}
		// The database holds the thread, for every replica.
		return m.opts.Queue.Hold(ctx, threadID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return nil, nil, ErrClosed
	}
	s := m.threads[threadID]
	if s != nil && (s.active != nil || s.held) {
		return nil, nil, fmt.Errorf("thread %q: %s: %w", threadID, s.holder(), ErrBusy)
	}
	if s == nil {
		s = &slot{}
		m.threads[threadID] = s
	}
	s.held = true
	released := false
	return ctx, func() {
		m.mu.Lock()
		if released {
			m.mu.Unlock()
			return
		}
		released = true
		s.held = false
		m.passOnLocked(threadID, s)
	}, nil
}
