package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/graphctl/graphctl/runtime/node"
)

// lifecycle records whether an engine's nodes were prepared (and with what
// outcome) and which were closed, so that each node.Preparer is prepared once
// however Preflight and Run interleave, and each node.Closer closed once
// however Preflight and Close interleave.
type lifecycle struct {
	// prepared is set once Prepare ran for every node (or one failed);
	// prepareErr is then its outcome. prepareMu serializes preparation.
	prepared   atomic.Bool
	prepareMu  sync.Mutex
	prepareErr error

	mu     sync.Mutex
	closed map[string]bool
}

// Preflight prepares every node that needs run-time configuration (a model, a
// tool server), those inside subgraph nodes too, so that a missing setting is
// reported before a run starts rather than in the middle of one. Nodes are
// prepared once per engine, by Preflight or else by the first Run, which
// fails with the error of a failed preparation; a later call returns the
// first outcome. When a node's Prepare fails, the nodes prepared so far and
// the failing one are closed (node.Closer) and their errors joined to the
// returned one. Later runs still go on, as graphctl serve keeps serving such
// a graph: a closed node fails its runs with its own error, and a node that
// could not reach its server tries again when it runs.
func (e *Engine) Preflight(ctx context.Context) error {
	if e.life.prepared.Load() {
		return e.life.prepareErr
	}
	e.life.prepareMu.Lock()
	defer e.life.prepareMu.Unlock()
	if !e.life.prepared.Load() {
		e.life.prepareErr = e.prepareNodes(ctx)
		e.life.prepared.Store(true)
	}
	return e.life.prepareErr
}

// prepareNodes prepares the graph's nodes in order; a subgraph node's turn
// prepares the nodes of its child graph.
func (e *Engine) prepareNodes(ctx context.Context) error {
	for i, name := range e.graph.NodeOrder {
		var err error
		if child := e.children[name]; child != nil {
			if err = child.Preflight(ctx); err != nil {
				err = fmt.Errorf("subgraph node %q: %w", name, err)
			}
		} else if p, ok := e.impl(e.graph.Nodes[name]).(node.Preparer); ok {
			if err = p.Prepare(ctx, e.services); err != nil {
				err = fmt.Errorf("node %q: %w", name, err)
			}
		}
		if err != nil {
			return errors.Join(err, e.closeNodes(ctx, e.graph.NodeOrder[:i+1]))
		}
	}
	return nil
}

// closeNodes closes the named nodes that implement node.Closer and have not
// been closed yet, in order, and the nodes of the child graph of each named
// subgraph node; it joins their errors.
func (e *Engine) closeNodes(ctx context.Context, names []string) error {
	var errs []error
	for _, name := range names {
		if child := e.children[name]; child != nil {
			if err := child.closeNodes(ctx, child.graph.NodeOrder); err != nil {
				errs = append(errs, fmt.Errorf("subgraph node %q: %w", name, err))
			}
		}
		c, ok := e.impl(e.graph.Nodes[name]).(node.Closer)
		if !ok || !e.life.mark(name) {
			continue
		}
		if err := c.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close node %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// mark records that name is closed; it reports false when it already was.
func (l *lifecycle) mark(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed[name] {
		return false
	}
	if l.closed == nil {
		l.closed = map[string]bool{}
	}
	l.closed[name] = true
	return true
}
