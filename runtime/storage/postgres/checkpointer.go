package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Checkpointer is the PostgreSQL checkpoint.Checkpointer; get one from
// (*DB).Checkpointer.
type Checkpointer struct{ d *DB }

var (
	_ checkpoint.Checkpointer = (*Checkpointer)(nil)
	_ checkpoint.HeadReader   = (*Checkpointer)(nil)
)

const upsertThread = `
INSERT INTO threads (thread_id, graph_name, latest, step, updated_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (thread_id) DO UPDATE SET graph_name = EXCLUDED.graph_name, latest = EXCLUDED.latest,
	step = EXCLUDED.step, updated_at = EXCLUDED.updated_at
WHERE threads.latest <= EXCLUDED.latest`

const insertBlob = `
INSERT INTO blobs (thread_id, field, version, base, data) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (thread_id, field, version) DO UPDATE SET base = EXCLUDED.base, data = EXCLUDED.data`

// putBlob writes a blob of a new checkpoint; overwriting a version drops
// the field's snapshot if it may have been built on the old blob.
const putBlob = `
WITH stale AS (DELETE FROM snapshots WHERE thread_id = $1 AND field = $2 AND version >= $3)
INSERT INTO blobs (thread_id, field, version, base, data) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (thread_id, field, version) DO UPDATE SET base = EXCLUDED.base, data = EXCLUDED.data`

const insertCheckpoint = `
INSERT INTO checkpoints (thread_id, id, data) VALUES ($1, $2, $3)
ON CONFLICT (thread_id, id) DO UPDATE SET data = EXCLUDED.data`

// Put implements checkpoint.Checkpointer in one transaction and one batch.
func (c *Checkpointer) Put(ctx context.Context, cp checkpoint.Checkpoint, blobs []checkpoint.Blob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := checkpoint.PreparePut(cp, blobs, c.d.now)
	if err != nil {
		return err
	}
	cp, data := p.Checkpoint, p.Data
	fields := make([]string, len(p.Required))
	versions := make([]int64, len(p.Required))
	for i, r := range p.Required {
		fields[i], versions[i] = r.Field, r.Version
	}
	// One batch, one round trip: sent outside an explicit transaction, the
	// statements run in one implicit transaction, and graphctl_require_blobs
	// failing rolls back everything before it.
	batch := &pgx.Batch{}
	batch.Queue(upsertThread, cp.ThreadID, cp.GraphName, cp.ID, cp.Step, cp.CreatedAt)
	batch.Queue(`SELECT graphctl_require_blobs($1, $2, $3)`, cp.ThreadID, fields, versions)
	for _, b := range blobs {
		batch.Queue(putBlob, cp.ThreadID, b.Field, b.Version, b.Base, []byte(b.Data))
	}
	batch.Queue(insertCheckpoint, cp.ThreadID, cp.ID, data)
	if cp.ParentID != "" {
		batch.Queue(`DELETE FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = $2`, cp.ThreadID, cp.ParentID)
	}
	err = c.d.pool.SendBatch(ctx, batch).Close()
	if err != nil {
		return fmt.Errorf("put %s/%s: %w", cp.ThreadID, cp.ID, err)
	}
	return nil
}

// PutWrites implements checkpoint.Checkpointer.
func (c *Checkpointer) PutWrites(ctx context.Context, threadID, checkpointID string, w checkpoint.PendingWrite) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.TaskID == "" {
		return fmt.Errorf("put writes %s/%s: empty task id", threadID, checkpointID)
	}
	data, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("put writes of task %s at %s/%s: encode: %w", w.TaskID, threadID, checkpointID, err)
	}
	tag, err := c.d.pool.Exec(ctx, `
INSERT INTO pending_writes (thread_id, checkpoint_id, task_id, data)
SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1 AND id = $2)
ON CONFLICT (thread_id, checkpoint_id, task_id) DO UPDATE SET data = EXCLUDED.data`, threadID, checkpointID, w.TaskID, data)
	if err == nil && tag.RowsAffected() == 0 {
		err = checkpoint.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("put writes of task %s at checkpoint %s/%s: %w", w.TaskID, threadID, checkpointID, err)
	}
	return nil
}

