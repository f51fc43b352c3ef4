package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphctl/graphctl/runtime/store"
)

// ErrActive: the run is running or queued, so it cannot be deleted.
var ErrActive = errors.New("run is active")

// Unfinished lists the runs that are running or queued, in no particular
// order (for cancelling runs by status).
func (m *Manager) Unfinished() []Record {
	if m.shared() {
		recs, err := m.opts.Queue.Unfinished(context.Background())
		if err != nil {
			m.log.Warn("unfinished runs", "error", err)
		}
		return recs
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for _, s := range m.threads {
		if s.active != nil {
			out = append(out, s.active.Record())
		}
		for _, q := range s.queue {
			out = append(out, q.Record())
		}
	}
	return out
}

// Ended reports whether a run known in memory has ended.
func (a *Active) Ended() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// Delete removes a finished run's record. A run that has not started
// (queued, or waiting for its start time) is dropped and its record
// deleted, as LangGraph's Agent Server deletes it; a running one is refused
// with ErrActive; an unknown one is ErrNotFound.
func (m *Manager) Delete(ctx context.Context, threadID, runID string) error {
	if m.shared() {
		m.mu.Lock()
		if a, ok := m.runs[runID]; ok && a.Ended() {
			delete(m.runs, runID)
		}
		m.mu.Unlock()
		return m.opts.Queue.Delete(ctx, threadID, runID)
	}
	m.mu.Lock()
	if a, ok := m.runs[runID]; ok && a.Record().ThreadID == threadID {
		if m.dequeueLocked(threadID, a) {
			m.retireLocked(runID, true)
			m.mu.Unlock()
			m.endQueued(a, Rollback) // a rollback leaves no record
			return nil
		}
		if !a.Ended() {
			m.mu.Unlock()
			return fmt.Errorf("run %s on thread %q: %w; cancel it first", runID, threadID, ErrActive)
		}
		delete(m.runs, runID)
	}
	m.mu.Unlock()
	if m.opts.Store == nil {
		return fmt.Errorf("run %s on thread %q: %w", runID, threadID, ErrNotFound)
	}
	if _, err := m.opts.Store.Get(ctx, recordNS(threadID), runID); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("run %s on thread %q: %w", runID, threadID, ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("delete run %s: %w", runID, err)
	}
	if err := m.opts.Store.Delete(ctx, recordNS(threadID), runID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("delete run %s: %w", runID, err)
	}
	return nil
}
