// Package pgqueue is the PostgreSQL runs.Queue: the runs of every serve
// replica on one database, in the runs table of graphctl's schema (created
// by the migrations of runtime/storage/postgres).
//
// One running run per thread is the partial unique index runs_one_running.
// A replica claims a run with UPDATE … FOR UPDATE SKIP LOCKED, so exactly one
// replica claims each; a concurrent claim of a second run of the same thread
// fails on the index and is retried later. Submits on one thread are
// serialized by a transaction-scoped advisory lock on the thread, which
// makes the multitask strategies hold across replicas. A claimed run carries
// a lease (owner, lease_until) that its replica renews by heartbeats; a run
// whose lease expired (its replica died) is claimed again by another and
// continues from its thread's last checkpoint. Every claim increments the
// run's claim generation, the fencing token of the run's checkpoint and store
// writes (see Fence): a replica that was paused past its lease cannot write
// to the thread once the run has been claimed again, by another replica or by
// itself.
//
// Replicas tell each other of wake-ups (a run queued, a thread freed),
// cancels and new stream frames with LISTEN/NOTIFY on one channel per schema.
// A notification carries only a run id: stream frames, whatever their size,
// go through the run_frames table (NOTIFY payloads are limited to 8000 bytes),
// which also serves clients that join a run late or reconnect.
package pgqueue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/server/runs"
)

// DefaultLease is how long a claimed run stays with its replica without a
// heartbeat.
const DefaultLease = 10 * time.Second

// Options configure New.
type Options struct {
	// Schema is the schema of graphctl's tables (it names the channel).
	Schema string
	// Lease is how long a claim lasts without a heartbeat (default
	// DefaultLease).
	Lease time.Duration
	// Log receives the listener's reconnections.
	Log *slog.Logger
}

// Queue is the PostgreSQL runs.Queue of one replica.
type Queue struct {
	pool    *pgxpool.Pool
	owner   string
	channel string
	lease   time.Duration
	log     *slog.Logger

	// claims holds the generation of each run claimed here and not yet
	// started (see Fence).
	claims sync.Map

	notices chan runs.Notice
	stop    context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

var (
	_ runs.Queue        = (*Queue)(nil)
	_ runs.Fencer       = (*Queue)(nil)
	_ runs.ClaimRenewer = (*Queue)(nil)
)

// New returns the queue of one replica (with an id of its own) and starts
// listening for the other replicas' notifications.
func New(pool *pgxpool.Pool, opts Options) (*Queue, error) {
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("run queue: replica id: %w", err)
	}
	h := fnv.New64a()
	h.Write([]byte(opts.Schema))
	ctx, cancel := context.WithCancel(context.Background())
	q := &Queue{pool: pool, owner: hex.EncodeToString(id), channel: fmt.Sprintf("graphctl_runs_%x", h.Sum64()),
		lease: opts.Lease, log: opts.Log, notices: make(chan runs.Notice, 256), stop: cancel, done: make(chan struct{})}
	ready := make(chan error, 1)
	go q.listen(ctx, ready)
	if err := <-ready; err != nil {
		cancel()
		<-q.done
		return nil, err
	}
	return q, nil
}

// Owner returns the replica's id, as the runs it claims record it.
func (q *Queue) Owner() string { return q.owner }

// Lease returns how long a claim lasts without a heartbeat.
func (q *Queue) Lease() time.Duration { return q.lease }

// Notices implements runs.Queue.
func (q *Queue) Notices() <-chan runs.Notice { return q.notices }

// Close implements runs.Queue.
func (q *Queue) Close() error {
	q.once.Do(func() {
		q.stop()
		<-q.done
	})
	return nil
}

// listen holds one connection that LISTENs on the schema's channel and
// turns notifications into notices; it reconnects after an error and then
// announces a wake-up, since notifications may have been missed meanwhile.
func (q *Queue) listen(ctx context.Context, ready chan<- error) {
	defer close(q.done)
	defer close(q.notices)
	first := true
	for ctx.Err() == nil {
		conn, err := q.pool.Acquire(ctx)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{q.channel}.Sanitize())
			if err != nil {
				conn.Release()
			}
		}
		if first {
			first = false
			if err != nil {
				ready <- fmt.Errorf("run queue: listen: %w", err)
				return
			}
			ready <- nil
		} else if err == nil {
			q.deliver(ctx, runs.Notice{Kind: runs.NoticeWake})
		}
		if err != nil {
			q.log.Warn("run queue: listen", "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		for {
			n, err := conn.Conn().WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() == nil {
					q.log.Warn("run queue: notification connection lost; reconnecting", "error", err)
				}
				// The connection may be mid-wait: close it rather than
				// returning it to the pool.
				conn.Conn().Close(context.Background())
				conn.Release()
				break
			}
			if nt, ok := parseNotice(n.Payload); ok {
				q.deliver(ctx, nt)
			}
		}
	}
}

