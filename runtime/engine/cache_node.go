package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// CacheHit is the type of the event sent when a node with a cache policy
// returns a stored update instead of running.
const CacheHit = "cache_hit"

// nodeCacheNamespace is the store namespace of cached node updates, in the
// store's reserved "graphctl" namespace; graph and node name follow it.
var nodeCacheNamespace = []string{"graphctl", "node_cache"}

// runNodeCached runs a node through its cache policy (cache: {key, ttl}): when
// the run's store holds an update for an equal key, stored by the same node
// with the same type and config, that update is returned without running the
// node and a cache_hit event is sent; otherwise the node runs and a
// successful update is stored. Nodes without a policy, and runs without a
// store, run the node as always.
func (e *Engine) runNodeCached(ctx context.Context, n *compile.Node, impl node.Node, in *node.Input) (node.Update, error) {
	st := e.services.Store
	if n.Cache == nil || st == nil {
		return runNode(ctx, n, impl, in)
	}
	kv, err := n.Cache.Key.Eval(in.Scope)
	if err != nil {
		return nil, node.Errorf("cache_key", "node %q: cache key: %w", n.Name, err)
	}
	key, err := digest(kv)
	if err != nil {
		return nil, node.Errorf("cache_key", "node %q: cache key %q: %w", n.Name, n.Cache.Key.Source(), err)
	}
	spec, err := digest(map[string]any{"type": n.Spec.Type, "config": n.Spec.Config})
	if err != nil {
		return nil, fmt.Errorf("node %q: cache: %w", n.Name, err)
	}
	ns := append(slices.Clone(nodeCacheNamespace), e.graph.Spec.Name, n.Name)
	item, err := st.Get(ctx, ns, key)
	switch {
	case err == nil && item.Value["spec"] == spec:
		if upd, ok := item.Value["update"].(map[string]any); ok || item.Value["update"] == nil {
			in.Emit(event.Event{Type: CacheHit, Payload: map[string]any{
				"node": n.Name, "key": key, "stored_at": item.UpdatedAt,
			}})
			return node.Update(upd), nil
		}
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, node.Errorf("store_error", "node %q: read the node cache: %w", n.Name, err)
	}
	upd, err := runNode(ctx, n, impl, in)
	if err != nil {
		return upd, err
	}
	value := map[string]any{"spec": spec, "update": map[string]any(upd)}
	if err := st.Put(ctx, ns, key, value, store.PutOptions{TTL: n.Cache.TTL, Index: []string{}}); err != nil {
		// The node has run: its update stands, only the next run misses.
		in.Emit(event.Event{Type: "cache_error", Payload: map[string]any{
			"node": n.Name, "message": fmt.Sprintf("write the node cache: %v", err),
		}})
	}
	return upd, nil
}

// digest is the hex SHA-256 of v's JSON form; maps encode with sorted keys,
// so equal values have equal digests.
func digest(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
