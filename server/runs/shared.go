package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// How a run known in memory is handled by a manager with a Queue.
const (
	modeUndecided = iota // submitted here, not yet claimed by any replica seen
	modeLocal            // executed by this replica
	modeFollowing        // executed elsewhere: its frames are read from the queue
	modeEnded            // followed to its end
)

// shared reports whether the manager shares its runs through a Queue.
func (m *Manager) shared() bool { return m.opts.Queue != nil }

// startShared starts the loops of a manager with a Queue: notices, claims,
// heartbeats and prunes.
func (m *Manager) startShared() {
	ctx, cancel := context.WithCancel(context.Background())
	m.loopStop = cancel
	m.kick = make(chan struct{}, 1)
	m.claiming = make(chan struct{})
	m.loops.Add(4)
	go m.dispatchNotices(ctx)
	go m.claimLoop(ctx)
	go m.heartbeatLoop(ctx)
	go m.pruneLoop(ctx)
}

// startClaiming lets the claim loop run: Recover calls it once it has dealt
// with orphaned runs (--on-restart fail ends them before any replica claims
// them again); a submit calls it too, for embedders that never call Recover.
func (m *Manager) startClaiming() {
	m.claimOnce.Do(func() { close(m.claiming) })
	m.wake()
}

// wake asks the claim loop to look for startable runs.
func (m *Manager) wake() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *Manager) dispatchNotices(ctx context.Context) {
	defer m.loops.Done()
	for {
		var n Notice
		var ok bool
		select {
		case n, ok = <-m.opts.Queue.Notices():
			if !ok {
				return
			}
		case <-ctx.Done():
			return
		}
		switch n.Kind {
		case NoticeWake:
			m.wake()
			m.pokeFollowers()
		case NoticeCancel:
			if a, ok := m.Get(n.RunID); ok {
				if a.isLocal() {
					a.cancelWith(n.Action)
				} else {
					a.poke()
				}
			}
		case NoticeFrames:
			m.mu.Lock()
			a := m.runs[n.RunID]
			m.mu.Unlock()
			if a != nil {
				a.poke()
			}
		}
	}
}

// pokeFollowers makes every follower look at its run again (after a
// wake-up a followed run may have ended or been queued elsewhere).
func (m *Manager) pokeFollowers() {
	m.mu.Lock()
	var fs []*Active
	for _, a := range m.runs {
		fs = append(fs, a)
	}
	m.mu.Unlock()
	for _, a := range fs {
		a.poke()
	}
}

// claimLoop claims startable runs when woken and at each poll interval (a
// lease that expires wakes nobody).
func (m *Manager) claimLoop(ctx context.Context) {
	defer m.loops.Done()
	select {
	case <-m.claiming:
	case <-ctx.Done():
		return
	}
	tick := time.NewTicker(m.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-m.kick:
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		for {
			m.mu.Lock()
			closing := m.closing
			m.mu.Unlock()
			if closing || ctx.Err() != nil {
				break
			}
			rec, resumed, err := m.opts.Queue.Claim(ctx, "")
			if err != nil {
				if ctx.Err() == nil {
					m.log.Warn("claim a run", "error", err)
				}
				break
			}
			if rec == nil {
				break
			}
			m.startClaimed(ctx, *rec, resumed)
		}
	}
}

// heartbeatLoop renews the leases of the runs executing here, stops those
// that are no longer held and those cancelled elsewhere.
func (m *Manager) heartbeatLoop(ctx context.Context) {
	defer m.loops.Done()
	tick := time.NewTicker(m.opts.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		if local := m.localRuns(); len(local) > 0 {
			m.renewLeases(ctx, local)
		}
	}
}

