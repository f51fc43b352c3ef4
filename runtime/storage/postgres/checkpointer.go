package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/core"
)

// driver is the checkpoint storage of a DB: core.Driver over the tables of
// the package documentation.
type driver struct{ d *DB }

var _ core.Driver = driver{}

// tx is one transaction. Writes are queued and sent together: before the
// next read, or at Commit. A transaction that only writes (a Put, a
// PutWrites) is sent as one batch outside an explicit transaction, which
// the server runs as one implicit transaction: one round trip, and a
// statement that fails rolls back every statement of the batch. A
// transaction that reads begins an explicit one at its first read.
type tx struct {
	ctx   context.Context
	pool  queryer
	tx    pgx.Tx
	opts  pgx.TxOptions
	batch *pgx.Batch
	// errs collects the errors of queued statements' result checks.
	errs []error
	// fenced is set once the check of the context's fence (if any) is
	// queued: it comes first, and holds until the transaction ends.
	fenced bool
}

// queryer is what tx reads and writes through: the pool, or a transaction.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

func (d driver) Begin(ctx context.Context, write bool) (core.Txn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &tx{ctx: ctx, pool: d.d.pool}
	if !write {
		t.opts = readOnly
	}
	return t, nil
}

// Commit sends the queued writes and commits the explicit transaction, if
// one was begun.
func (t *tx) Commit() error {
	if err := t.flush(); err != nil {
		return err
	}
	if t.tx == nil {
		return nil
	}
	ptx := t.tx
	t.tx = nil
	return ptx.Commit(t.ctx)
}

// Discard rolls back the explicit transaction, if one was begun and not
// committed.
func (t *tx) Discard() {
	if t.tx != nil {
		_ = t.tx.Rollback(context.WithoutCancel(t.ctx))
		t.tx = nil
	}
}

// queue adds a write; check, if not nil, checks its result.
func (t *tx) queue(check func(pgconn.CommandTag) error, sql string, args ...any) {
	if t.batch == nil {
		t.batch = &pgx.Batch{}
	}
	if !t.fenced {
		t.fenced = true
		queueFence(t.ctx, t.batch)
	}
	q := t.batch.Queue(sql, args...)
	if check != nil {
		q.Exec(func(ct pgconn.CommandTag) error {
			if err := check(ct); err != nil {
				t.errs = append(t.errs, err)
			}
			return nil
		})
	}
}

// flush sends the queued writes.
func (t *tx) flush() error {
	if t.batch == nil {
		return nil
	}
	b := t.batch
	t.batch = nil
	if err := t.pool.SendBatch(t.ctx, b).Close(); err != nil {
		return fenceError(err)
	}
	return errors.Join(t.errs...)
}

// reader returns what to read through: the transaction, begun at the first
// read, after the writes queued before it.
func (t *tx) reader() (queryer, error) {
	if t.tx == nil {
		p, ok := t.pool.(interface {
			BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
		})
		if !ok {
			return nil, errors.New("postgres: no transaction to read in")
		}
		ptx, err := p.BeginTx(t.ctx, t.opts)
		if err != nil {
			return nil, err
		}
		t.tx, t.pool = ptx, ptx
	}
	if err := t.flush(); err != nil {
		return nil, err
	}
	return t.tx, nil
}

func (t *tx) row(sql string, args []any, dest ...any) error {
	q, err := t.reader()
	if err != nil {
		return err
	}
	err = q.QueryRow(t.ctx, sql, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return checkpoint.ErrNotFound
	}
	return err
}

