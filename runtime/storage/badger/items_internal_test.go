package badger

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/store"
)

// TestStorePutKnowsOnlyStoredItems checks that overwriting an item the DB
// wrote reads nothing, and that an item deleted (alone or in a batch) or
// expired is not taken for stored: the next Put's creation time is its own.
func TestStorePutKnowsOnlyStoredItems(t *testing.T) {
	ctx := context.Background()
	ns := []string{"users", "u1"}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		ttl    time.Duration
		remove func(s store.Store) error // nil: the item stays
		// later is how long after the first Put the second one comes.
		later time.Duration
		// wantCreated is the creation time after the second Put, as an
		// offset from t0.
		wantCreated time.Duration
	}{
		{name: "kept", later: time.Minute, wantCreated: 0},
		{name: "deleted", remove: func(s store.Store) error { return s.Delete(ctx, ns, "k") },
			later: time.Minute, wantCreated: time.Minute},
		{name: "deleted in a batch", remove: func(s store.Store) error {
			return s.(store.Batcher).PutBatch(ctx, []store.BatchPut{{Namespace: ns, Key: "k", Delete: true}})
		}, later: time.Minute, wantCreated: time.Minute},
		{name: "expired", ttl: time.Second, later: time.Minute, wantCreated: time.Minute},
		{name: "not yet expired", ttl: time.Hour, later: time.Minute, wantCreated: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			d := openTemp(t, Options{Now: func() time.Time { return now }})
			s := d.Store()
			if err := s.Put(ctx, ns, "k", map[string]any{"v": 1}, store.PutOptions{TTL: tt.ttl}); err != nil {
				t.Fatal(err)
			}
			if tt.remove != nil {
				if err := tt.remove(s); err != nil {
					t.Fatal(err)
				}
			}
			now = t0.Add(tt.later)
			if err := s.Put(ctx, ns, "k", map[string]any{"v": 2}, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			item, err := s.Get(ctx, ns, "k")
			if err != nil {
				t.Fatal(err)
			}
			if want := t0.Add(tt.wantCreated); !item.CreatedAt.Equal(want) {
				t.Errorf("created %v, want %v", item.CreatedAt, want)
			}
		})
	}
}

