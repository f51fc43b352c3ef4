package runs

import (
	"context"
	"time"
)

// unsavedRecords holds run records whose write to the Store failed (a full
// disk, a database that went away) until a retry stores them. A run that
// ended while its record could not be written is then not left "running"
// on record, where the next start would take it up again. Reads of run
// records see these newer versions first.
type unsavedRecords struct {
	records  map[string]Record // by run id
	retrying bool
}

// retryDelays are the pauses between attempts to store unsaved records; the
// last repeats until the writes succeed or the manager shuts down.
var retryDelays = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}

// keepUnsaved remembers rec for a later write and makes sure a retry loop
// runs. Called with m.unsavedMu held.
func (m *Manager) keepUnsavedLocked(rec Record) {
	if m.unsaved.records == nil {
		m.unsaved.records = map[string]Record{}
	}
	m.unsaved.records[rec.RunID] = rec
	if !m.unsaved.retrying {
		m.unsaved.retrying = true
		go m.retryUnsaved()
	}
}

// retryUnsaved writes the unsaved records until none is left or the
// manager shuts down. Each write holds m.unsavedMu, so a newer version of a
// record is never overwritten by an older one.
func (m *Manager) retryUnsaved() {
	for attempt := 0; ; attempt++ {
		delay := retryDelays[min(attempt, len(retryDelays)-1)]
		select {
		case <-m.ctx.Done():
			m.unsavedMu.Lock()
			m.unsaved.retrying = false
			m.unsavedMu.Unlock()
			return
		case <-time.After(delay):
		}
		m.unsavedMu.Lock()
		for id, rec := range m.unsaved.records {
			if err := m.write(context.Background(), rec); err != nil {
				m.log.Warn("run record still not saved", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
				break
			}
			delete(m.unsaved.records, id)
			m.log.Info("run record saved after an earlier failure", "run_id", rec.RunID, "thread_id", rec.ThreadID, "status", rec.Status)
		}
		if len(m.unsaved.records) == 0 {
			m.unsaved.retrying = false
			m.unsavedMu.Unlock()
			return
		}
		m.unsavedMu.Unlock()
	}
}

// unsavedVersion returns the newest version of a run record that is not yet
// in the Store.
func (m *Manager) unsavedVersion(runID string) (Record, bool) {
	m.unsavedMu.Lock()
	defer m.unsavedMu.Unlock()
	rec, ok := m.unsaved.records[runID]
	return rec, ok
}

// unsavedOfThread returns the unsaved records of a thread.
func (m *Manager) unsavedOfThread(threadID string) map[string]Record {
	m.unsavedMu.Lock()
	defer m.unsavedMu.Unlock()
	var out map[string]Record
	for id, rec := range m.unsaved.records {
		if rec.ThreadID == threadID {
			if out == nil {
				out = map[string]Record{}
			}
			out[id] = rec
		}
	}
	return out
}

// flushUnsaved makes a last attempt to store the unsaved records, at
// shutdown; what still fails is logged, and stays "running" on record for
// the next start to settle.
func (m *Manager) flushUnsaved() {
	m.unsavedMu.Lock()
	defer m.unsavedMu.Unlock()
	for id, rec := range m.unsaved.records {
		if err := m.write(context.Background(), rec); err != nil {
			m.log.Error("run record lost at shutdown", "run_id", rec.RunID, "thread_id", rec.ThreadID, "status", rec.Status, "error", err)
			continue
		}
		delete(m.unsaved.records, id)
	}
}