func (q *Queue) deliver(ctx context.Context, n runs.Notice) {
	select {
	case q.notices <- n:
	case <-ctx.Done():
	}
}

func parseNotice(p string) (runs.Notice, bool) {
	parts := strings.Split(p, "|")
	switch {
	case parts[0] == "w":
		return runs.Notice{Kind: runs.NoticeWake}, true
	case parts[0] == "c" && len(parts) == 3:
		return runs.Notice{Kind: runs.NoticeCancel, RunID: parts[1], Action: parts[2]}, true
	case parts[0] == "f" && len(parts) == 2:
		return runs.Notice{Kind: runs.NoticeFrames, RunID: parts[1]}, true
	}
	return runs.Notice{}, false
}

// notify queues a notification in b (delivered at commit).
func (q *Queue) notify(b *pgx.Batch, payload string) {
	b.Queue("SELECT pg_notify($1, $2)", q.channel, payload)
}

// inTx runs fn in a transaction, committing when it returns nil.
func (q *Queue) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, q.pool, fn)
}

func encode(rec runs.Record) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode run %s: %w", rec.RunID, err)
	}
	return b, nil
}

// scanRecord reads a record and its authoritative columns.
func scanRecord(row pgx.Row) (runs.Record, error) {
	var raw []byte
	var status, action string
	if err := row.Scan(&raw, &status, &action); err != nil {
		return runs.Record{}, err
	}
	var rec runs.Record
	if err := checkpoint.DecodeJSON(raw, &rec); err != nil {
		return runs.Record{}, fmt.Errorf("decode run record: %w", err)
	}
	rec.Status, rec.CancelAction = status, action
	return rec, nil
}

const recordCols = "record, status, cancel_action"

func threadLock(tx pgx.Tx, ctx context.Context, thread string) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('graphctl:thread:' || current_schema() || ':' || $1, 0))", thread)
	return err
}

// Submit implements runs.Queue: one batch, one round trip, run by the server
// as one implicit transaction under the thread's advisory lock. It tells no
// replica to claim the run: the submitting replica claims it right after, and
// a run it cannot start waits for the thread's running run, whose end wakes
// the replicas.
func (q *Queue) Submit(ctx context.Context, rec runs.Record) error {
	raw, err := encode(rec)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock(hashtextextended('graphctl:thread:' || current_schema() || ':' || $1, 0))`, rec.ThreadID)
	switch rec.MultitaskStrategy {
	case runs.Interrupt, runs.Rollback:
		// As LangGraph does, every earlier run of the thread is cancelled:
		// queued ones never start, the running one hands the thread over once
		// it has stopped. Queued runs first: one claimed meanwhile is then
		// running, and the next statement (a new snapshot) cancels it.
		if rec.MultitaskStrategy == runs.Rollback {
			b.Queue(`DELETE FROM runs WHERE thread_id = $1 AND status = 'pending'`, rec.ThreadID)
		} else {
			b.Queue(`UPDATE runs SET status = 'interrupted', cancel_action = $2, updated_at = now()
WHERE thread_id = $1 AND status = 'pending'`, rec.ThreadID, rec.MultitaskStrategy)
		}
		// A thread hold is not a run: nothing of it is cancelled, the new run
		// waits for its release.
		b.Queue(`WITH c AS (UPDATE runs SET cancel_action = $2 WHERE thread_id = $1 AND status = 'running' AND cancel_action = '' AND run_id NOT LIKE 'hold:%' RETURNING run_id)
SELECT pg_notify($3, 'c|' || run_id || '|' || $2) FROM c`, rec.ThreadID, rec.MultitaskStrategy, q.channel)
	}
	// start_at is read on the database's clock, after the thread's lock: the
	// runs of a thread queued without a delay keep the order of seq.
	insert := `INSERT INTO runs (run_id, thread_id, status, cancel_action, created_at, updated_at, record, start_at)
SELECT $1, $2, 'pending', '', $3, $4, $5, clock_timestamp() + make_interval(secs => $6)`
	if rec.MultitaskStrategy == runs.Reject {
		insert += ` WHERE NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = $2 AND status IN ('pending', 'running'))`
	}
	inserted := false
	b.Queue(insert, rec.RunID, rec.ThreadID, rec.CreatedAt, rec.UpdatedAt, raw, startDelay(rec)).Exec(func(tag pgconn.CommandTag) error {
		inserted = tag.RowsAffected() == 1
		return nil
	})
	var busy string
	if rec.MultitaskStrategy == runs.Reject {
		b.Queue(`SELECT run_id FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') AND run_id <> $2 ORDER BY seq LIMIT 1`,
			rec.ThreadID, rec.RunID).QueryRow(func(r pgx.Row) error {
			if err := r.Scan(&busy); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			return nil
		})
	}
	if err := q.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("queue run %s: %w", rec.RunID, err)
	}
	if !inserted {
		return fmt.Errorf("thread %q: run %s is active: %w", rec.ThreadID, busy, runs.ErrBusy)
	}
	return nil
}