// Latest implements checkpoint.Checkpointer.
func (c *Checkpointer) Latest(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	snap, err := c.newest(ctx, threadID, true)
	if err != nil {
		return nil, fmt.Errorf("latest checkpoint of thread %s: %w", threadID, err)
	}
	if len(snap.long) > 0 {
		c.saveSnapshots(ctx, threadID, snap.long, snap.Versions)
	}
	return snap.Snapshot, nil
}

// saveSnapshots saves the values of fields at their versions as the fields'
// snapshots. It holds the thread's row in share mode, which a Put, a
// Rollback, a Prune and a DeleteThread each lock exclusively, and rereads
// the chains under it, so what it saves matches the blobs as they are. A
// snapshot only speeds reads up, so failures are not errors.
func (c *Checkpointer) saveSnapshots(ctx context.Context, threadID string, fields []string, versions map[string]int64) {
	err := c.d.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 FOR SHARE`, threadID); err != nil {
			return err
		}
		want := make(map[string]int64, len(fields))
		for _, f := range fields {
			want[f] = versions[f]
		}
		vals, _, err := values(ctx, tx, threadID, want)
		if err != nil {
			return err
		}
		batch := &pgx.Batch{}
		for f, v := range want {
			batch.Queue(`
INSERT INTO snapshots (thread_id, field, version, data) VALUES ($1, $2, $3, $4)
ON CONFLICT (thread_id, field) DO UPDATE SET version = EXCLUDED.version, data = EXCLUDED.data`, threadID, f, v, []byte(vals[f]))
		}
		return tx.SendBatch(ctx, batch).Close()
	})
	_ = err // best effort: the next cold read tries again
}

// newestSnapshot is a snapshot read by newest, with the fields whose chains
// were longer than checkpoint.SnapshotAfter.
type newestSnapshot struct {
	*checkpoint.Snapshot
	long []string
}

// Head implements checkpoint.HeadReader: the newest checkpoint and its
// pending writes, without values.
func (c *Checkpointer) Head(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	snap, err := c.newest(ctx, threadID, false)
	if err != nil {
		return nil, fmt.Errorf("newest checkpoint of thread %s: %w", threadID, err)
	}
	return snap.Snapshot, nil
}

// newest reads the thread's newest checkpoint, with its values when withValues.
func (c *Checkpointer) newest(ctx context.Context, threadID string, withValues bool) (newestSnapshot, error) {
	if err := ctx.Err(); err != nil {
		return newestSnapshot{}, err
	}
	var snap newestSnapshot
	err := c.d.inTx(ctx, readOnly, func(tx pgx.Tx) error {
		var id string
		var data []byte
		err := tx.QueryRow(ctx, `
SELECT c.id, c.data FROM threads t JOIN checkpoints c ON c.thread_id = t.thread_id AND c.id = t.latest
WHERE t.thread_id = $1`, threadID).Scan(&id, &data)
		if errors.Is(err, pgx.ErrNoRows) {
			err = tx.QueryRow(ctx, `SELECT id, data FROM checkpoints WHERE thread_id = $1 ORDER BY id DESC LIMIT 1`, threadID).Scan(&id, &data)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return checkpoint.ErrNotFound
		}
		if err != nil {
			return err
		}
		if !withValues {
			snap.Snapshot, err = head(ctx, tx, threadID, id, data)
			return err
		}
		snap.Snapshot, snap.long, err = snapshot(ctx, tx, threadID, id, data)
		return err
	})
	return snap, err
}

// Get implements checkpoint.Checkpointer.
func (c *Checkpointer) Get(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var snap *checkpoint.Snapshot
	err := c.d.inTx(ctx, readOnly, func(tx pgx.Tx) error {
		var data []byte
		err := tx.QueryRow(ctx, `SELECT data FROM checkpoints WHERE thread_id = $1 AND id = $2`, threadID, checkpointID).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			return checkpoint.ErrNotFound
		}
		if err != nil {
			return err
		}
		snap, _, err = snapshot(ctx, tx, threadID, checkpointID, data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s/%s: %w", threadID, checkpointID, err)
	}
	return snap, nil
}

// snapshot decodes a checkpoint and materialises its values and pending
// writes; long lists the fields whose chains were longer than
// checkpoint.SnapshotAfter.
func snapshot(ctx context.Context, tx pgx.Tx, threadID, id string, data []byte) (s *checkpoint.Snapshot, long []string, err error) {
	s, err = head(ctx, tx, threadID, id, data)
	if err != nil {
		return nil, nil, err
	}
	if s.Values, long, err = values(ctx, tx, threadID, s.Versions); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", s.ID, err)
	}
	return s, long, nil
}

// head decodes a checkpoint and reads its pending writes.
func head(ctx context.Context, tx pgx.Tx, threadID, id string, data []byte) (*checkpoint.Snapshot, error) {
	s := &checkpoint.Snapshot{}
	if err := checkpoint.DecodeRecord(threadID, id, data, &s.Checkpoint); err != nil {
		return nil, fmt.Errorf("decode checkpoint: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT task_id, data FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = $2 ORDER BY task_id`, threadID, s.ID)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: pending writes: %w", s.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var task string
		var raw []byte
		if err := rows.Scan(&task, &raw); err != nil {
			return nil, err
		}
		var w checkpoint.PendingWrite
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("checkpoint %s: pending write %q: %w", s.ID, task, err)
		}
		s.Pending = append(s.Pending, w)
	}
	return s, rows.Err()
}