// pruneLoop deletes, with a Queue that has PruneFrames, the stream frames
// of runs that ended over an hour ago and the expired thread holds, as the
// manager starts and then every minute. It runs beside the heartbeats: a
// prune that takes long never holds up the renewal of a lease, which would
// let another replica take over a run still executing here.
func (m *Manager) pruneLoop(ctx context.Context) {
	defer m.loops.Done()
	p, ok := m.opts.Queue.(interface {
		PruneFrames(context.Context, time.Duration) error
	})
	if !ok {
		return
	}
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		if err := p.PruneFrames(ctx, time.Hour); err != nil && ctx.Err() == nil {
			m.log.Warn("prune run frames", "error", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// renewLeases renews the leases of the runs executing here (local), but for
// those already stopping for a lost lease, and stops those no longer held:
// a run whose claim another has superseded stops as one whose write was
// refused (see claimLost), one that lost its lease otherwise (released,
// deleted) stops too; a run cancelled elsewhere is cancelled. A run whose
// end was stored meanwhile, under its claim, is not stopped: it has ended.
// With a ClaimRenewer Queue, each run renews the claim it executes under,
// never a newer one.
func (m *Manager) renewLeases(ctx context.Context, local map[string]*Active) {
	states := map[string]ClaimRenewal{}
	var claims []checkpoint.Fence
	var ids []string
	renewer, byClaim := m.opts.Queue.(ClaimRenewer)
	for id, a := range local {
		a.mu.Lock()
		c, claimed, lost := a.claim, a.claimed, a.leaseLost
		a.mu.Unlock()
		switch {
		case lost:
			// Stopping: it holds nothing any more.
			delete(local, id)
		case byClaim && claimed:
			claims = append(claims, c)
		default:
			ids = append(ids, id)
		}
	}
	if len(claims) > 0 {
		got, err := renewer.RenewClaims(ctx, claims)
		if err != nil {
			m.log.Warn("renew run leases", "error", err)
			return
		}
		for _, c := range claims {
			states[c.RunID] = got[c.RunID] // a claim missing from the answer is lost
		}
	}
	if len(ids) > 0 {
		held, err := m.opts.Queue.Heartbeat(ctx, ids)
		if err != nil {
			m.log.Warn("renew run leases", "error", err)
			return
		}
		for _, id := range ids {
			if action, ok := held[id]; ok {
				states[id] = ClaimRenewal{State: ClaimHeld, CancelAction: action}
			} else {
				states[id] = ClaimRenewal{State: ClaimLost}
			}
		}
	}
	for id, a := range local {
		switch r := states[id]; {
		case r.State == ClaimSuperseded && !a.Ended():
			m.claimLost(a, "lease renewal", checkpoint.ErrFenced)
		case r.State == ClaimLost && !a.Ended() && !a.endForgotten():
			m.log.Error("run lease lost; stopping the run here", "run_id", id)
			a.loseLease()
		case r.State == ClaimHeld && r.CancelAction != "":
			a.cancelWith(r.CancelAction)
		}
	}
}

// endForgotten reports whether the run's end deleted its record here (a
// rolled-back or stateless run): a heartbeat that no longer finds the run
// then raced its end, which it waits for, rather than a loss of its lease.
func (a *Active) endForgotten() bool {
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	return a.forgotten
}

// localRuns returns the unfinished runs executing here.
func (m *Manager) localRuns() map[string]*Active {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]*Active{}
	for id, a := range m.runs {
		if a.isLocal() && !a.Ended() {
			out[id] = a
		}
	}
	return out
}

func (a *Active) isLocal() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mode == modeLocal
}

// poke wakes the run's follower.
func (a *Active) poke() {
	if a.wakeup == nil {
		return
	}
	select {
	case a.wakeup <- struct{}{}:
	default:
	}
}

// loseLease stops a run whose lease is gone, writing nothing more.
func (a *Active) loseLease() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.leaseLost = true
	if a.cancel != nil {
		a.cancel(ErrLeaseLost)
	}
}

func (m *Manager) newActive(rec Record, at Attach) *Active {
	return &Active{Buf: NewBuffer(), rec: rec, done: make(chan struct{}), attach: at, wakeup: make(chan struct{}, 1), pubMoved: make(chan struct{})}
}