// startDelay is how many seconds after it is queued a run may start: the
// time until its StartAt (after_seconds), 0 for a run that starts at once.
func startDelay(rec runs.Record) float64 {
	if rec.StartAt.IsZero() {
		return 0
	}
	return max(time.Until(rec.StartAt).Seconds(), 0)
}

// Claim implements runs.Queue.
func (q *Queue) Claim(ctx context.Context, runID string) (*runs.Record, bool, error) {
	// A queued run is startable once its start time has passed, when it is
	// the first such run of a thread with no running run (in the order of
	// start times, as LangGraph starts the runs of a thread); a running run
	// whose lease expired is taken over.
	const startable = `r.run_id NOT LIKE 'hold:%' AND ((r.status = 'pending' AND r.start_at <= now()
	AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.thread_id = r.thread_id AND (a.status = 'running'
		OR (a.status = 'pending' AND a.start_at <= now() AND (a.start_at, a.seq) < (r.start_at, r.seq)))))
	OR (r.status = 'running' AND (r.lease_until IS NULL OR r.lease_until < now())))`
	where := startable
	args := []any{q.owner, q.lease.Seconds()}
	if runID != "" {
		where += " AND r.run_id = $3"
		args = append(args, runID)
	}
	row := q.pool.QueryRow(ctx, `WITH c AS (
	SELECT r.run_id, r.status AS was FROM runs r WHERE `+where+` ORDER BY r.start_at, r.seq LIMIT 1 FOR UPDATE SKIP LOCKED)
UPDATE runs SET status = 'running', owner = $1, lease_until = now() + make_interval(secs => $2), updated_at = now(),
	lease_gen = runs.lease_gen + 1
FROM c WHERE runs.run_id = c.run_id
RETURNING runs.record, runs.status, runs.cancel_action, c.was, runs.lease_gen`, args...)
	var raw []byte
	var status, action, was string
	var gen int64
	err := row.Scan(&raw, &status, &action, &was, &gen)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		// Another replica started a run of the same thread meanwhile.
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("claim a run: %w", err)
	}
	var rec runs.Record
	if err := checkpoint.DecodeJSON(raw, &rec); err != nil {
		return nil, false, fmt.Errorf("claim a run: decode: %w", err)
	}
	rec.CancelAction = action
	q.claims.Store(rec.RunID, gen)
	resumed := was == runs.StatusRunning
	if !resumed {
		rec.Status = runs.StatusPending // the manager marks it running
	} else {
		rec.Status = status
	}
	return &rec, resumed, nil
}

// Save implements runs.Queue. When ctx carries the fence of the run's claim
// (see Fence), the record is written only while that claim holds, in the
// same transaction as graphctl_fence: an execution whose run another
// replica has claimed since, even one this replica claimed again later,
// gets checkpoint.ErrFenced and the record stays the holder's.
func (q *Queue) Save(ctx context.Context, rec runs.Record) error {
	raw, err := encode(rec)
	if err != nil {
		return err
	}
	// The status column moves only from pending to running here; cancel
	// actions are set by Cancel and Submit.
	const update = `UPDATE runs SET record = $3, updated_at = $4 WHERE run_id = $1 AND owner = $2`
	if _, fenced := fenceOf(ctx, rec.RunID); !fenced {
		if _, err := q.pool.Exec(ctx, update, rec.RunID, q.owner, raw, rec.UpdatedAt); err != nil {
			return fmt.Errorf("save run %s: %w", rec.RunID, err)
		}
		return nil
	}
	b := &pgx.Batch{}
	queueFence(ctx, b, rec.RunID)
	b.Queue(update, rec.RunID, q.owner, raw, rec.UpdatedAt)
	if err := fenceError(q.pool.SendBatch(ctx, b).Close()); err != nil {
		return fmt.Errorf("save run %s: %w", rec.RunID, err)
	}
	return nil
}

