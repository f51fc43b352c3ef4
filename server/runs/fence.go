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
// another. It is called once, as the run starts after its claim.
type Fencer interface {
	Fence(ctx context.Context, runID string) context.Context
}

// fence returns the context of a run starting here under its claim's fence,
// when the Queue has fences.
func (m *Manager) fence(ctx context.Context, runID string) context.Context {
	if f, ok := m.opts.Queue.(Fencer); ok {
		return f.Fence(ctx, runID)
	}
	return ctx
}

// fencedOut reports whether the run stopped because a write of it was
// refused (checkpoint.ErrFenced): another replica took the run over while
// this one was paused past its lease. The run then ends here as one whose
// lease was lost: it writes nothing more (record, end, frames), and its
// holder's history of the thread is left as it is.
func (m *Manager) fencedOut(a *Active, res *engine.Result, err error) bool {
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