// submitShared queues a run in the database and starts it here when its
// thread is free; otherwise it follows it (another replica starts it).
func (m *Manager) submitShared(ctx context.Context, rec Record, at Attach) (*Active, error) {
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return nil, ErrClosed
	}
	if err := m.opts.Queue.Submit(ctx, rec); err != nil {
		return nil, err
	}
	m.startClaiming()
	a := m.newActive(rec, at)
	m.mu.Lock()
	if prev, ok := m.runs[rec.RunID]; ok {
		a = prev // the claim loop got to it first
	} else {
		m.runs[rec.RunID] = a
	}
	m.mu.Unlock()
	if wait := rec.StartAt.Sub(m.opts.Now()); wait > 0 {
		// Every replica's claim loop polls for it; this one also looks at
		// its start time.
		time.AfterFunc(wait, m.wake)
	}
	claimed, resumed, err := m.opts.Queue.Claim(context.WithoutCancel(ctx), rec.RunID)
	if err != nil {
		m.log.Warn("claim a submitted run; another replica will start it", "run_id", rec.RunID, "error", err)
	}
	if claimed != nil {
		m.startClaimed(context.WithoutCancel(ctx), *claimed, resumed)
	} else {
		m.follow(a)
	}
	return a, nil
}

// startClaimed executes a run this replica has claimed.
func (m *Manager) startClaimed(ctx context.Context, rec Record, resumed bool) {
	if resumed && rec.CancelAction != "" {
		// Cancelled before its replica died: it stays cancelled.
		m.endCancelledShared(ctx, rec)
		return
	}
	// A run whose start was not recorded never executed (its replica died
	// between the claim and the start): it starts afresh with its input.
	recovering := resumed && rec.StartKnown && m.began(ctx, rec)
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		if err := m.opts.Queue.Release(context.WithoutCancel(ctx), []string{rec.RunID}); err != nil {
			m.log.Warn("release a run claimed during shutdown", "run_id", rec.RunID, "error", err)
		}
		return
	}
	a, ok := m.runs[rec.RunID]
	if !ok {
		a = m.newActive(rec, Attach{})
		m.runs[rec.RunID] = a
	}
	m.wg.Add(1)
	m.mu.Unlock()

	a.mu.Lock()
	if a.mode == modeLocal {
		// Still executing here: claimed again after its lease expired.
		a.mu.Unlock()
		m.wg.Done()
		m.reclaimed(a)
		return
	}
	a.mode = modeLocal
	// Its claim is taken now, not when it starts: the heartbeats renew the
	// claim from the moment the run is executing here.
	m.takeClaimLocked(a)
	a.recovering = recovering
	a.rec.Status = rec.Status
	a.rec.CancelAction = rec.CancelAction
	a.rec.StartCheckpoint = rec.StartCheckpoint
	if rec.CancelAction != "" && a.action == "" {
		a.action = rec.CancelAction
	}
	a.mu.Unlock()
	// The frames of an earlier attempt (on a replica that died) come first,
	// so that sequence numbers go on.
	if resumed {
		if prev, err := m.opts.Queue.Frames(ctx, rec.RunID, a.Buf.Len()); err == nil {
			for _, e := range prev {
				a.Buf.Append(e.Mode, e.Frame.Event, e.Frame.Data)
			}
		} else {
			m.log.Warn("read the frames of a resumed run", "run_id", rec.RunID, "error", err)
		}
		m.log.Warn("run resumed from an expired lease (its replica died or shut down)", "run_id", rec.RunID, "thread_id", rec.ThreadID, "recovering", recovering)
	}
	m.pubs.Add(1)
	go m.publish(a, a.Buf.Len())
	m.start(a)
}

// endCancelledShared ends a claimed run whose cancel was accepted before its
// replica died.
func (m *Manager) endCancelledShared(ctx context.Context, r Record) {
	// Its end is written under its claim, as a run's end is.
	if f, ok := m.opts.Queue.(Fencer); ok {
		ctx = f.Fence(ctx, r.RunID)
	}
	forget := false
	if r.CancelAction == Rollback {
		var err error
		if r.StartKnown && m.began(ctx, r) {
			err = RollbackThread(ctx, m.opts.Checkpointer, r.ThreadID, r.StartCheckpoint)
		} // else its thread is as it was: nothing to roll back
		if err != nil {
			r.Error = fmt.Sprintf("rollback not done; the thread keeps this run's checkpoints: %v", err)
		} else {
			forget = true
		}
	}
	r.Status = StatusInterrupted
	r.UpdatedAt = m.opts.Now().UTC()
	switch err := m.opts.Queue.Finish(ctx, r, forget); {
	case errors.Is(err, checkpoint.ErrFenced):
		m.log.Error("a cancelled run was taken over by another replica before this one ended it; its end is left to that replica", "run_id", r.RunID, "error", err)
	case err != nil:
		m.log.Error("end a cancelled run", "run_id", r.RunID, "error", err)
	}
}