// Finish implements runs.Queue. When ctx carries the fence of the run's
// claim (see Fence), the run is ended only while that claim holds, in the
// same transaction as graphctl_fence: an execution whose run another replica
// has claimed since (even one this replica claimed again later, or one that
// replica has ended) gets checkpoint.ErrFenced, and the run stays as its
// holder left it.
func (q *Queue) Finish(ctx context.Context, rec runs.Record, forget bool) error {
	b := &pgx.Batch{}
	queueFence(ctx, b, rec.RunID)
	if forget {
		b.Queue(`DELETE FROM runs WHERE run_id = $1 AND owner = $2`, rec.RunID, q.owner)
	} else {
		raw, err := encode(rec)
		if err != nil {
			return err
		}
		b.Queue(`UPDATE runs SET status = $3, record = $4, updated_at = $5, owner = NULL, lease_until = NULL
WHERE run_id = $1 AND owner = $2`, rec.RunID, q.owner, rec.Status, raw, rec.UpdatedAt)
	}
	// The replicas are woken only when a queued run waits for the thread.
	b.Queue(`SELECT pg_notify($1, 'w') WHERE EXISTS (SELECT 1 FROM runs WHERE thread_id = $2 AND status = 'pending')`, q.channel, rec.ThreadID)
	// One implicit transaction: the thread is freed and the replicas told
	// together.
	if err := fenceError(q.pool.SendBatch(ctx, b).Close()); err != nil {
		return fmt.Errorf("finish run %s: %w", rec.RunID, err)
	}
	q.dropPendingClaim(ctx, rec.RunID)
	return nil
}

// dropPendingClaim forgets the claim of run runID made here and not yet
// started (see Fence), when the write in ctx was made under none: an end
// or a release under a fence concerns the claim the fence names, taken
// from the queue already, and leaves alone a later claim of the run made
// here — one made again, under a newer generation, after the run's lease
// expired — which the run's next execution here starts under.
func (q *Queue) dropPendingClaim(ctx context.Context, runID string) {
	if _, fenced := fenceOf(ctx, runID); !fenced {
		q.claims.Delete(runID)
	}
}

