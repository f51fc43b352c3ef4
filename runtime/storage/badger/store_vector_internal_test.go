package badger

import (
	"context"
	"errors"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/store"
)

// oneEmbedder embeds every text as the same vector.
type oneEmbedder struct{}

func (oneEmbedder) Name() string { return "one" }
func (oneEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}
func (oneEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return []float32{1, 0}, nil
}

// hasVector reports whether the item at ns/key has a stored embedding.
func hasVector(t *testing.T, d *DB, ns []string, key string) bool {
	t.Helper()
	err := d.view(func(txn *bdg.Txn) error {
		_, err := txn.Get(vectorKey(itemKey(ns, key)))
		return err
	})
	if err != nil && !errors.Is(err, bdg.ErrKeyNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// A put without an embedding deletes the embedding of the value it
// replaces: one written by a store with an embedder, and one under a record
// written before records said whether their item has one (flags 0).
func TestPutDropsTheEmbeddingOfTheReplacedValue(t *testing.T) {
	ctx := context.Background()
	d, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ns := []string{"docs"}
	if err := d.StoreWith(oneEmbedder{}).Put(ctx, ns, "a", map[string]any{"text": "hello"}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if !hasVector(t, d, ns, "a") {
		t.Fatal("the embedding store wrote no vector")
	}
	if err := d.Store().Put(ctx, ns, "a", map[string]any{"text": "changed"}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if hasVector(t, d, ns, "a") {
		t.Error("the vector of the replaced value is still stored")
	}

	// A record in the earlier format, with a vector beside it.
	if err := d.StoreWith(oneEmbedder{}).Put(ctx, ns, "b", map[string]any{"text": "hello"}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	err = d.updateOnce(func(txn *bdg.Txn) error {
		item, err := txn.Get(itemKey(ns, "b"))
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		v[24] = 0
		return txn.Set(itemKey(ns, "b"), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Store().Put(ctx, ns, "b", map[string]any{"text": "changed"}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if hasVector(t, d, ns, "b") {
		t.Error("the vector beside a record of the earlier format is still stored")
	}
	it, err := d.Store().Get(ctx, ns, "b")
	if err != nil || it.Value["text"] != "changed" {
		t.Fatalf("item b = %+v, %v", it, err)
	}
}

// A new item and one whose record says it has no embedding are put without
// a delete of an embedding: no version of the vector's key is written.
func TestPutOfAnItemWithoutEmbeddingDeletesNoVector(t *testing.T) {
	ctx := context.Background()
	d, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ns := []string{"n"}
	for _, text := range []string{"new", "replaced", "again"} {
		if err := d.Store().Put(ctx, ns, "k", map[string]any{"text": text}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	versions := func(k []byte) int {
		n := 0
		err := d.view(func(txn *bdg.Txn) error {
			it := txn.NewIterator(bdg.IteratorOptions{AllVersions: true, Prefix: k})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := versions(itemKey(ns, "k")); n != 3 {
		t.Fatalf("%d versions of the item, want 3", n)
	}
	if n := versions(vectorKey(itemKey(ns, "k"))); n != 0 {
		t.Errorf("%d versions (deletes) of the vector key written, want none", n)
	}
}