// chainQuery returns, for every (field, version) asked, the blob at that
// version and every blob its Base links lead to, down to a full value or to
// the field's snapshot (returned as a full value at its version).
const chainQuery = `
WITH RECURSIVE chain(field, version, base, data, depth) AS (
	SELECT b.field, b.version, CASE WHEN s.version IS NULL THEN b.base ELSE 0 END, COALESCE(s.data, b.data), 0
	FROM unnest($2::text[], $3::bigint[]) AS w(field, version)
	JOIN blobs b ON b.thread_id = $1 AND b.field = w.field AND b.version = w.version
	LEFT JOIN snapshots s ON b.base <> 0 AND s.thread_id = $1 AND s.field = b.field AND s.version = b.version
	UNION ALL
	SELECT b.field, b.version, CASE WHEN s.version IS NULL THEN b.base ELSE 0 END, COALESCE(s.data, b.data), c.depth + 1
	FROM chain c JOIN blobs b ON b.thread_id = $1 AND b.field = c.field AND b.version = c.base
	LEFT JOIN snapshots s ON b.base <> 0 AND s.thread_id = $1 AND s.field = b.field AND s.version = b.version
	WHERE c.base <> 0 AND c.base < c.version
)
SELECT field, version, base, data FROM chain ORDER BY field, depth`

type link struct {
	version, base int64
	data          []byte
}

// values materialises every field at its version with one query; long
// lists the fields whose chains were longer than checkpoint.SnapshotAfter.
func values(ctx context.Context, q pgx.Tx, threadID string, versions map[string]int64) (map[string]json.RawMessage, []string, error) {
	out := make(map[string]json.RawMessage, len(versions))
	if len(versions) == 0 {
		return out, nil, nil
	}
	fields := make([]string, 0, len(versions))
	vs := make([]int64, 0, len(versions))
	for f, v := range versions {
		fields, vs = append(fields, f), append(vs, v)
	}
	rows, err := q.Query(ctx, chainQuery, threadID, fields, vs)
	if err != nil {
		return nil, nil, fmt.Errorf("read values: %w", err)
	}
	chains := map[string][]link{}
	for rows.Next() {
		var f string
		var l link
		if err := rows.Scan(&f, &l.version, &l.base, &l.data); err != nil {
			rows.Close()
			return nil, nil, err
		}
		chains[f] = append(chains[f], l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read values: %w", err)
	}
	var long []string
	for f, v := range versions {
		val, err := joinChain(f, v, chains[f])
		if err != nil {
			return nil, nil, err
		}
		out[f] = val
		if len(chains[f])-1 > checkpoint.SnapshotAfter {
			long = append(long, f)
		}
	}
	return out, long, nil
}

// joinChain rebuilds field at version v from its chain, newest link first.
func joinChain(field string, v int64, chain []link) (json.RawMessage, error) {
	if len(chain) == 0 || chain[0].version != v {
		return nil, fmt.Errorf("field %s: blob version %d missing", field, v)
	}
	last := chain[len(chain)-1]
	if last.base != 0 {
		return nil, fmt.Errorf("field %s version %d: blob version %d missing", field, v, last.base)
	}
	if len(chain) == 1 {
		return last.data, nil
	}
	deltas := make([]json.RawMessage, 0, len(chain)-1)
	for i := len(chain) - 2; i >= 0; i-- {
		deltas = append(deltas, chain[i].data)
	}
	out, err := checkpoint.AppendArrays(last.data, deltas...)
	if err != nil {
		return nil, fmt.Errorf("field %s at version %d: %w", field, v, err)
	}
	return out, nil
}

// History implements checkpoint.Checkpointer.
func (c *Checkpointer) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var limit *int
	if opts.Limit > 0 {
		limit = &opts.Limit
	}
	rows, err := c.d.pool.Query(ctx, `
SELECT id, data FROM checkpoints WHERE thread_id = $1 AND ($2 = '' OR id < $2)
ORDER BY id DESC LIMIT $3`, threadID, opts.Before, limit)
	if err != nil {
		return nil, fmt.Errorf("history of thread %s: %w", threadID, err)
	}
	defer rows.Close()
	var out []checkpoint.Checkpoint
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			return nil, fmt.Errorf("history of thread %s: %w", threadID, err)
		}
		var cp checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, id, data, &cp); err != nil {
			return nil, fmt.Errorf("history of thread %s: decode checkpoint: %w", threadID, err)
		}
		out = append(out, cp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history of thread %s: %w", threadID, err)
	}
	return out, nil
}

