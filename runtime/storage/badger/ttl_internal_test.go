package badger

import (
	"context"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/store"
)

// An item stored before records kept their TTL (no flagTTL) is refreshed
// with the TTL it was put with, its expiry less its update time; the
// refreshed record keeps it, so that the next refresh uses the same TTL.
func TestRefreshTTLOfRecordsWithoutTheirTTL(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	d := openTemp(t, Options{Now: func() time.Time { return now }})
	s := d.Store().(*Store)
	ns := []string{"old"}
	put := now.Add(-time.Minute)
	old := record{Created: put, Updated: put, Expires: put.Add(10 * time.Minute), Indexed: true, Terms: []byte("kept"),
		raw: []byte(`{"text":"kept"}`)}
	v := encodeRecord(&old)
	if v[24]&flagTTL != 0 {
		t.Fatal("a record without a TTL is written with flagTTL")
	}
	if err := d.update(ctx, func(txn *bdg.Txn) error { return txn.Set(itemKey(ns, "k"), v) }); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		now = now.Add(3 * time.Minute)
		if err := s.RefreshTTL(ctx, []store.ItemRef{{Namespace: ns, Key: "k"}}); err != nil {
			t.Fatal(err)
		}
		it, err := s.Get(ctx, ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		if want := now.Add(10 * time.Minute); !it.ExpiresAt.Equal(want) || it.Value["text"] != "kept" || !it.UpdatedAt.Equal(put) {
			t.Fatalf("refresh %d: %+v; want the value kept, updated at %v, expiring at %v", i+1, it, put, want)
		}
	}
	if got := keysOf(t, s, ns, "kept"); len(got) != 1 {
		t.Errorf("a text search after the refresh found %v, want the item", got)
	}
}

func keysOf(t *testing.T, s store.Store, ns []string, query string) []string {
	t.Helper()
	items, err := s.Search(context.Background(), ns, store.SearchQuery{Query: query})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	return keys
}
