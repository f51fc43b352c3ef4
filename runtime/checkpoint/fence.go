package checkpoint

import (
	"context"
	"errors"
)

// ErrFenced is returned by a write made for a run that the writing process
// no longer holds: it was paused (a long GC pause, SIGSTOP, a network
// partition) past the run's lease and another process took the run over.
// The write is refused in its own transaction, so the thread's history
// stays the one of the process holding the run.
var ErrFenced = errors.New("checkpoint: the run is held by another process")

// Fence identifies the claim on a run under which writes are made: the
// process (Owner) that claimed the run and which of the run's claims it is
// (Token, greater at every takeover). Backends shared by several processes
// (storage/postgres) check it inside every write transaction of a context
// that carries one (see WithFence) and fail the write with ErrFenced when
// the run's claim has moved on; backends of one process ignore it.
type Fence struct {
	RunID string
	Owner string
	Token int64
}

type fenceKey struct{}

// WithFence returns a context whose checkpoint and store writes are made
// under f.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceOf returns the fence ctx carries, if any.
func FenceOf(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}
