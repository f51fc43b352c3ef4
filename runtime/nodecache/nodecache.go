// Package nodecache is the node cache: node updates stored by key in the
// long-term store, per graph and node, and reused for an equal key. It is
// behind a node's `cache: {key, ttl}` policy, and node types that cache their
// own work (an image's summary by the image's hash) reach it through
// node.Input.Cache.
package nodecache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// HitEvent is the type of the event sent when a stored update is reused
// instead of running the node (payload: node, key, stored_at).
const HitEvent = "cache_hit"

// ErrorEvent is the type of the event sent when a node's update could not be
// stored (payload: node, message): the update stands, only a later run misses.
const ErrorEvent = "cache_error"

// Namespace is the store namespace of cached node updates, in the store's
// reserved "graphctl" namespace; graph and node name follow it.
var Namespace = []string{"graphctl", "node_cache"}

// Node identifies the node whose updates a Cache holds.
type Node struct {
	// Graph is the graph's name.
	Graph string
	// Name is the node's name in the graph.
	Name string
	// Type and Config are the node's type and config: an update stored by
	// another type or config is not reused.
	Type   string
	Config any
}

// Cache is one node's cache within one run. It implements node.Cache.
type Cache struct {
	st   store.Store
	node Node
	ttl  time.Duration
	emit event.Sink

	specOnce sync.Once
	spec     string
	specErr  error
}

var _ node.Cache = (*Cache)(nil)

// New returns n's cache in st. Updates are stored for ttl (zero: until
// removed); a hit is announced on emit (nil: not announced).
func New(st store.Store, n Node, ttl time.Duration, emit event.Sink) *Cache {
	if emit == nil {
		emit = event.Discard
	}
	return &Cache{st: st, node: n, ttl: ttl, emit: emit}
}

// specDigest is the digest of the node's type and config, computed once.
func (c *Cache) specDigest() (string, error) {
	c.specOnce.Do(func() {
		c.spec, c.specErr = Digest(map[string]any{"type": c.node.Type, "config": c.node.Config})
		if c.specErr != nil {
			c.specErr = fmt.Errorf("node %q: cache: %w", c.node.Name, c.specErr)
		}
	})
	return c.spec, c.specErr
}

// Lookup implements node.Cache: the update stored under key by this node
// with its present type and config, and a cache_hit event, or false. Errors
// are node errors coded cache_key (a key with no JSON form) or store_error.
func (c *Cache) Lookup(ctx context.Context, key any) (node.Update, bool, error) {
	digest, err := Digest(key)
	if err != nil {
		return nil, false, node.Errorf("cache_key", "node %q: cache key: %w", c.node.Name, err)
	}
	spec, err := c.specDigest()
	if err != nil {
		return nil, false, err
	}
	item, err := c.st.Get(ctx, c.namespace(), digest)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, node.Errorf("store_error", "node %q: read the node cache: %w", c.node.Name, err)
	}
	if item.Value["spec"] != spec {
		return nil, false, nil
	}
	upd, ok := item.Value["update"].(map[string]any)
	if !ok && item.Value["update"] != nil {
		return nil, false, nil
	}
	c.emit(event.Event{Type: HitEvent, Payload: map[string]any{
		"node": c.node.Name, "key": digest, "stored_at": item.UpdatedAt,
	}})
	return node.Update(upd), true, nil
}

// Store implements node.Cache: upd is stored under key.
func (c *Cache) Store(ctx context.Context, key any, upd node.Update) error {
	digest, err := Digest(key)
	if err != nil {
		return node.Errorf("cache_key", "node %q: cache key: %w", c.node.Name, err)
	}
	spec, err := c.specDigest()
	if err != nil {
		return err
	}
	value := map[string]any{"spec": spec, "update": map[string]any(upd)}
	if err := c.st.Put(ctx, c.namespace(), digest, value, store.PutOptions{TTL: c.ttl, Index: []string{}}); err != nil {
		return node.Errorf("store_error", "node %q: write the node cache: %w", c.node.Name, err)
	}
	return nil
}

func (c *Cache) namespace() []string {
	return append(slices.Clone(Namespace), c.node.Graph, c.node.Name)
}

// Digest is the hex SHA-256 of v's JSON form; maps encode with sorted keys,
// so equal values have equal digests.
func Digest(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