// TestStorePutReadsNoKnownItem checks that a Put over an item the store
// wrote does not read it: a stored value it could not parse goes unseen.
func TestStorePutReadsNoKnownItem(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t, Options{})
	s := d.Store()
	ns := []string{"n"}
	if err := s.Put(ctx, ns, "k", map[string]any{"v": 1}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// A value written around the store: only a read would see it.
	if err := d.update(ctx, func(txn *bdg.Txn) error { return txn.Set(itemKey(ns, "k"), []byte("unreadable")) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, ns, "k", map[string]any{"v": 2}, store.PutOptions{}); err != nil {
		t.Errorf("Put over an item the store wrote read it: %v", err)
	}
}

// TestStorePutNewReadsNothing checks that a put the caller marks New reads
// no item, in PutBatch and carried by a checkpoint's transaction, while one
// not marked reads the item it replaces when the store does not know it.
func TestStorePutNewReadsNothing(t *testing.T) {
	ctx := context.Background()
	ns := []string{"n"}
	tests := []struct {
		name    string
		new     bool
		wantErr bool
	}{
		{"new", true, false},
		{"not new", false, true},
	}
	for _, tt := range tests {
		for _, via := range []string{"batch", "carried"} {
			t.Run(tt.name+" "+via, func(t *testing.T) {
				d := openTemp(t, Options{})
				// A value written around the store: only a read would see it.
				if err := d.update(ctx, func(txn *bdg.Txn) error { return txn.Set(itemKey(ns, "k"), []byte("unreadable")) }); err != nil {
					t.Fatal(err)
				}
				put := []store.BatchPut{{Namespace: ns, Key: "k", Value: map[string]any{"v": 1}, New: tt.new}}
				var err error
				if via == "batch" {
					err = d.Store().(store.Batcher).PutBatch(ctx, put)
				} else {
					ct, berr := (&driver{d: d}).Begin(ctx, true)
					if berr != nil {
						t.Fatal(berr)
					}
					if err = ct.(*tx).PutItems(put); err == nil {
						err = ct.Commit()
					}
					ct.Discard()
				}
				if (err != nil) != tt.wantErr {
					t.Fatalf("put: %v, want an error (a read of the unreadable value): %v", err, tt.wantErr)
				}
				if err != nil {
					return
				}
				it, err := d.Store().Get(ctx, ns, "k")
				if err != nil || it.Value["v"] != 1.0 && it.Value["v"] != 1 {
					t.Errorf("the item after the put: %v %v", it, err)
				}
			})
		}
	}
}

// TestStorePutBatchRepeatedKey checks that a batch that deletes and puts
// the same key gives the item the batch's creation time.
func TestStorePutBatchRepeatedKey(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0
	d := openTemp(t, Options{Now: func() time.Time { return now }})
	s := d.Store()
	ns := []string{"n"}
	if err := s.Put(ctx, ns, "k", map[string]any{"v": 1}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(time.Minute)
	err := s.(store.Batcher).PutBatch(ctx, []store.BatchPut{
		{Namespace: ns, Key: "k", Delete: true},
		{Namespace: ns, Key: "k", Value: map[string]any{"v": 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	item, err := s.Get(ctx, ns, "k")
	if err != nil {
		t.Fatal(err)
	}
	if !item.CreatedAt.Equal(now) {
		t.Errorf("created %v, want %v", item.CreatedAt, now)
	}
}

// TestCarriedItemsKnowOnlyStoredItems checks that items written in a
// checkpoint's transaction are known as those written by the store: a
// second write reads nothing, and one after a delete starts afresh.
func TestCarriedItemsKnowOnlyStoredItems(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0
	d := openTemp(t, Options{Now: func() time.Time { return now }})
	ns := []string{"n"}
	carry := func(v int) {
		t.Helper()
		blobTx(t, d, func(tx *tx) error {
			return tx.PutItems([]store.BatchPut{{Namespace: ns, Key: "k", Value: map[string]any{"v": v}}})
		})
	}
	created := func() time.Time {
		t.Helper()
		item, err := d.Store().Get(ctx, ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		return item.CreatedAt
	}
	carry(1)
	if err := d.update(ctx, func(txn *bdg.Txn) error { return txn.Set(itemKey(ns, "k"), []byte("unreadable")) }); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(time.Minute)
	carry(2) // reads nothing: the unreadable value goes unseen
	if got := created(); !got.Equal(t0) {
		t.Errorf("created %v, want %v", got, t0)
	}
	if err := d.Store().Delete(ctx, ns, "k"); err != nil {
		t.Fatal(err)
	}
	carry(3)
	if got := created(); !got.Equal(now) {
		t.Errorf("after a delete: created %v, want %v", got, now)
	}
}

// TestStoreGetServesWhatTheDBWrote checks that a Get of a small item the DB
// wrote is answered from what it wrote, and that what it answers is what is
// stored: the newest value after an overwrite, nothing after a delete
// (alone, in a batch, or inside a checkpoint transaction), nothing once
// expired, and a large value read from the database.
func TestStoreGetServesWhatTheDBWrote(t *testing.T) {
	ctx := context.Background()
	ns := []string{"audit", "conversations"}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	large := strings.Repeat("x", 2*maxKnownValue)
	tests := []struct {
		name string
		// change runs after a first Put of {"v": 1} (ttl: an hour).
		change func(s *Store, now *time.Time) error
		want   map[string]any // nil: not found
		known  bool           // whether Get is answered from knownItems
	}{
		{name: "kept", change: func(*Store, *time.Time) error { return nil },
			want: map[string]any{"v": 1.0}, known: true},
		{name: "overwritten", change: func(s *Store, _ *time.Time) error {
			return s.Put(ctx, ns, "k", map[string]any{"v": 2}, store.PutOptions{})
		}, want: map[string]any{"v": 2.0}, known: true},
		{name: "overwritten in a batch", change: func(s *Store, _ *time.Time) error {
			return s.PutBatch(ctx, []store.BatchPut{{Namespace: ns, Key: "k", Value: map[string]any{"v": 3}}})
		}, want: map[string]any{"v": 3.0}, known: true},
		{name: "deleted", change: func(s *Store, _ *time.Time) error { return s.Delete(ctx, ns, "k") }},
		{name: "deleted in a batch", change: func(s *Store, _ *time.Time) error {
			return s.PutBatch(ctx, []store.BatchPut{{Namespace: ns, Key: "k", Delete: true}})
		}},
		{name: "expired", change: func(_ *Store, now *time.Time) error { *now = now.Add(2 * time.Hour); return nil },
			known: true},
		{name: "large", change: func(s *Store, _ *time.Time) error {
			return s.Put(ctx, ns, "k", map[string]any{"v": large}, store.PutOptions{})
		}, want: map[string]any{"v": large}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			d := openTemp(t, Options{Now: func() time.Time { return now }})
			s := d.Store().(*Store)
			if err := s.Put(ctx, ns, "k", map[string]any{"v": 1}, store.PutOptions{TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			if err := tt.change(s, &now); err != nil {
				t.Fatal(err)
			}
			known, ok := d.items.get(itemKey(ns, "k"))
			if got := ok && known.value != nil; got != tt.known {
				t.Errorf("value known = %v, want %v", got, tt.known)
			}
			item, err := s.Get(ctx, ns, "k")
			if tt.want == nil {
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("Get = %v, %v; want ErrNotFound", item, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(item.Value, tt.want) {
				t.Errorf("Get = %v, want %v", item.Value, tt.want)
			}
			// The value handed out is the caller's: changing it changes
			// nothing stored.
			item.Value["v"] = "changed"
			again, err := s.Get(ctx, ns, "k")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(again.Value, tt.want) {
				t.Errorf("second Get = %v, want %v", again.Value, tt.want)
			}
		})
	}
}

// TestItemKeyLayout checks that an item key is its namespace prefix, a 0
// and the key, made in one allocation (its capacity is its length).
func TestItemKeyLayout(t *testing.T) {
	long := strings.Repeat("n", 200) // a two-byte length
	tests := []struct {
		ns   []string
		key  string
		want string
	}{
		{nil, "k", "s/\x00k"},
		{[]string{"a"}, "", "s/\x02a\x00"},
		{[]string{"graphctl", "runs", "t1"}, "r1", "s/\x09graphctl\x05runs\x03t1\x00r1"},
		{[]string{long}, "k", "s/\xc9\x01" + long + "\x00k"},
	}
	for _, tt := range tests {
		k := itemKey(tt.ns, tt.key)
		if string(k) != tt.want || cap(k) != len(k) {
			t.Errorf("itemKey(%q, %q) = %q (cap %d), want %q", tt.ns, tt.key, k, cap(k), tt.want)
		}
		if p := namespacePrefix(tt.ns); !strings.HasPrefix(tt.want, string(p)) || cap(p) != len(p) || len(p)+1+len(tt.key) != len(tt.want) {
			t.Errorf("namespacePrefix(%q) = %q (cap %d)", tt.ns, p, cap(p))
		}
	}
}
