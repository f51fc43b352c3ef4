// Package postgres stores checkpoints and long-term memory in PostgreSQL
// (15 or newer), so that several graphctl processes can share one database:
// (*DB).Checkpointer implements checkpoint.Checkpointer and (*DB).Store
// implements store.Store, with the same behaviour as the Badger backend (both
// pass the suites in checkpoint/checkpointtest and store/storetest).
//
// # Schema
//
// Tables live in one PostgreSQL schema (Options.Schema, "public" by default)
// and are created and upgraded by the versioned migrations embedded in the
// binary (migrations/*.sql), applied with goose under a session advisory lock,
// so replicas starting together migrate once.
//
//	threads        thread summary: latest checkpoint id, step, graph, updated time
//	checkpoints    (thread_id, id) → checkpoint JSON
//	blobs          (thread_id, field, version) → base version (0 = full value) and data
//	pending_writes (thread_id, checkpoint_id, task_id) → pending write JSON
//	snapshots      (thread_id, field) → a field's full value at one version
//	store_items    (namespace text[], key) → value JSON, times, TTL, indexed terms
//	runs           run records of serve, shared by its replicas (see server/runs/pgqueue)
//	run_frames     stream frames of runs, for clients on other replicas
//	cron_fires     which replica fired a cron at a due time
//
// # Checkpoints
//
// The checkpointer is core.Checkpointer (package checkpoint/core, which
// decides what is stored and when; see docs/storage.md) over this package's
// driver, which stores the records in the tables above. The driver queues
// writes and sends them together: a transaction that only writes, as a Put
// and a PutWrites are, is one batch sent outside an explicit transaction,
// which the server runs as one implicit transaction in one round trip. A
// Put's batch locks the thread's summary row, checks that every version the
// checkpoint names has a blob (graphctl_require_blobs, which raises an
// error, so a failed check rolls the whole batch back), writes the new blobs
// and the checkpoint, discards the parent's pending writes and updates the
// summary. A super-step of one task costs one round trip, its checkpoint (a
// step of several tasks also saves each task's pending write). A transaction that reads (a rollback, a prune, a fork)
// begins at its first read and holds the thread's row lock. Every field's
// value is rebuilt by one recursive query that follows Base links to the
// nearest full blob or snapshot, for all fields at once.
//
// A write made for a run (its context carries a checkpoint.Fence, see
// server/runs/pgqueue) begins with graphctl_fence, which fails the
// transaction with checkpoint.ErrFenced once another replica has claimed the
// run; the store's writes do the same.
//
// # Store
//
// Search ranks with the same BM25 code as the Badger store (store.RankIn), in
// Go, so both backends order results alike. A text query without a filter
// reads only the items sharing a term with it, through a GIN index on a
// tsvector of each item's indexed terms (store_items.tsv, exactly the
// store.Tokenize terms), and counts the items and terms under the prefix in
// the same round trip, so the scores equal those of a full scan. A query
// with a filter (evaluated in Go) scans the live items under the prefix.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/core"
	"github.com/graphctl/graphctl/runtime/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// URLEnv names the environment variable holding the connection URL that
// graphctl commands use when --postgres is not given.
const URLEnv = "GRAPHCTL_POSTGRES_URL"

// Options configure Open.
type Options struct {
	// Schema is the PostgreSQL schema that holds graphctl's tables; it is
	// created if missing. Empty means the URL's search_path parameter
	// (postgres://host/db?search_path=graphctl), else "public".
	Schema string
	// Now is the clock for timestamps and TTLs; nil means time.Now.
	Now func() time.Time
	// Tracer, when set, sees every query and batch sent on every
	// connection (pgx's tracing hook: for logging, tracing or counting
	// round trips).
	Tracer pgx.QueryTracer
}

