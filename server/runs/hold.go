package runs

import (
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
		// Replicas: the thread must have no running or queued run; a run
		// submitted on another replica during the change is not held back.
		if a, busy := m.Busy(threadID); busy {
			return nil, fmt.Errorf("thread %q: run %s is active: %w", threadID, a.Record().RunID, ErrBusy)
		}
		return func() {}, nil
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