// rows runs a query and calls fn for each row with its scan function.
func (t *tx) rows(sql string, args []any, fn func(scan func(dest ...any) error) error) error {
	q, err := t.reader()
	if err != nil {
		return err
	}
	rows, err := q.Query(t.ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *tx) Checkpoint(threadID, id string) ([]byte, error) {
	var data []byte
	err := t.row(`SELECT data FROM checkpoints WHERE thread_id = $1 AND id = $2`, []any{threadID, id}, &data)
	return data, err
}

func (t *tx) Newest(threadID string) (string, []byte, error) {
	var id string
	var data []byte
	err := t.row(`
SELECT c.id, c.data FROM threads t JOIN checkpoints c ON c.thread_id = t.thread_id AND c.id = t.latest
WHERE t.thread_id = $1`, []any{threadID}, &id, &data)
	if errors.Is(err, checkpoint.ErrNotFound) {
		err = t.row(`SELECT id, data FROM checkpoints WHERE thread_id = $1 ORDER BY id DESC LIMIT 1`, []any{threadID}, &id, &data)
	}
	return id, data, err
}

func (t *tx) Checkpoints(threadID, before string, limit int, fn func(string, []byte) error) error {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	return t.rows(`
SELECT id, data FROM checkpoints WHERE thread_id = $1 AND ($2 = '' OR id < $2)
ORDER BY id DESC LIMIT $3`, []any{threadID, before, lim}, func(scan func(...any) error) error {
		var id string
		var data []byte
		if err := scan(&id, &data); err != nil {
			return err
		}
		return fn(id, data)
	})
}

func (t *tx) Writes(threadID, checkpointID string) ([]checkpoint.PendingWrite, error) {
	var out []checkpoint.PendingWrite
	err := t.rows(`SELECT task_id, data FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = $2 ORDER BY task_id`,
		[]any{threadID, checkpointID}, func(scan func(...any) error) error {
			var task string
			var data []byte
			if err := scan(&task, &data); err != nil {
				return err
			}
			w, err := core.DecodeWrite(data)
			if err != nil {
				return fmt.Errorf("pending write %q: %w", task, err)
			}
			out = append(out, w)
			return nil
		})
	return out, err
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

// Chains reads every chain with one recursive query.
func (t *tx) Chains(threadID string, versions map[string]int64) (map[string][]core.Link, error) {
	fields := make([]string, 0, len(versions))
	vs := make([]int64, 0, len(versions))
	for f, v := range versions {
		fields, vs = append(fields, f), append(vs, v)
	}
	out := make(map[string][]core.Link, len(versions))
	err := t.rows(chainQuery, []any{threadID, fields, vs}, func(scan func(...any) error) error {
		var f string
		var l core.Link
		if err := scan(&f, &l.Version, &l.Base, &l.Data); err != nil {
			return err
		}
		out[f] = append(out[f], l)
		return nil
	})
	return out, err
}

func (t *tx) Blobs(threadID string) ([]checkpoint.Blob, error) {
	var out []checkpoint.Blob
	err := t.rows(`SELECT field, version, base FROM blobs WHERE thread_id = $1`, []any{threadID}, func(scan func(...any) error) error {
		var b checkpoint.Blob
		err := scan(&b.Field, &b.Version, &b.Base)
		out = append(out, b)
		return err
	})
	return out, err
}

func (t *tx) Thread(threadID string) (checkpoint.ThreadInfo, error) {
	var info checkpoint.ThreadInfo
	err := t.row(`SELECT thread_id, graph_name, latest, step, updated_at FROM threads WHERE thread_id = $1`, []any{threadID},
		&info.ThreadID, &info.GraphName, &info.Latest, &info.Step, &info.UpdatedAt)
	info.UpdatedAt = info.UpdatedAt.UTC()
	return info, err
}

func (t *tx) Threads() ([]checkpoint.ThreadInfo, error) {
	var out []checkpoint.ThreadInfo
	err := t.rows(`SELECT thread_id, graph_name, latest, step, updated_at FROM threads`, nil, func(scan func(...any) error) error {
		var info checkpoint.ThreadInfo
		if err := scan(&info.ThreadID, &info.GraphName, &info.Latest, &info.Step, &info.UpdatedAt); err != nil {
			return err
		}
		info.UpdatedAt = info.UpdatedAt.UTC()
		out = append(out, info)
		return nil
	})
	return out, err
}

// Children reads the range of ids that start with the thread's child
// prefix, compared byte by byte (COLLATE "C", indexed by threads_id_bytes):
// ids from threadID+NamespaceSep (0x1f) up to, not including,
// threadID+0x20.
func (t *tx) Children(threadID string) ([]string, error) {
	var out []string
	from := checkpoint.ChildPrefix(threadID)
	to := threadID + string(checkpoint.NamespaceSep[0]+1)
	err := t.rows(`SELECT thread_id FROM threads WHERE thread_id COLLATE "C" >= $1 AND thread_id COLLATE "C" < $2`, []any{from, to}, func(scan func(...any) error) error {
		var id string
		if err := scan(&id); err != nil {
			return err
		}
		out = append(out, id)
		return nil
	})
	return out, err
}

// Lock locks the thread's summary row (SELECT … FOR UPDATE or FOR SHARE).
func (t *tx) Lock(threadID string, shared bool) error {
	mode := "UPDATE"
	if shared {
		mode = "SHARE"
	}
	t.queue(nil, `SELECT 1 FROM threads WHERE thread_id = $1 FOR `+mode, threadID)
	return nil
}

// RequireBlobs calls graphctl_require_blobs, which raises an error (and so
// fails the transaction) when a blob is missing.
func (t *tx) RequireBlobs(threadID string, refs []checkpoint.BlobRef) error {
	fields := make([]string, len(refs))
	versions := make([]int64, len(refs))
	for i, r := range refs {
		fields[i], versions[i] = r.Field, r.Version
	}
	t.queue(nil, `SELECT graphctl_require_blobs($1, $2, $3)`, threadID, fields, versions)
	return nil
}

func (t *tx) PutBlob(threadID string, b checkpoint.Blob) error {
	t.queue(nil, `
INSERT INTO blobs (thread_id, field, version, base, data) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (thread_id, field, version) DO UPDATE SET base = EXCLUDED.base, data = EXCLUDED.data`,
		threadID, b.Field, b.Version, b.Base, []byte(b.Data))
	return nil
}

func (t *tx) DeleteBlobs(threadID string, refs []checkpoint.BlobRef) error {
	fields := make([]string, len(refs))
	versions := make([]int64, len(refs))
	for i, r := range refs {
		fields[i], versions[i] = r.Field, r.Version
	}
	t.queue(nil, `DELETE FROM blobs b USING unnest($2::text[], $3::bigint[]) AS k(field, version)
WHERE b.thread_id = $1 AND b.field = k.field AND b.version = k.version`, threadID, fields, versions)
	return nil
}

func (t *tx) PutCheckpoint(threadID, id string, record []byte) error {
	t.queue(nil, `
INSERT INTO checkpoints (thread_id, id, data) VALUES ($1, $2, $3)
ON CONFLICT (thread_id, id) DO UPDATE SET data = EXCLUDED.data`, threadID, id, record)
	return nil
}

func (t *tx) DeleteCheckpoints(threadID string, ids []string) error {
	t.queue(nil, `DELETE FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = ANY($2::text[])`, threadID, ids)
	t.queue(nil, `DELETE FROM checkpoints WHERE thread_id = $1 AND id = ANY($2::text[])`, threadID, ids)
	return nil
}

// PutWrite inserts the write only if its checkpoint exists; no row inserted
// is checkpoint.ErrNotFound.
func (t *tx) PutWrite(threadID, checkpointID string, w checkpoint.PendingWrite) error {
	record, err := core.EncodeWrite(w)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	t.queue(func(ct pgconn.CommandTag) error {
		if ct.RowsAffected() == 0 {
			return checkpoint.ErrNotFound
		}
		return nil
	}, `
INSERT INTO pending_writes (thread_id, checkpoint_id, task_id, data)
SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1 AND id = $2)
ON CONFLICT (thread_id, checkpoint_id, task_id) DO UPDATE SET data = EXCLUDED.data`, threadID, checkpointID, w.TaskID, record)
	return nil
}

func (t *tx) DeleteWrites(threadID, checkpointID string, taskIDs []string) error {
	if taskIDs == nil {
		t.queue(nil, `DELETE FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = $2`, threadID, checkpointID)
		return nil
	}
	t.queue(nil, `DELETE FROM pending_writes WHERE thread_id = $1 AND checkpoint_id = $2 AND task_id = ANY($3::text[])`, threadID, checkpointID, taskIDs)
	return nil
}

func (t *tx) PutThread(info checkpoint.ThreadInfo, ifNewer bool) error {
	where := ""
	if ifNewer {
		where = ` WHERE threads.latest <= EXCLUDED.latest`
	}
	t.queue(nil, `
INSERT INTO threads (thread_id, graph_name, latest, step, updated_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (thread_id) DO UPDATE SET graph_name = EXCLUDED.graph_name, latest = EXCLUDED.latest,
	step = EXCLUDED.step, updated_at = EXCLUDED.updated_at`+where,
		info.ThreadID, info.GraphName, info.Latest, info.Step, info.UpdatedAt)
	return nil
}

func (t *tx) PutSnapshot(threadID, field string, version int64, value []byte) error {
	t.queue(nil, `
INSERT INTO snapshots (thread_id, field, version, data) VALUES ($1, $2, $3, $4)
ON CONFLICT (thread_id, field) DO UPDATE SET version = EXCLUDED.version, data = EXCLUDED.data`, threadID, field, version, value)
	return nil
}

func (t *tx) DropSnapshot(threadID, field string, from int64) error {
	t.queue(nil, `DELETE FROM snapshots WHERE thread_id = $1 AND field = $2 AND version >= $3`, threadID, field, from)
	return nil
}

func (t *tx) DropSnapshots(threadID string) error {
	t.queue(nil, `DELETE FROM snapshots WHERE thread_id = $1`, threadID)
	return nil
}

func (t *tx) DeleteThread(threadID string) error {
	for _, table := range []string{"threads", "checkpoints", "blobs", "pending_writes", "snapshots"} {
		t.queue(nil, "DELETE FROM "+table+" WHERE thread_id = $1", threadID)
	}
	return nil
}
