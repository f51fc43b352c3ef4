package pgqueue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// fenceCode is the SQLSTATE graphctl_fence raises (migration 00007) when
// the claim a write names no longer holds the run.
const fenceCode = "GCF01"

// Fence implements runs.Fencer: the run's context carries the fence of this
// replica's claim on it (the claim's generation, runs.lease_gen), which the
// PostgreSQL checkpointer and store check inside every write transaction
// made with it (see runtime/storage/postgres). A claim by another replica
// increments the generation: once the run has been taken over, a write of
// this replica's execution fails with checkpoint.ErrFenced, even when the
// replica was paused (a long GC pause, SIGSTOP, a network partition) and has
// not yet seen that its lease expired. A claim of a run this replica still
// owns (its lease expired and no other replica took the run) increments the
// generation too: the execution that missed its lease is fenced like any
// other, and the run goes on under the new claim.
//
// It is called once per claim, as the run starts (or, for a run claimed
// again while it still executes here, to compare the two claims); a run not
// claimed here gets ctx back unchanged. Save, Finish, Release and Publish
// check the fence their context carries in the same way.
func (q *Queue) Fence(ctx context.Context, runID string) context.Context {
	gen, ok := q.claims.LoadAndDelete(runID)
	if !ok {
		return ctx
	}
	return checkpoint.WithFence(ctx, checkpoint.Fence{RunID: runID, Owner: q.owner, Token: gen.(int64)})
}

// fenceOf returns the fence ctx carries for run runID, if any.
func fenceOf(ctx context.Context, runID string) (checkpoint.Fence, bool) {
	f, ok := checkpoint.FenceOf(ctx)
	return f, ok && f.RunID == runID
}

// queueFence queues in b, when ctx carries the fence of run runID, the
// check that the claim still holds the run (graphctl_fence), which fails
// the batch's transaction otherwise.
func queueFence(ctx context.Context, b *pgx.Batch, runID string) {
	if f, ok := fenceOf(ctx, runID); ok {
		b.Queue(`SELECT graphctl_fence($1, $2, $3)`, f.RunID, f.Owner, f.Token)
	}
}

// fenceError turns the error graphctl_fence raises into
// checkpoint.ErrFenced.
func fenceError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == fenceCode {
		return fmt.Errorf("%w: %s", checkpoint.ErrFenced, pgErr.Message)
	}
	return err
}
