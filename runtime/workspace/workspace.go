// Package workspace ties storage to graphs: it opens the database that holds a
// project's checkpoints and long-term memory — the embedded Badger database of
// a data directory, or a PostgreSQL server shared by several processes — and
// builds engines for compiled graphs over it. The CLI and the server share it.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/store"
)

// DataDirEnv names the environment variable that sets the default data directory.
const DataDirEnv = "GRAPHCTL_DATA_DIR"

// DefaultDataDir returns $GRAPHCTL_DATA_DIR, or ".graphctl" in the current directory.
func DefaultDataDir() string {
	if d := os.Getenv(DataDirEnv); d != "" {
		return d
	}
	return ".graphctl"
}

// Workspace is open storage: a data directory or a PostgreSQL database.
type Workspace struct {
	// Dir is the data directory, or a description of the PostgreSQL database.
	Dir string
	db  backend
}

// backend is what a storage backend gives a workspace.
type backend interface {
	Checkpointer() checkpoint.Checkpointer
	Store() store.Store
	StoreWith(store.Embedder) store.Store
	Close() error
}

// Config chooses a workspace's storage.
type Config struct {
	// Dir is the Badger data directory; empty means DefaultDataDir().
	Dir string
	// Postgres is a PostgreSQL connection URL; when set (or when
	// $GRAPHCTL_POSTGRES_URL is and Dir is empty), it is used instead of Dir.
	Postgres string
	// PostgresSchema is the schema holding graphctl's tables ("public" if empty).
	PostgresSchema string
	// Durability is how the Badger data directory writes reach the disk:
	// "fsync" or "batch" (the default); see badger.Durability.
	Durability string
}

// OpenConfig opens the storage cfg names: PostgreSQL when a URL is given
// (in cfg or, when no data directory is given either, in $GRAPHCTL_POSTGRES_URL),
// otherwise the Badger data directory.
func OpenConfig(ctx context.Context, cfg Config) (*Workspace, error) {
	url := cfg.Postgres
	if url == "" && cfg.Dir == "" {
		url = os.Getenv(postgres.URLEnv)
	}
	if url == "" {
		dir := cfg.Dir
		if dir == "" {
			dir = DefaultDataDir()
		}
		d, err := badger.ParseDurability(cfg.Durability)
		if err != nil {
			return nil, err
		}
		minFree, err := minFreeFromEnv()
		if err != nil {
			return nil, err
		}
		return open(dir, badger.Options{Durability: d, MinFree: minFree})
	}
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: cfg.PostgresSchema})
	if err != nil {
		return nil, err
	}
	return &Workspace{Dir: "postgres", db: db}, nil
}

// MinFreeEnv names the environment variable with the free space, in MiB,
// kept on the data directory's disk (default 256; 0 turns the guard off).
const MinFreeEnv = "GRAPHCTL_MIN_FREE_MB"

func minFreeFromEnv() (int64, error) {
	s := os.Getenv(MinFreeEnv)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("$%s must be a number of MiB (0 turns the free-space guard off), got %q", MinFreeEnv, s)
	}
	if n == 0 {
		return -1, nil
	}
	return n << 20, nil
}

// Open opens (creating if needed) the data directory, with batch durability.
func Open(dir string) (*Workspace, error) {
	minFree, err := minFreeFromEnv()
	if err != nil {
		return nil, err
	}
	return open(dir, badger.Options{MinFree: minFree})
}

func open(dir string, opts badger.Options) (*Workspace, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w", dir, err)
	}
	db, err := badger.Open(dir, opts)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") || errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("data dir %s is in use by another graphctl process: %w", dir, err)
		}
		return nil, fmt.Errorf("open data dir %s: %w", dir, err)
	}
	return &Workspace{Dir: dir, db: db}, nil
}

// Checkpointer returns the workspace's checkpointer.
func (w *Workspace) Checkpointer() checkpoint.Checkpointer { return w.db.Checkpointer() }

// Store returns the workspace's long-term memory store.
func (w *Workspace) Store() store.Store { return w.db.Store() }

// StoreWith returns the workspace's store that embeds the items it puts with
// e and ranks text queries by cosine similarity with them.
func (w *Workspace) StoreWith(e store.Embedder) store.Store { return w.db.StoreWith(e) }

// Engine builds an engine for g over the workspace's storage. opts.Store is
// set to the workspace's store when empty.
func (w *Workspace) Engine(g *compile.Graph, opts engine.Options) *engine.Engine {
	if opts.Store == nil {
		opts.Store = w.Store()
	}
	return engine.New(g, w.Checkpointer(), opts)
}

// Postgres returns the workspace's PostgreSQL database, or nil when it is a
// Badger data directory (owned by one process; several serve replicas share
// a PostgreSQL database).
func (w *Workspace) Postgres() *postgres.DB {
	pg, _ := w.db.(*postgres.DB)
	return pg
}

// StorageCommits returns the number of write transactions and fsyncs the
// Badger database has made since it was opened (zeros for PostgreSQL).
func (w *Workspace) StorageCommits() (commits, syncs uint64) {
	if d, ok := w.db.(*badger.DB); ok {
		st := d.Stats()
		return st.Commits, st.Syncs
	}
	return 0, 0
}

// Close closes the database.
func (w *Workspace) Close() error {
	if err := w.db.Close(); err != nil {
		return fmt.Errorf("close storage %s: %w", w.Dir, err)
	}
	return nil
}
