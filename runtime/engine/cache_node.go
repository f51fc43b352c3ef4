package engine

import (
	"context"
	"time"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/nodecache"
)

// CacheHit is the type of the event sent when a node with a cache policy
// returns a stored update instead of running.
const CacheHit = nodecache.HitEvent

// nodeCache is n's node cache in this engine's store, announcing hits on
// emit; nil when the engine has no store.
func (e *Engine) nodeCache(n *compile.Node, emit event.Sink) node.Cache {
	if e.services.Store == nil {
		return nil
	}
	var ttl time.Duration
	if n.Cache != nil {
		ttl = n.Cache.TTL
	}
	return nodecache.New(e.services.Store, nodecache.Node{
		Graph: e.graph.Spec.Name, Name: n.Name, Type: n.Spec.Type, Config: n.Spec.Config,
	}, ttl, emit)
}

// runNodeCached runs a node through its cache policy (cache: {key, ttl}): when
// the run's store holds an update for an equal key, stored by the same node
// with the same type and config, that update is returned without running the
// node and a cache_hit event is sent; otherwise the node runs and a
// successful update is stored. Nodes without a policy, and runs without a
// store, run the node as always.
func (e *Engine) runNodeCached(ctx context.Context, n *compile.Node, impl node.Node, in *node.Input) (node.Update, error) {
	if n.Cache == nil || in.Cache == nil {
		return runNode(ctx, n, impl, in)
	}
	key, err := n.Cache.Key.Eval(in.Scope)
	if err != nil {
		return nil, node.Errorf("cache_key", "node %q: cache key: %w", n.Name, err)
	}
	upd, hit, err := in.Cache.Lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	if hit {
		return upd, nil
	}
	upd, err = runNode(ctx, n, impl, in)
	if err != nil {
		return upd, err
	}
	if err := in.Cache.Store(ctx, key, upd); err != nil {
		// The node has run: its update stands, only the next run misses.
		in.Emit(event.Event{Type: nodecache.ErrorEvent, Payload: map[string]any{"node": n.Name, "message": err.Error()}})
	}
	return upd, nil
}