// Threads implements checkpoint.Checkpointer.
func (c *Checkpointer) Threads(ctx context.Context) ([]checkpoint.ThreadInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := c.d.pool.Query(ctx, `SELECT thread_id, graph_name, latest, step, updated_at FROM threads ORDER BY updated_at DESC, thread_id`)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	defer rows.Close()
	var out []checkpoint.ThreadInfo
	for rows.Next() {
		var info checkpoint.ThreadInfo
		if err := rows.Scan(&info.ThreadID, &info.GraphName, &info.Latest, &info.Step, &info.UpdatedAt); err != nil {
			return nil, fmt.Errorf("list threads: %w", err)
		}
		info.UpdatedAt = info.UpdatedAt.UTC()
		out = append(out, info)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return out, nil
}

// Fork implements checkpoint.Checkpointer in one transaction. The new thread
// gets full copies of the values at the same versions.
func (c *Checkpointer) Fork(ctx context.Context, threadID, checkpointID, newThreadID string) (*checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if newThreadID == "" {
		return nil, fmt.Errorf("fork %s/%s: empty new thread id", threadID, checkpointID)
	}
	var forked checkpoint.Checkpoint
	err := c.d.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1) OR EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1)`, newThreadID).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return fmt.Errorf("thread %s already exists", newThreadID)
		}
		var data []byte
		err := tx.QueryRow(ctx, `SELECT data FROM checkpoints WHERE thread_id = $1 AND id = $2`, threadID, checkpointID).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			return checkpoint.ErrNotFound
		}
		if err != nil {
			return err
		}
		var src checkpoint.Checkpoint
		if err := checkpoint.DecodeRecord(threadID, checkpointID, data, &src); err != nil {
			return fmt.Errorf("decode checkpoint: %w", err)
		}
		vals, _, err := values(ctx, tx, threadID, src.Versions)
		if err != nil {
			return err
		}
		forked = checkpoint.ForkOf(src, newThreadID, c.d.now().UTC())
		out, err := checkpoint.EncodeRecord(forked)
		if err != nil {
			return err
		}
		batch := &pgx.Batch{}
		for f, v := range forked.Versions {
			batch.Queue(insertBlob, newThreadID, f, v, int64(0), []byte(vals[f]))
		}
		batch.Queue(insertCheckpoint, newThreadID, forked.ID, out)
		batch.Queue(upsertThread, newThreadID, forked.GraphName, forked.ID, forked.Step, forked.CreatedAt)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return nil, fmt.Errorf("fork %s/%s into %s: %w", threadID, checkpointID, newThreadID, err)
	}
	return &forked, nil
}

// DeleteThread implements checkpoint.Checkpointer. Deleting an unknown thread
// is not an error.
func (c *Checkpointer) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := c.d.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		for _, table := range []string{"threads", "checkpoints", "blobs", "pending_writes", "snapshots"} {
			batch.Queue("DELETE FROM "+table+" WHERE thread_id = $1", threadID)
		}
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("delete thread %s: %w", threadID, err)
	}
	return nil
}

// Prune implements checkpoint.Checkpointer in one transaction under the
// thread's row lock, so a concurrent Put waits for it.
func (c *Checkpointer) Prune(ctx context.Context, threadID string, keep int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if keep < 1 {
		return fmt.Errorf("prune %s: keep must be at least 1, got %d", threadID, keep)
	}
	err := c.d.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE`, threadID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, data FROM checkpoints WHERE thread_id = $1 ORDER BY id`, threadID)
		if err != nil {
			return err
		}
		var ids []string
		var datas [][]byte
		for rows.Next() {
			var id string
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				rows.Close()
				return err
			}
			ids, datas = append(ids, id), append(datas, data)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) <= keep {
			return nil
		}
		cut := len(ids) - keep
		needed := map[string]map[int64]bool{}
		for i := cut; i < len(ids); i++ {
			var cp checkpoint.Checkpoint
			if err := checkpoint.DecodeRecord(threadID, ids[i], datas[i], &cp); err != nil {
				return fmt.Errorf("decode kept checkpoint %s: %w", ids[i], err)
			}
			for f, v := range cp.Versions {
				if needed[f] == nil {
					needed[f] = map[int64]bool{}
				}
				needed[f][v] = true
			}
		}
		rewrites, err := pruneRewrites(ctx, tx, threadID, needed)
		if err != nil {
			return err
		}
		var keptFields []string
		var keptVersions []int64
		for f, set := range needed {
			for v := range set {
				keptFields, keptVersions = append(keptFields, f), append(keptVersions, v)
			}
		}
		batch := &pgx.Batch{}
		for _, b := range rewrites {
			batch.Queue(insertBlob, threadID, b.Field, b.Version, int64(0), []byte(b.Data))
		}
		batch.Queue(`DELETE FROM pending_writes WHERE thread_id = $1 AND checkpoint_id < $2`, threadID, ids[cut])
		batch.Queue(`DELETE FROM checkpoints WHERE thread_id = $1 AND id < $2`, threadID, ids[cut])
		batch.Queue(`DELETE FROM snapshots WHERE thread_id = $1`, threadID)
		batch.Queue(`
