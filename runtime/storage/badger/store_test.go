package badger_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/runtime/store/storetest"
)

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openDB(t, "", badger.Options{InMemory: true}).Store()
	})
	storetest.RunClock(t, func(t *testing.T, c *storetest.Clock) store.Store {
		return openDB(t, "", badger.Options{InMemory: true, Now: c.Now}).Store()
	})
}

func TestStoreOnDisk(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openDB(t, t.TempDir(), badger.Options{}).Store()
	})
}

func TestStoreEmbeddings(t *testing.T) {
	storetest.RunEmbedding(t, func(t *testing.T) func(store.Embedder) store.Store {
		db := openDB(t, t.TempDir(), badger.Options{})
		return func(e store.Embedder) store.Store {
			if e == nil {
				return db.Store()
			}
			return db.StoreWith(e)
		}
	})
}

// PutBatch stores every item as Put does, in one commit, and keeps the
// creation time of an item it replaces; a bad item stores none.
func TestStorePutBatch(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "", badger.Options{InMemory: true})
	st := db.Store()
	b, ok := st.(store.Batcher)
	if !ok {
		t.Fatal("the Badger store is not a store.Batcher")
	}
	if err := st.Put(ctx, []string{"a"}, "k1", map[string]any{"v": "old"}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	first, err := st.Get(ctx, []string{"a"}, "k1")
	if err != nil {
		t.Fatal(err)
	}
	before := db.Stats().Commits
	err = b.PutBatch(ctx, []store.BatchPut{
		{Namespace: []string{"a"}, Key: "k1", Value: map[string]any{"v": "new"}},
		{Namespace: []string{"b", "c"}, Key: "k2", Value: map[string]any{"n": 2}, Opts: store.PutOptions{Index: []string{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Stats().Commits - before; n != 1 {
		t.Errorf("a batch of two items took %d commits, want 1", n)
	}
	for _, tt := range []struct {
		ns   []string
		key  string
		want string
	}{{[]string{"a"}, "k1", `{"v":"new"}`}, {[]string{"b", "c"}, "k2", `{"n":2}`}} {
		it, err := st.Get(ctx, tt.ns, tt.key)
		if err != nil {
			t.Fatalf("%v/%s: %v", tt.ns, tt.key, err)
		}
		if got, _ := json.Marshal(it.Value); string(got) != tt.want {
			t.Errorf("%v/%s = %s, want %s", tt.ns, tt.key, got, tt.want)
		}
	}
	if again, _ := st.Get(ctx, []string{"a"}, "k1"); !again.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("replacing k1 changed its creation time from %v to %v", first.CreatedAt, again.CreatedAt)
	}
	err = b.PutBatch(ctx, []store.BatchPut{
		{Namespace: []string{"d"}, Key: "k3", Value: map[string]any{}},
		{Namespace: []string{"d"}, Key: "", Value: map[string]any{}},
	})
	if err == nil {
		t.Fatal("a batch with an empty key was stored")
	}
	if _, err := st.Get(ctx, []string{"d"}, "k3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an item of a refused batch: %v, want not found", err)
	}
}

// A batch deletes the items marked Delete and puts the others, in one commit.
func TestStorePutBatchDeletes(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "", badger.Options{InMemory: true})
	st := db.Store()
	for _, k := range []string{"gone", "kept"} {
		if err := st.Put(ctx, []string{"a"}, k, map[string]any{"v": k}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := db.Stats().Commits
	err := st.(store.Batcher).PutBatch(ctx, []store.BatchPut{
		{Namespace: []string{"a"}, Key: "new", Value: map[string]any{"v": "new"}},
		{Namespace: []string{"a"}, Key: "gone", Delete: true},
		{Namespace: []string{"a"}, Key: "never there", Delete: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Stats().Commits - before; n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	for key, want := range map[string]bool{"gone": false, "kept": true, "new": true, "never there": false} {
		_, err := st.Get(ctx, []string{"a"}, key)
		if got := err == nil; got != want || err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("item %q: %v, want present=%v", key, err, want)
		}
	}
}
