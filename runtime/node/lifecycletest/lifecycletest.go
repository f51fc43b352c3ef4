// Package lifecycletest registers a node type for tests of node lifecycles:
// "lifecycle_probe" counts how often each of its nodes is prepared and
// closed, and can be told to fail its Prepare. Each node names a probe in its
// config; tests read the probe's counts with Counts.
package lifecycletest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/graphctl/graphctl/runtime/node"
)

// TypeName is the registered node type.
const TypeName = "lifecycle_probe"

// ErrClosed is what a probe's Run returns after its Close.
var ErrClosed = errors.New("lifecycle_probe: node is closed")

// probes counts the calls per probe name; it is the registry's companion.
var probes = struct {
	sync.Mutex
	m map[string]*Count
}{m: map[string]*Count{}}

// Count is how often a probe's nodes were prepared, closed and run.
type Count struct {
	Prepares, Closes, Runs int
}

// Counts returns the counts of the named probe (zero when it never ran).
func Counts(probe string) Count {
	probes.Lock()
	defer probes.Unlock()
	if c := probes.m[probe]; c != nil {
		return *c
	}
	return Count{}
}

func count(probe string, f func(*Count)) {
	probes.Lock()
	defer probes.Unlock()
	c := probes.m[probe]
	if c == nil {
		c = &Count{}
		probes.m[probe] = c
	}
	f(c)
}

type config struct {
	Probe       string `json:"probe"`
	FailPrepare bool   `json:"fail_prepare"`
}

type probeNode struct {
	cfg    config
	mu     sync.Mutex
	closed bool
}

// Prepare implements node.Preparer.
func (n *probeNode) Prepare(context.Context, *node.Services) error {
	count(n.cfg.Probe, func(c *Count) { c.Prepares++ })
	if n.cfg.FailPrepare {
		return fmt.Errorf("probe %q is configured to fail its Prepare", n.cfg.Probe)
	}
	return nil
}

// Close implements node.Closer.
func (n *probeNode) Close(context.Context) error {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	count(n.cfg.Probe, func(c *Count) { c.Closes++ })
	return nil
}

// Run implements node.Node; it fails after Close.
func (n *probeNode) Run(context.Context, *node.Input) (node.Update, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	count(n.cfg.Probe, func(c *Count) { c.Runs++ })
	return node.Update{}, nil
}

func init() {
	node.MustRegister(node.Type{
		Name:        TypeName,
		Description: "Counts its Prepare, Close and Run calls (tests of node lifecycles).",
		Config:      `{probe: string, fail_prepare?: bool}`,
		New: func(b node.Builder) (node.Node, error) {
			n := &probeNode{}
			if err := b.Decode(&n.cfg); err != nil {
				return nil, err
			}
			return n, nil
		},
	})
}