// Release implements runs.Queue. Each run is released under one claim, if
// that claim still holds it: the one the fence ctx carries names (see Fence)
// for that run, the claim made here and not yet started (see Claim) for the
// others; a newer claim, even one of this replica, is kept. A run with
// neither is released if this replica owns it.
func (q *Queue) Release(ctx context.Context, runIDs []string) error {
	if len(runIDs) == 0 {
		return nil
	}
	gens := make([]*int64, len(runIDs))
	for i, id := range runIDs {
		if f, ok := fenceOf(ctx, id); ok {
			gens[i] = &f.Token
		} else if gen, ok := q.claims.LoadAndDelete(id); ok {
			g := gen.(int64)
			gens[i] = &g
		}
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE runs SET owner = NULL, lease_until = NULL
FROM unnest($1::text[], $2::bigint[]) AS c(run_id, gen)
WHERE runs.run_id = c.run_id AND runs.owner = $3 AND runs.status = 'running' AND (c.gen IS NULL OR runs.lease_gen = c.gen)`,
		runIDs, gens, q.owner)
	q.notify(b, "w")
	if err := q.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("release runs: %w", err)
	}
	return nil
}

// Heartbeat implements runs.Queue: it renews the runs this replica owns,
// whatever claim it holds them under. runs.Manager renews claims instead
// (RenewClaims), so that an execution that lost its run renews nothing.
func (q *Queue) Heartbeat(ctx context.Context, runIDs []string) (map[string]string, error) {
	held := map[string]string{}
	if len(runIDs) == 0 {
		return held, nil
	}
	rows, err := q.pool.Query(ctx, `UPDATE runs SET lease_until = now() + make_interval(secs => $3)
WHERE run_id = ANY($1) AND owner = $2 AND status = 'running' RETURNING run_id, cancel_action`, runIDs, q.owner, q.lease.Seconds())
	if err != nil {
		return nil, fmt.Errorf("renew run leases: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, action string
		if err := rows.Scan(&id, &action); err != nil {
			return nil, fmt.Errorf("renew run leases: %w", err)
		}
		held[id] = action
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("renew run leases: %w", err)
	}
	return held, nil
}

// RenewClaims implements runs.ClaimRenewer: the lease of a run is renewed
// only for the claim that holds it (this replica, under the claim's
// generation), in one statement. What became of the claims not renewed,
// rare, is read after the renewal, in a statement of its own, so that a
// takeover that committed while the renewal waited for the run's row is
// seen: the claim is then superseded.
func (q *Queue) RenewClaims(ctx context.Context, claims []checkpoint.Fence) (map[string]runs.ClaimRenewal, error) {
	out := make(map[string]runs.ClaimRenewal, len(claims))
	if len(claims) == 0 {
		return out, nil
	}
	ids, gens := make([]string, len(claims)), make([]int64, len(claims))
	for i, c := range claims {
		ids[i], gens[i] = c.RunID, c.Token
	}
	rows, err := q.pool.Query(ctx, `UPDATE runs SET lease_until = now() + make_interval(secs => $4)
FROM unnest($1::text[], $2::bigint[]) AS c(run_id, gen)
WHERE runs.run_id = ANY($1) AND runs.run_id = c.run_id AND runs.lease_gen = c.gen AND runs.owner = $3 AND runs.status = 'running'
RETURNING runs.run_id, runs.cancel_action`, ids, gens, q.owner, q.lease.Seconds())
	if err != nil {
		return nil, fmt.Errorf("renew run leases: %w", err)
	}
	var id, action string
	if _, err := pgx.ForEachRow(rows, []any{&id, &action}, func() error {
		out[id] = runs.ClaimRenewal{State: runs.ClaimHeld, CancelAction: action}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("renew run leases: %w", err)
	}
	if len(out) == len(claims) {
		return out, nil
	}
	type row struct {
		gen    int64
		status string
	}
	found := map[string]row{}
	var r row
	rows, err = q.pool.Query(ctx, `SELECT run_id, lease_gen, status FROM runs WHERE run_id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("renew run leases: %w", err)
	}
	if _, err := pgx.ForEachRow(rows, []any{&id, &r.gen, &r.status}, func() error {
		found[id] = r
		return nil
	}); err != nil {
		return nil, fmt.Errorf("renew run leases: %w", err)
	}
	for i, id := range ids {
		if _, held := out[id]; held {
			continue
		}
		r, ok := found[id]
		switch {
		case !ok:
			out[id] = runs.ClaimRenewal{State: runs.ClaimLost} // deleted
		case r.gen > gens[i]:
			out[id] = runs.ClaimRenewal{State: runs.ClaimSuperseded}
		case r.gen == gens[i] && r.status != runs.StatusPending && r.status != runs.StatusRunning:
			out[id] = runs.ClaimRenewal{State: runs.ClaimEnded}
		default:
			out[id] = runs.ClaimRenewal{State: runs.ClaimLost} // released
		}
	}
	return out, nil
}

// Cancel implements runs.Queue.
func (q *Queue) Cancel(ctx context.Context, threadID, runID, action string) (runs.Record, bool, error) {
	var rec runs.Record
	ended := false
	err := q.inTx(ctx, func(tx pgx.Tx) error {
		if err := threadLock(tx, ctx, threadID); err != nil {
			return err
		}
		var err error
		rec, err = scanRecord(tx.QueryRow(ctx, `SELECT `+recordCols+` FROM runs WHERE run_id = $1 AND thread_id = $2 FOR UPDATE`, runID, threadID))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("run %s on thread %q: %w", runID, threadID, runs.ErrNotFound)
		}
		if err != nil {
			return err
		}
		switch rec.Status {
		case runs.StatusPending:
			ended = true
			rec.Status, rec.CancelAction = runs.StatusInterrupted, action
			if action == runs.Rollback {
				_, err = tx.Exec(ctx, `DELETE FROM runs WHERE run_id = $1`, runID)
			} else {
				_, err = tx.Exec(ctx, `UPDATE runs SET status = 'interrupted', cancel_action = $2, updated_at = now() WHERE run_id = $1`, runID, action)
			}
			if err == nil {
				_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", q.channel, "w")
			}
			return err
		case runs.StatusRunning:
			if rec.CancelAction == "" {
				rec.CancelAction = action
				if _, err := tx.Exec(ctx, `UPDATE runs SET cancel_action = $2 WHERE run_id = $1`, runID, action); err != nil {
					return err
				}
			}
			_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", q.channel, "c|"+runID+"|"+rec.CancelAction)
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, runs.ErrNotFound) {
			return runs.Record{}, false, err
		}
		return runs.Record{}, false, fmt.Errorf("cancel run %s: %w", runID, err)
	}
	return rec, ended, nil
}

