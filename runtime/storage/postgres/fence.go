package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Writes made for a run (a context carrying a checkpoint.Fence, which
// server/runs/pgqueue attaches to the runs it claims) begin with
// graphctl_fence (migration 00007), in the same transaction: a replica that
// lost the run (paused past its lease while another took it over) cannot
// write its checkpoints, pending writes or store items any more, and the
// thread's history stays the holder's.

// fenceCode is the SQLSTATE graphctl_fence raises.
const fenceCode = "GCF01"

// queueFence queues the check of ctx's fence, if it carries one, in b.
func queueFence(ctx context.Context, b *pgx.Batch) {
	if f, ok := checkpoint.FenceOf(ctx); ok {
		b.Queue(`SELECT graphctl_fence($1, $2, $3)`, f.RunID, f.Owner, f.Token)
	}
}

// fenceError turns graphctl_fence's error into checkpoint.ErrFenced.
func fenceError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == fenceCode {
		return fmt.Errorf("%w: %s", checkpoint.ErrFenced, pgErr.Message)
	}
	return err
}

// execFenced runs one write statement, after the check of ctx's fence in
// the same (implicit) transaction when it carries one.
func (d *DB) execFenced(ctx context.Context, sql string, args ...any) error {
	if _, ok := checkpoint.FenceOf(ctx); !ok {
		_, err := d.pool.Exec(ctx, sql, args...)
		return err
	}
	b := &pgx.Batch{}
	queueFence(ctx, b)
	b.Queue(sql, args...)
	return fenceError(d.pool.SendBatch(ctx, b).Close())
}
