package runs

import (
	"sort"
	"time"
)

// This file holds the scheduling of runs created with a start time
// (Record.StartAt, a request's after_seconds). As on LangGraph's Agent
// Server, such a run exists at once, pending, and counts as an active run
// of its thread for the multitask strategies; it starts no earlier than its
// start time, and then only once its thread is free. The runs of a thread
// start in the order of their start times (a run's creation time when it has
// none), so a run created later without a delay may start before it.

// startKey is when a run may start, for the order of a thread's queue.
func (rec Record) startKey() time.Time {
	if !rec.StartAt.IsZero() {
		return rec.StartAt
	}
	return rec.CreatedAt
}

// due reports whether the run's start time, if any, has come.
func (a *Active) due(now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.rec.StartAt.After(now)
}

// enqueue inserts a run into the thread's queue after the runs that start
// no later than it.
func (s *slot) enqueue(a *Active) {
	key := a.Record().startKey()
	i := sort.Search(len(s.queue), func(i int) bool { return s.queue[i].Record().startKey().After(key) })
	s.queue = append(s.queue, nil)
	copy(s.queue[i+1:], s.queue[i:])
	s.queue[i] = a
}

// nextLocked makes the first queued run of an idle, unheld thread its
// active run and returns it, when its start time has come; otherwise it
// sets the thread's timer for that time (a nil result). The caller starts
// the run it returns (m.start) once it has released m.mu.
func (m *Manager) nextLocked(threadID string, s *slot) *Active {
	if s.active != nil || s.held || len(s.queue) == 0 || m.closing {
		return nil
	}
	head := s.queue[0]
	now := m.opts.Now()
	if !head.due(now) {
		wait := head.Record().StartAt.Sub(now)
		if s.timer != nil {
			s.timer.Stop()
		}
		s.timer = time.AfterFunc(wait, func() { m.startDue(threadID) })
		return nil
	}
	s.queue = s.queue[1:]
	s.active = head
	return head
}

// startDue starts the first queued run of an idle thread whose start time
// has come (the thread's timer calls it).
func (m *Manager) startDue(threadID string) {
	m.mu.Lock()
	s := m.threads[threadID]
	if s == nil {
		m.mu.Unlock()
		return
	}
	next := m.nextLocked(threadID, s)
	m.mu.Unlock()
	if next != nil {
		m.start(next)
	}
}

// forgetIdleLocked forgets a thread that has no run, queued run or hold
// left. m.mu must be held.
func (m *Manager) forgetIdleLocked(threadID string, s *slot) {
	if s.active != nil || s.held || len(s.queue) > 0 {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if m.threads[threadID] == s {
		delete(m.threads, threadID)
	}
}

// dequeueLocked takes a queued run (one that has not started) out of its
// thread's queue, forgetting the thread if nothing is left on it; it reports
// whether the run was queued. m.mu must be held.
func (m *Manager) dequeueLocked(threadID string, a *Active) bool {
	s := m.threads[threadID]
	if s == nil {
		return false
	}
	for i, q := range s.queue {
		if q == a {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			m.forgetIdleLocked(threadID, s)
			return true
		}
	}
	return false
}
