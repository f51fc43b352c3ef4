package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Rollback implements checkpoint.Checkpointer in one transaction under the
// thread's row lock: a crash or a lost connection leaves the thread either
// as it was or rolled back.
func (c *Checkpointer) Rollback(ctx context.Context, threadID, checkpointID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := c.d.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE`, threadID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, data FROM checkpoints WHERE thread_id = $1`, threadID)
		if err != nil {
			return err
		}
		var start *checkpoint.Checkpoint
		var kept, dropped []checkpoint.Checkpoint
		for rows.Next() {
			var id string
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				rows.Close()
				return err
			}
			var cp checkpoint.Checkpoint
			if err := checkpoint.DecodeRecord(threadID, id, data, &cp); err != nil {
				rows.Close()
				return fmt.Errorf("decode checkpoint %s: %w", id, err)
			}
			switch {
			case id == checkpointID:
				start = &cp
				kept = append(kept, cp)
			case id < checkpointID:
				kept = append(kept, cp)
			default:
				dropped = append(dropped, cp)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if start == nil {
			return checkpoint.ErrNotFound
		}
		needed := map[string]map[int64]bool{}
		for _, cp := range kept {
			for f, v := range cp.Versions {
				if needed[f] == nil {
					needed[f] = map[int64]bool{}
				}
				needed[f][v] = true
			}
		}
		var ids, fields []string
		var versions []int64
		for _, cp := range dropped {
			ids = append(ids, cp.ID)
			for f, v := range cp.Versions {
				if !needed[f][v] {
					fields, versions = append(fields, f), append(versions, v)
				}
			}
		}
		drop, err := droppedWrites(ctx, tx, threadID, *start)
		if err != nil {
			return err
		}
		batch := &pgx.Batch{}
		batch.Queue(`DELETE FROM blobs b USING unnest($2::text[], $3::bigint[]) AS k(field, version)
WHERE b.thread_id = $1 AND b.field = k.field AND b.version = k.version`, threadID, fields, versions)
		batch.Queue(`DELETE FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = ANY($2::text[])`, threadID, ids)
		batch.Queue(`DELETE FROM checkpoints WHERE thread_id = $1 AND id = ANY($2::text[])`, threadID, ids)
		batch.Queue(`DELETE FROM snapshots WHERE thread_id = $1`, threadID)
		batch.Queue(`DELETE FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = $2 AND task_id = ANY($3::text[])`, threadID, start.ID, drop)
		batch.Queue(`
INSERT INTO threads (thread_id, graph_name, latest, step, updated_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (thread_id) DO UPDATE SET graph_name = EXCLUDED.graph_name, latest = EXCLUDED.latest,
	step = EXCLUDED.step, updated_at = EXCLUDED.updated_at`, threadID, start.GraphName, start.ID, start.Step, c.d.now().UTC())
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("rollback %s to %s: %w", threadID, checkpointID, err)
	}
	return nil
}

// droppedWrites returns the task ids of the pending writes against cp that a
// rollback to it discards.
func droppedWrites(ctx context.Context, tx pgx.Tx, threadID string, cp checkpoint.Checkpoint) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT task_id, data FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = $2`, threadID, cp.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var task string
		var data []byte
		if err := rows.Scan(&task, &data); err != nil {
			return nil, err
		}
		var w checkpoint.PendingWrite
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, fmt.Errorf("decode pending write %s: %w", task, err)
		}
		if !checkpoint.RollbackKeepsWrite(cp, w) {
			out = append(out, task)
		}
	}
	return out, rows.Err()
}
