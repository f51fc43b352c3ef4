package nodecache_test

import (
	"context"
	"errors"
	"testing"

	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/nodecache"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// An update is reused for an equal key by the same node with the same type
// and config, with a cache_hit event; another key, node, type or config
// misses, and a key with no JSON form is a cache_key node error.
func TestLookupAndStore(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	owner := nodecache.Node{Graph: "g", Name: "n", Type: "llm", Config: map[string]any{"system": "s"}}
	if err := nodecache.New(db.Store(), owner, 0, nil).Store(ctx, map[string]any{"b": 1, "a": "x"}, node.Update{"out": "stored"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		node    nodecache.Node
		key     any
		wantHit bool
	}{
		{"equal key, keys in another order", owner, map[string]any{"a": "x", "b": 1}, true},
		{"another key", owner, map[string]any{"a": "y", "b": 1}, false},
		{"another node", nodecache.Node{Graph: "g", Name: "m", Type: "llm", Config: owner.Config}, map[string]any{"a": "x", "b": 1}, false},
		{"another graph", nodecache.Node{Graph: "h", Name: "n", Type: "llm", Config: owner.Config}, map[string]any{"a": "x", "b": 1}, false},
		{"another config", nodecache.Node{Graph: "g", Name: "n", Type: "llm", Config: map[string]any{"system": "t"}}, map[string]any{"a": "x", "b": 1}, false},
		{"another type", nodecache.Node{Graph: "g", Name: "n", Type: "set", Config: owner.Config}, map[string]any{"a": "x", "b": 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits []event.Event
			c := nodecache.New(db.Store(), tt.node, 0, func(ev event.Event) { hits = append(hits, ev) })
			upd, hit, err := c.Lookup(ctx, tt.key)
			if err != nil {
				t.Fatal(err)
			}
			if hit != tt.wantHit || (len(hits) == 1) != tt.wantHit {
				t.Fatalf("hit %v with events %v, want %v", hit, hits, tt.wantHit)
			}
			if hit && (upd["out"] != "stored" || hits[0].Type != nodecache.HitEvent || hits[0].Payload["node"] != tt.node.Name) {
				t.Errorf("update %v, event %+v", upd, hits[0])
			}
		})
	}
	_, _, err = nodecache.New(db.Store(), owner, 0, nil).Lookup(ctx, func() {})
	var ne *node.Error
	if !errors.As(err, &ne) || ne.Code != "cache_key" {
		t.Errorf("a key with no JSON form: %v, want a cache_key node error", err)
	}
}
