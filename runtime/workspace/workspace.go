// Package workspace ties a data directory to graphs: it opens the Badger
// database that holds a project's checkpoints and long-term memory, and builds
// engines for compiled graphs over it. The CLI and the server share it.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
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

// Workspace is an open data directory.
type Workspace struct {
	Dir string
	db  *badger.DB
}

// Open opens (creating if needed) the data directory.
func Open(dir string) (*Workspace, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w", dir, err)
	}
	db, err := badger.Open(dir, badger.Options{})
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

// Engine builds an engine for g over the workspace's storage. opts.Store is
// set to the workspace's store when empty.
func (w *Workspace) Engine(g *compile.Graph, opts engine.Options) *engine.Engine {
	if opts.Store == nil {
		opts.Store = w.Store()
	}
	return engine.New(g, w.Checkpointer(), opts)
}

// Close closes the database.
func (w *Workspace) Close() error {
	if err := w.db.Close(); err != nil {
		return fmt.Errorf("close data dir %s: %w", w.Dir, err)
	}
	return nil
}