// publish stores the run's frames in the queue as they come (one round trip
// per batch of frames), from sequence number after, until the buffer
// closes. The end frame of a run cut by a shutdown or a lost lease is not
// stored: the run goes on elsewhere.
func (m *Manager) publish(a *Active, after int) {
	defer m.pubs.Done()
	defer a.setPublished(-1)
	a.setPublished(after)
	for {
		entries, closed, wake := a.Buf.Since(after)
		if len(entries) > 0 {
			out := entries
			if last := entries[len(entries)-1]; last.Frame.Event == "end" {
				if r := a.Record(); !Final(r.Status) || a.lostLease() {
					out = entries[:len(entries)-1]
				}
			}
			var err error
			for try := 0; try < 3; try++ {
				// Under the run's claim: the frames of an execution whose
				// claim another replica superseded are dropped.
				if err = m.opts.Queue.Publish(a.claimContext(), a.Record().RunID, out); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				m.log.Error("publish run frames; clients on other replicas miss them", "run_id", a.Record().RunID, "error", err)
			}
			after = entries[len(entries)-1].Seq
			a.setPublished(after)
			continue
		}
		if closed {
			return
		}
		<-wake
	}
}

// setPublished records how far the publisher got (-1: it stopped).
func (a *Active) setPublished(seq int) {
	a.pubMu.Lock()
	defer a.pubMu.Unlock()
	a.published = seq
	close(a.pubMoved)
	a.pubMoved = make(chan struct{})
}

// awaitPublished waits until the frames up to seq are stored (or the
// publisher stopped), so that a run's record never turns final before the
// frames it emitted are readable on other replicas.
func (a *Active) awaitPublished(seq int) {
	for {
		a.pubMu.Lock()
		p, moved := a.published, a.pubMoved
		a.pubMu.Unlock()
		if p < 0 || p >= seq {
			return
		}
		<-moved
	}
}

func (a *Active) lostLease() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.leaseLost
}

// follow reads the frames of a run executing on another replica into its
// buffer until it ends.
func (m *Manager) follow(a *Active) {
	a.mu.Lock()
	if a.mode != modeUndecided {
		a.mu.Unlock()
		return
	}
	a.mode = modeFollowing
	a.mu.Unlock()
	m.loops.Add(1)
	go m.followLoop(a)
}

func (m *Manager) followLoop(a *Active) {
	defer m.loops.Done()
	runID := a.Record().RunID
	tick := time.NewTicker(m.opts.Poll)
	defer tick.Stop()
	ctx := context.Background()
	for {
		entries, err := m.opts.Queue.Frames(ctx, runID, a.Buf.Len())
		if err != nil {
			m.log.Warn("follow a run", "run_id", runID, "error", err)
		}
		ended := false
		// The final record is in place before a reader sees the end frame
		// (a stream shows a run still running at its end as cut).
		var final *Record
		if slices.ContainsFunc(entries, func(e Entry) bool { return e.Frame.Event == "end" }) {
			rec, err := m.opts.Queue.Load(ctx, "", runID)
			if errors.Is(err, ErrNotFound) {
				rec, err = a.Record(), nil // rolled back: no record left
				rec.Status = StatusInterrupted
			}
			if err == nil {
				final = &rec
			}
		}
		a.mu.Lock()
		if a.mode != modeFollowing {
			a.mu.Unlock()
			return // claimed here meanwhile
		}
		if final != nil {
			a.rec = *final
		}
		for _, e := range entries {
			if e.Seq != a.Buf.Len()+1 {
				break
			}
			a.Buf.Append(e.Mode, e.Frame.Event, e.Frame.Data)
			if e.Frame.Event == "end" {
				ended = true
			}
		}
		a.mu.Unlock()
		if !ended && len(entries) == 0 {
			rec, err := m.opts.Queue.Load(ctx, "", runID)
			switch {
			case errors.Is(err, ErrNotFound):
				ended = true // deleted: rolled back
			case err == nil && Final(rec.Status):
				// A run's frames are stored before its record turns final
				// (only the end frame comes after): one more read gets them
				// all; a run that never started has none.
				rest, err := m.opts.Queue.Frames(ctx, runID, a.Buf.Len())
				if err == nil && len(rest) == 0 {
					ended = true
				}
			}
		}
		if ended {
			m.endFollowed(a)
			return
		}
		select {
		case <-a.wakeup:
		case <-tick.C:
		case <-m.followStop:
			a.mu.Lock()
			following := a.mode == modeFollowing
			if following {
				a.mode = modeEnded
			}
			a.mu.Unlock()
			if following {
				a.Buf.Append("", "error", mustJSON(map[string]any{"error": "ServerShutdown",
					"message": "this replica shut down while following the run, which goes on elsewhere; join it on another replica"}))
				a.Buf.Close()
				close(a.done)
			}
			return
		}
	}
}