// DB is an open PostgreSQL database.
type DB struct {
	pool      *pgxpool.Pool
	now       func() time.Time
	wallClock bool
	schema    string
	trips     *tripCounter
}

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string), creates the schema and applies pending migrations.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse connection URL: %w", err)
	}
	schema := opts.Schema
	if schema == "" {
		schema = cfg.ConnConfig.RuntimeParams["search_path"]
	}
	if schema == "" {
		schema = "public"
	}
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("postgres: schema %q: want one schema name of lower-case letters, digits and _", schema)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	trips := &tripCounter{}
	cfg.ConnConfig.Tracer = trips
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = multitracer.New(trips, opts.Tracer)
	}
	if err := createSchema(ctx, cfg.ConnConfig, schema); err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	d := &DB{pool: pool, now: opts.Now, wallClock: opts.Now == nil, schema: schema, trips: trips}
	if d.now == nil {
		d.now = time.Now
	}
	return d, nil
}

func createSchema(ctx context.Context, cc *pgx.ConnConfig, schema string) error {
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		var exists bool
		if qerr := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); qerr == nil && exists {
			return nil // created concurrently by another process
		}
		return fmt.Errorf("postgres: create schema %s: %w", schema, err)
	}
	return nil
}

// migrate applies the embedded migrations under a session advisory lock.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("postgres: migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, sub, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("postgres: apply migrations: %w", err)
	}
	return nil
}

// SchemaVersion returns the newest applied migration.
func (d *DB) SchemaVersion(ctx context.Context) (int64, error) {
	sqlDB := stdlib.OpenDBFromPool(d.pool)
	defer sqlDB.Close()
	return schemaVersion(ctx, sqlDB)
}

func schemaVersion(ctx context.Context, db *sql.DB) (int64, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return 0, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub)
	if err != nil {
		return 0, err
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// Pool returns the database's connection pool, for the parts of graphctl
// that keep their own tables in the schema (the shared run queue).
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

// Schema returns the PostgreSQL schema that holds graphctl's tables.
func (d *DB) Schema() string { return d.schema }

// RoundTrips returns how many statements and batches the database's pool has
// sent so far, each one round trip to the server (a BEGIN or a COMMIT counts
// as one): what the benchmarks report per super-step.
func (d *DB) RoundTrips() int64 { return d.trips.n.Load() }

// tripCounter counts round trips as a pgx tracer.
type tripCounter struct{ n atomic.Int64 }

func (t *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.n.Add(1)
	return ctx
}

func (t *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	t.n.Add(1)
	return ctx
}

func (t *tripCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t *tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Close closes every connection.
func (d *DB) Close() error {
	d.pool.Close()
	return nil
}

// Checkpointer returns the database's checkpoint.Checkpointer.
func (d *DB) Checkpointer() checkpoint.Checkpointer {
	return core.New(driver{d}, core.Options{Now: d.now})
}

// Store returns the database's store.Store.
func (d *DB) Store() store.Store { return &Store{d: d} }

// StoreWith returns the database's store.Store that embeds the items it puts
// with e and ranks text queries by cosine similarity (see store.RankVectors).
func (d *DB) StoreWith(e store.Embedder) store.Store { return &Store{d: d, emb: e} }

// inTx runs fn in a transaction, committing when it returns nil.
func (d *DB) inTx(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	tx, err := d.pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		rerr := tx.Rollback(context.WithoutCancel(ctx))
		if rerr != nil && !errors.Is(rerr, pgx.ErrTxClosed) {
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	return tx.Commit(ctx)
}

var readOnly = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// ErrLocked is returned by Lock when another process holds the lock.
var ErrLocked = errors.New("postgres: lock held by another process")

// Lock takes a session-level advisory lock named name in the database's
// schema, on a connection of its own, and returns the function that releases
// it. It fails with ErrLocked when another session holds it; the lock is also
// released when the process dies and its connection closes.
func (d *DB) Lock(ctx context.Context, name string) (release func(), err error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: lock %s: %w", name, err)
	}
	var got bool
	key := "graphctl:" + name
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtextextended(current_schema() || ':' || $1, 0))", key).Scan(&got); err != nil {
		conn.Release()
		return nil, fmt.Errorf("postgres: lock %s: %w", name, err)
	}
	if !got {
		conn.Release()
		return nil, fmt.Errorf("%w: %s", ErrLocked, name)
	}
	return func() {
		ctx := context.Background()
		_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtextextended(current_schema() || ':' || $1, 0))", key)
		conn.Release()
	}, nil
}