// Load implements runs.Queue.
func (q *Queue) Load(ctx context.Context, threadID, runID string) (runs.Record, error) {
	rec, err := scanRecord(q.pool.QueryRow(ctx, `SELECT `+recordCols+` FROM runs WHERE run_id = $1 AND ($2 = '' OR thread_id = $2)`, runID, threadID))
	if errors.Is(err, pgx.ErrNoRows) {
		return runs.Record{}, fmt.Errorf("run %s on thread %q: %w", runID, threadID, runs.ErrNotFound)
	}
	if err != nil {
		return runs.Record{}, fmt.Errorf("load run %s: %w", runID, err)
	}
	return rec, nil
}

func (q *Queue) query(ctx context.Context, what, sql string, args ...any) ([]runs.Record, error) {
	rows, err := q.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (runs.Record, error) { return scanRecord(r) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// List implements runs.Queue.
func (q *Queue) List(ctx context.Context, threadID string, limit, offset int, status string) ([]runs.Record, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	return q.query(ctx, fmt.Sprintf("list runs of thread %q", threadID), `SELECT `+recordCols+` FROM runs
WHERE thread_id = $1 AND run_id NOT LIKE 'hold:%' AND ($2 = '' OR status = $2) ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4`, threadID, status, lim, offset)
}

// Active implements runs.Queue.
func (q *Queue) Active(ctx context.Context, threadID string) (runs.Record, bool, error) {
	recs, err := q.query(ctx, fmt.Sprintf("active run of thread %q", threadID), `SELECT `+recordCols+` FROM runs
WHERE thread_id = $1 AND status IN ('pending', 'running') AND run_id NOT LIKE 'hold:%' AND start_at <= now()
ORDER BY status = 'running' DESC, start_at, seq LIMIT 1`, threadID)
	if err != nil || len(recs) == 0 {
		return runs.Record{}, false, err
	}
	return recs[0], true, nil
}

// Unfinished implements runs.Queue.
func (q *Queue) Unfinished(ctx context.Context) ([]runs.Record, error) {
	return q.query(ctx, "unfinished runs", `SELECT `+recordCols+` FROM runs WHERE status IN ('pending', 'running') AND run_id NOT LIKE 'hold:%' ORDER BY seq`)
}

// Delete implements runs.Queue.
func (q *Queue) Delete(ctx context.Context, threadID, runID string) error {
	// A run that has not started (queued, or waiting for its start time)
	// is deleted too, as on LangGraph's Agent Server; the replicas are
	// woken, since a run queued behind it may start now.
	var deleted, current *string
	err := q.pool.QueryRow(ctx, `WITH d AS (DELETE FROM runs WHERE run_id = $1 AND thread_id = $2 AND status <> 'running' AND run_id NOT LIKE 'hold:%' RETURNING status),
n AS (SELECT pg_notify($3, 'w') FROM d WHERE d.status = 'pending')
SELECT (SELECT status FROM d), (SELECT status FROM runs WHERE run_id = $1 AND thread_id = $2), (SELECT count(*) FROM n)`,
		runID, threadID, q.channel).Scan(&deleted, &current, nil)
	switch {
	case err != nil:
		return fmt.Errorf("delete run %s: %w", runID, err)
	case deleted != nil:
	case current == nil:
		return fmt.Errorf("run %s on thread %q: %w", runID, threadID, runs.ErrNotFound)
	default:
		// Running (or claimed while this statement waited for it).
		return fmt.Errorf("run %s on thread %q: %w; cancel it first", runID, threadID, runs.ErrActive)
	}
	_, err = q.pool.Exec(ctx, `DELETE FROM run_frames WHERE run_id = $1`, runID)
	if err != nil {
		return fmt.Errorf("delete run %s: %w", runID, err)
	}
	return nil
}

// DeleteThread implements runs.Queue.
func (q *Queue) DeleteThread(ctx context.Context, threadID string) error {
	_, err := q.pool.Exec(ctx, `WITH d AS (DELETE FROM runs WHERE thread_id = $1 RETURNING run_id)
DELETE FROM run_frames WHERE run_id IN (SELECT run_id FROM d)`, threadID)
	if err != nil {
		return fmt.Errorf("delete runs of thread %q: %w", threadID, err)
	}
	return nil
}

// Publish implements runs.Queue: the frames and the notification in one
// round trip.
func (q *Queue) Publish(ctx context.Context, runID string, entries []runs.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	seqs := make([]int32, len(entries))
	modes := make([]string, len(entries))
	events := make([]string, len(entries))
	data := make([][]byte, len(entries))
	for i, e := range entries {
		seqs[i], modes[i], events[i], data[i] = int32(e.Seq), e.Mode, e.Frame.Event, e.Frame.Data
		if data[i] == nil {
			data[i] = []byte{}
		}
	}
	// With the fence of the run's claim (see Fence), only the frames of
	// that claim are stored: those of an execution whose run another replica
	// claimed since, or ended orphaned (FailOrphans), are dropped, even once
	// the run has ended.
	var gen *int64
	if f, ok := fenceOf(ctx, runID); ok {
		gen = &f.Token
	}
	b := &pgx.Batch{}
	// Only the replica executing the run stores its frames, or, once the run
	// has ended and has no owner, whoever ended it stores its end: a replica
	// that lost the run (it released it at shutdown, or its lease expired)
	// cannot interleave late frames with those of the replica that took it
	// over. The run's row is locked in share mode, so a takeover waits for
	// (or skips) a publication in progress.
	b.Queue(`WITH o AS (SELECT 1 FROM runs WHERE run_id = $1
	AND (owner = $6 OR (owner IS NULL AND status NOT IN ('pending', 'running'))) AND ($7::bigint IS NULL OR lease_gen = $7) FOR SHARE)
INSERT INTO run_frames (run_id, seq, mode, event, data)
SELECT $1, s, m, e, d FROM o, unnest($2::int[], $3::text[], $4::text[], $5::bytea[]) AS f(s, m, e, d)
ON CONFLICT DO NOTHING`, runID, seqs, modes, events, data, q.owner, gen)
	q.notify(b, "f|"+runID)
	if err := q.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("publish frames of run %s: %w", runID, err)
	}
	return nil
}

// Frames implements runs.Queue.
func (q *Queue) Frames(ctx context.Context, runID string, after int) ([]runs.Entry, error) {
	rows, err := q.pool.Query(ctx, `SELECT seq, mode, event, data FROM run_frames WHERE run_id = $1 AND seq > $2 ORDER BY seq`, runID, after)
	if err != nil {
		return nil, fmt.Errorf("frames of run %s: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (runs.Entry, error) {
		var e runs.Entry
		var seq int32
		err := r.Scan(&seq, &e.Mode, &e.Frame.Event, &e.Frame.Data)
		e.Seq = int(seq)
		e.Frame.ID = fmt.Sprint(seq)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("frames of run %s: %w", runID, err)
	}
	return out, nil
}

// PruneFrames deletes the frames of runs that ended before cutoff ago, and
// the holds of replicas that died holding a thread.
func (q *Queue) PruneFrames(ctx context.Context, age time.Duration) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM run_frames f WHERE f.created_at < now() - make_interval(secs => $1)
AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = f.run_id AND r.status IN ('pending', 'running'))`, age.Seconds())
	b.Queue(`WITH d AS (DELETE FROM runs WHERE run_id LIKE 'hold:%' AND lease_until < now() RETURNING 1)
SELECT pg_notify($1, 'w') FROM d LIMIT 1`, q.channel)
	if err := q.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("prune run frames: %w", err)
	}
	return nil
}

// Hold implements runs.Queue: a row in runs named hold:ID, running, with
// this replica's lease, so that the index of running runs keeps every other
// run of the thread waiting; it is not a run (lists and claims skip it).
// The lease is renewed at a quarter of its length until the release, so a
// hold lasts as long as the change made under it (a state update, a copy of
// a long history) and ends with its replica: only a hold whose replica died
// or was paused past its lease expires, and is then deleted (PruneFrames).
// The hold's row is its fence (run hold:ID, this replica, generation 0):
// the writes made with held fail with checkpoint.ErrFenced once it is gone.
func (q *Queue) Hold(ctx context.Context, threadID string) (context.Context, func(), error) {
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, nil, fmt.Errorf("hold thread %q: %w", threadID, err)
	}
	holdID := "hold:" + hex.EncodeToString(id)
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock(hashtextextended('graphctl:thread:' || current_schema() || ':' || $1, 0))`, threadID)
	held := false
	b.Queue(`INSERT INTO runs (run_id, thread_id, status, owner, lease_until, created_at, updated_at, record)
SELECT $1, $2, 'running', $3, now() + make_interval(secs => $4), now(), now(), '{}'
WHERE NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = $2 AND status IN ('pending', 'running') AND start_at <= now())`,
		holdID, threadID, q.owner, q.lease.Seconds()).Exec(func(tag pgconn.CommandTag) error {
		held = tag.RowsAffected() == 1
		return nil
	})
	if err := q.pool.SendBatch(ctx, b).Close(); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			held = false
		} else {
			return nil, nil, fmt.Errorf("hold thread %q: %w", threadID, err)
		}
	}
	if !held {
		return nil, nil, fmt.Errorf("thread %q: a run is active: %w", threadID, runs.ErrBusy)
	}
	stop, renewed := make(chan struct{}), make(chan struct{})
	go q.renewHold(holdID, threadID, stop, renewed)
	var once sync.Once
	return checkpoint.WithFence(ctx, checkpoint.Fence{RunID: holdID, Owner: q.owner}), func() {
		once.Do(func() {
			close(stop)
			<-renewed
			rb := &pgx.Batch{}
			rb.Queue(`DELETE FROM runs WHERE run_id = $1`, holdID)
			rb.Queue(`SELECT pg_notify($1, 'w') WHERE EXISTS (SELECT 1 FROM runs WHERE thread_id = $2 AND status = 'pending')`, q.channel, threadID)
			if err := q.pool.SendBatch(context.Background(), rb).Close(); err != nil {
				q.log.Error("release a thread hold; it ends when its lease expires", "thread_id", threadID, "error", err)
			}
		})
	}, nil
}

