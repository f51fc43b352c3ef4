package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/graphctl/graphctl/runtime/node"
)

// lifecycle records which nodes of an engine were closed, so that each
// node.Closer is closed once however Preflight and Close interleave.
type lifecycle struct {
	mu     sync.Mutex
	closed map[string]bool
}

// Preflight prepares every node that needs run-time configuration (a model, a
// tool server), so that a missing setting is reported before a run starts
// rather than in the middle of one. When a node's Prepare fails, the nodes
// prepared so far and the failing one are closed (node.Closer) and their
// errors joined to the returned one.
func (e *Engine) Preflight(ctx context.Context) error {
	for i, name := range e.graph.NodeOrder {
		if p, ok := e.impl(e.graph.Nodes[name]).(node.Preparer); ok {
			if err := p.Prepare(ctx, e.services); err != nil {
				return errors.Join(fmt.Errorf("node %q: %w", name, err), e.closeNodes(ctx, e.graph.NodeOrder[:i+1]))
			}
		}
	}
	return nil
}

// closeNodes closes the named nodes that implement node.Closer and have not
// been closed yet, in order, then the nodes of every subgraph when names
// covers the whole graph; it joins their errors.
func (e *Engine) closeNodes(ctx context.Context, names []string) error {
	var errs []error
	for _, name := range names {
		c, ok := e.impl(e.graph.Nodes[name]).(node.Closer)
		if !ok || !e.closed.mark(name) {
			continue
		}
		if err := c.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close node %q: %w", name, err))
		}
	}
	if len(names) == len(e.graph.NodeOrder) {
		for _, name := range e.graph.NodeOrder {
			if child := e.children[name]; child != nil {
				if err := child.closeNodes(ctx, child.graph.NodeOrder); err != nil {
					errs = append(errs, fmt.Errorf("subgraph node %q: %w", name, err))
				}
			}
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
