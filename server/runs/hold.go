package runs

import (
	"context"
	"fmt"
)

// holder names what keeps a busy thread, for errors.
func (s *slot) holder() string {
	if s.active != nil {
		return fmt.Sprintf("run %s is active", s.active.Record().RunID)
	}
	return "its state is being updated"
}

// Hold claims an idle thread for a change made outside a run (a state
// update), so that the manager stays the one owner of thread locking: a run
// submitted meanwhile follows its multitask strategy (reject gets ErrBusy,
// the others wait for the release). A busy thread gets ErrBusy. The returned
// release must be called once the change is done.
func (m *Manager) Hold(threadID string) (release func(), err error) {
	if m.shared() {
		m.mu.Lock()
		closing := m.closing
		m.mu.Unlock()
		if closing {
			return nil, ErrClosed
		}
		// The database holds the thread, for every replica.
		return m.opts.Queue.Hold(context.Background(), threadID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return nil, ErrClosed
	}
	if s := m.threads[threadID]; s != nil {
		return nil, fmt.Errorf("thread %q: %s: %w", threadID, s.holder(), ErrBusy)
	}
	s := &slot{held: true}
	m.threads[threadID] = s
	released := false
	return func() {
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