DELETE FROM blobs b WHERE b.thread_id = $1 AND NOT EXISTS (
	SELECT 1 FROM unnest($2::text[], $3::bigint[]) AS k(field, version) WHERE k.field = b.field AND k.version = b.version)`,
			threadID, keptFields, keptVersions)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("prune %s: %w", threadID, err)
	}
	return nil
}

// pruneRewrites returns, as full values, the kept versions whose base is not kept.
func pruneRewrites(ctx context.Context, tx pgx.Tx, threadID string, needed map[string]map[int64]bool) ([]checkpoint.Blob, error) {
	var fields []string
	var versions []int64
	for f, set := range needed {
		for v := range set {
			fields, versions = append(fields, f), append(versions, v)
		}
	}
	rows, err := tx.Query(ctx, `
SELECT b.field, b.version, b.base FROM unnest($2::text[], $3::bigint[]) AS k(field, version)
JOIN blobs b ON b.thread_id = $1 AND b.field = k.field AND b.version = k.version WHERE b.base <> 0`, threadID, fields, versions)
	if err != nil {
		return nil, err
	}
	rebuild := map[string]int64{}
	var order []string
	for rows.Next() {
		var f string
		var v, base int64
		if err := rows.Scan(&f, &v, &base); err != nil {
			rows.Close()
			return nil, err
		}
		if !needed[f][base] {
			key := fmt.Sprintf("%s\x00%d", f, v)
			rebuild[key] = v
			order = append(order, key)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(order)
	out := make([]checkpoint.Blob, 0, len(order))
	for _, key := range order {
		field, _, _ := strings.Cut(key, "\x00")
		v := rebuild[key]
		vals, _, err := values(ctx, tx, threadID, map[string]int64{field: v})
		if err != nil {
			return nil, err
		}
		out = append(out, checkpoint.Blob{Field: field, Version: v, Data: vals[field]})
	}
	return out, nil
}