// renewHold renews the lease of thread hold holdID every quarter of the
// lease until stop is closed, then closes done. A renewal that finds the
// hold gone (it expired while this replica was paused and was deleted) is
// logged, and renewing stops: the thread is no longer held.
func (q *Queue) renewHold(holdID, threadID string, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(q.lease / 4)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), q.lease)
		tag, err := q.pool.Exec(ctx, `UPDATE runs SET lease_until = now() + make_interval(secs => $3) WHERE run_id = $1 AND owner = $2`,
			holdID, q.owner, q.lease.Seconds())
		cancel()
		switch {
		case err != nil:
			q.log.Warn("renew a thread hold", "thread_id", threadID, "error", err)
		case tag.RowsAffected() == 0:
			q.log.Error("thread hold lost: its lease expired before it was renewed; the thread is no longer held", "thread_id", threadID)
			return
		}
	}
}

// FailOrphans implements runs.Queue. It fences each run it ends by the
// claim it found: a run whose row a claim or a heartbeat is changing (a
// takeover, a renewal under way) is skipped, not waited for; one whose claim
// changed since it was read is left alone; and the generation of each run it
// ends is incremented, so that the writes of its last claim — a replica that
// was only paused, not dead — are refused from then on, its stream frames
// included.
func (q *Queue) FailOrphans(ctx context.Context, message string) (int, error) {
	tag, err := q.pool.Exec(ctx, `WITH o AS (
	SELECT run_id, lease_gen FROM runs
	WHERE status = 'running' AND run_id NOT LIKE 'hold:%' AND (lease_until IS NULL OR lease_until < now())
	FOR UPDATE SKIP LOCKED)
UPDATE runs SET status = 'error', owner = NULL, lease_until = NULL, updated_at = now(), lease_gen = runs.lease_gen + 1,
	record = jsonb_set(jsonb_set(record, '{status}', '"error"'), '{error}', to_jsonb($1::text))
FROM o WHERE runs.run_id = o.run_id AND runs.lease_gen = o.lease_gen AND runs.status = 'running'`, message)
	if err != nil {
		return 0, fmt.Errorf("fail orphaned runs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// FireCron reports whether this replica is the one to fire a cron at due:
// the first to record the firing.
func (q *Queue) FireCron(ctx context.Context, cronID string, due time.Time) (bool, error) {
	tag, err := q.pool.Exec(ctx, `INSERT INTO cron_fires (cron_id, due) VALUES ($1, $2) ON CONFLICT DO NOTHING`, cronID, due)
	if err != nil {
		return false, fmt.Errorf("cron %s: %w", cronID, err)
	}
	return tag.RowsAffected() == 1, nil
}
