package runs

import (
	"context"
	"errors"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
)

// Fencer is implemented by a Queue whose claims fence the writes of the
// runs they start (server/runs/pgqueue): Fence returns the run's context
// carrying the fence of this replica's claim on the run (see
// checkpoint.Fence), with which the checkpointer and the store refuse, in
// the write's own transaction, the writes of a replica that lost the run to
// another. It is called once per claim: as the run starts after its claim,
// or, for a claim of a run already executing here, to compare the two.
//
// The Queue's own writes of the run — Save, Finish, Release, Publish —
// check the fence their context carries in the same way: a record, an end
// or frames written under a superseded claim are refused.
type Fencer interface {
	Fence(ctx context.Context, runID string) context.Context
}

// ClaimRenewer is implemented by a Fencer queue whose leases are renewed
// claim by claim rather than run by run: RenewClaims renews the lease of
// each claim (a run and the generation it was claimed under, see
// checkpoint.Fence) that still holds its run, and says what became of every
// other one. A claim another has superseded renews nothing, even when this
// replica holds the run again under a newer claim: the heartbeats of an
// execution that lost its run neither keep the run from the replica that
// took it over nor extend a later claim of it made here. The Manager
// heartbeats with it, rather than with Queue.Heartbeat, when the Queue has
// it.
type ClaimRenewer interface {
	RenewClaims(ctx context.Context, claims []checkpoint.Fence) (map[string]ClaimRenewal, error)
}

// ClaimState is what a heartbeat found of a claim (see ClaimRenewer).
type ClaimState int

const (
	// ClaimLost: the run is no longer held under the claim nor under any
	// newer one (it was released, or deleted).
	ClaimLost ClaimState = iota
	// ClaimHeld: the claim holds the run; its lease was renewed.
	ClaimHeld
	// ClaimEnded: the run was ended under the claim (its end was stored
	// before the heartbeat was answered).
	ClaimEnded
	// ClaimSuperseded: another claim took the run since (a takeover by
	// another replica, or an end as an orphan), whoever holds it now.
	ClaimSuperseded
)

// ClaimRenewal is what a heartbeat answered for one claim.
type ClaimRenewal struct {
	State ClaimState
	// CancelAction is the run's cancel action ("" if none) when the claim
	// holds the run.
	CancelAction string
}

// fence returns the context of run a starting here under its claim's fence,
// when the Queue has fences, and keeps the fence for the run's other writes
// (see claimContext).
func (m *Manager) fence(ctx context.Context, a *Active) context.Context {
	a.mu.Lock()
	m.takeClaimLocked(a)
	c, ok := a.claim, a.claimed
	a.mu.Unlock()
	if !ok {
		return ctx
	}
	return checkpoint.WithFence(ctx, c)
}

// takeClaimLocked records (a.mu held), when the Queue has fences and run a
// has none yet, the fence of the claim under which a executes here, taken
// from the Queue once per claim: from then on its heartbeats renew that
// claim only (see ClaimRenewer) and its writes are made under it.
func (m *Manager) takeClaimLocked(a *Active) {
	f, ok := m.opts.Queue.(Fencer)
	if !ok || a.claimed {
		return
	}
	if c, ok := checkpoint.FenceOf(f.Fence(context.Background(), a.rec.RunID)); ok {
		a.claim, a.claimed = c, true
	}
}

// claimContext returns a context, never cancelled, carrying the fence of
// the claim under which the run executes here (none without one): the
// writes of the run made outside its execution (its record, its end, its
// stream frames) are made with it, so that the Queue refuses them once
// another claim has superseded this one.
func (a *Active) claimContext() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.claimed {
		return context.Background()
	}
	return checkpoint.WithFence(context.Background(), a.claim)
}

// reclaimed handles a new claim of a run that is still executing here. Every
// claim has a newer generation (this replica's lease expired, whether or not
// another replica held the run in between), so this execution's claim is
// superseded and it stops, writing nothing more (its writes would be refused
// anyway). Once it has stopped, the new claim is released, so that the run
// goes on at once from its last checkpoint, here or on another replica,
// rather than when that claim's lease expires.
func (m *Manager) reclaimed(a *Active) {
	f, ok := m.opts.Queue.(Fencer)
	if !ok {
		return
	}
	runID := a.Record().RunID
	claim := f.Fence(context.Background(), runID)
	c, ok := checkpoint.FenceOf(claim)
	a.mu.Lock()
	superseded := ok && a.claimed && c.Token != a.claim.Token
	a.mu.Unlock()
	if !superseded {
		return
	}
	m.claimLost(a, "claim", checkpoint.ErrFenced)
	go func() {
		<-a.done
		if err := m.opts.Queue.Release(claim, []string{runID}); err != nil {
			m.log.Warn("release a run claimed again while its superseded execution stopped; it goes on when the claim's lease expires", "run_id", runID, "error", err)
		}
	}()
}

// saveClaimed stores the record of a run executing here under its claim.
func (m *Manager) saveClaimed(a *Active, rec Record) {
	err := m.opts.Queue.Save(a.claimContext(), rec)
	switch {
	case errors.Is(err, checkpoint.ErrFenced):
		m.claimLost(a, "record", err)
	case err != nil:
		m.log.Error("save run record", "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
	}
}

// claimLost stops a run whose write or lease renewal (what) was refused
// because another replica took the run over: it writes nothing more here.
func (m *Manager) claimLost(a *Active, what string, err error) {
	rec := a.Record()
	m.log.Error("run taken over by another replica while this one was paused past its lease; the run stops here, writing nothing more",
		"refused", what, "run_id", rec.RunID, "thread_id", rec.ThreadID, "error", err)
	a.loseLease()
}

// fencedOut reports whether the run stopped because a write of it was
// refused (checkpoint.ErrFenced): another replica took the run over while
// this one was paused past its lease. The run then ends here as one whose
// lease was lost: it writes nothing more (record, end, frames), and its
// holder's history of the thread is left as it is.
func (m *Manager) fencedOut(a *Active, res *engine.Result, err error) bool {
	if a.lostLease() {
		return true
	}
	if !errors.Is(err, checkpoint.ErrFenced) && (res == nil || !errors.Is(res.Err, checkpoint.ErrFenced)) {
		return false
	}
	m.log.Error("run taken over by another replica while this one was paused past its lease; stopping the run here",
		"run_id", a.Record().RunID, "thread_id", a.Record().ThreadID)
	a.loseLease()
	return true
}

// LeaseLost reports whether the run stopped here because another replica
// took it over (its lease expired, or a write of it was refused): it goes on
// there, and a client joining it again here follows it from the queue.
func (a *Active) LeaseLost() bool { return a.lostLease() }