// endFollowed closes a followed run with its final record.
func (m *Manager) endFollowed(a *Active) {
	runID := a.Record().RunID
	rec, err := m.opts.Queue.Load(context.Background(), "", runID)
	a.mu.Lock()
	if err == nil {
		a.rec = rec
	} else if errors.Is(err, ErrNotFound) {
		a.rec.Status = StatusInterrupted
	}
	if a.mode != modeFollowing {
		a.mu.Unlock()
		return
	}
	a.mode = modeEnded
	a.mu.Unlock()
	if n := a.Buf.Len(); n == 0 || !a.lastIsEnd() {
		a.Buf.Append("", "end", nil)
	}
	a.Buf.Close()
	close(a.done)
	m.mu.Lock()
	m.retireLocked(runID, false)
	m.mu.Unlock()
}

func (a *Active) lastIsEnd() bool {
	entries, _, _ := a.Buf.Since(a.Buf.Len() - 1)
	return len(entries) == 1 && entries[0].Frame.Event == "end"
}

// getShared returns a run known here, or follows one the database knows.
func (m *Manager) getShared(runID string) (*Active, bool) {
	m.mu.Lock()
	a, ok := m.runs[runID]
	m.mu.Unlock()
	if ok {
		return a, true
	}
	rec, err := m.opts.Queue.Load(context.Background(), "", runID)
	if err != nil {
		return nil, false
	}
	a = m.newActive(rec, Attach{})
	m.mu.Lock()
	if prev, ok := m.runs[runID]; ok {
		m.mu.Unlock()
		return prev, true
	}
	m.runs[runID] = a
	m.mu.Unlock()
	m.follow(a)
	return a, true
}

// cancelShared cancels a run wherever it runs.
func (m *Manager) cancelShared(ctx context.Context, threadID, runID, action string) (*Active, error) {
	if _, _, err := m.opts.Queue.Cancel(ctx, threadID, runID, action); err != nil {
		return nil, err
	}
	a, ok := m.getShared(runID)
	if !ok {
		return nil, fmt.Errorf("run %s on thread %q: %w", runID, threadID, ErrNotFound)
	}
	if a.isLocal() {
		a.cancelWith(action)
	} else {
		a.poke()
	}
	return a, nil
}

// finishShared stores the end of a run executed here.
func (m *Manager) finishShared(a *Active, rec Record, cut, forget bool) {
	// Under the run's claim: a superseded one neither releases nor ends the
	// run, which another replica holds now.
	ctx := a.claimContext()
	switch {
	case a.lostLease():
		// Another replica holds the run now.
	case cut:
		// Its frames are stored before another replica may take it over
		// and go on from the last of them.
		a.awaitPublished(a.Buf.Len())
		if err := m.opts.Queue.Release(ctx, []string{rec.RunID}); err != nil {
			m.log.Error("release a run cut by the shutdown", "run_id", rec.RunID, "error", err)
		}
	default:
		a.awaitPublished(a.Buf.Len())
		a.saveMu.Lock()
		a.forgotten = forget
		err := m.opts.Queue.Finish(ctx, rec, forget)
		a.saveMu.Unlock()
		switch {
		case errors.Is(err, checkpoint.ErrFenced):
			// Its end frame is not stored either: the run is the holder's.
			m.claimLost(a, "end", err)
		case err != nil:
			m.log.Error("store the end of a run", "run_id", rec.RunID, "error", err)
		}
	}
}

// shutdownShared stops the loops and the followers.
func (m *Manager) shutdownShared() {
	m.pubs.Wait()
	close(m.followStop)
	m.loopStop()
	m.loops.Wait()
}
