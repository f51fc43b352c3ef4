package badger

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// walked returns how many deltas a read of field msgs at version v walks.
func walked(t *testing.T, db *DB, thread string, v int64) int {
	t.Helper()
	return walkedField(t, db, thread, "msgs", v)
}

// walkedField returns how many deltas a read of a field at version v walks.
func walkedField(t *testing.T, db *DB, thread, field string, v int64) int {
	t.Helper()
	var n int
	err := db.view(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.IteratorOptions{Prefix: threadPrefix(kindBlob, thread), Reverse: true})
		defer it.Close()
		chain, err := (&tx{d: db, txn: txn}).chain(it, thread, field, v)
		n = len(chain) - 1
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLatestSavesSnapshotsOfLongChains checks that a cold read of a long
// chain saves the field's snapshot, that later reads of the newest state
// walk only the deltas written since, and that reads of older versions do
// not use it.
func TestLatestSavesSnapshotsOfLongChains(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	cp := db.Checkpointer()
	put := func(v int64) {
		t.Helper()
		b := checkpoint.Blob{Field: "msgs", Version: v, Data: json.RawMessage(fmt.Sprintf(`["m%d"]`, v))}
		if v > 1 {
			b.Base = v - 1
		}
		c := checkpoint.Checkpoint{ThreadID: "t", ID: fmt.Sprintf("%08d", v), Step: int(v), Versions: map[string]int64{"msgs": v}}
		if err := cp.Put(ctx, c, []checkpoint.Blob{b}); err != nil {
			t.Fatal(err)
		}
	}
	for v := int64(1); v <= 100; v++ {
		put(v)
	}
	if n := walked(t, db, "t", 100); n != 99 {
		t.Fatalf("before any Latest, a read walked %d deltas, want 99", n)
	}
	if _, err := cp.Latest(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	for v := int64(101); v <= 110; v++ {
		put(v)
	}
	if n := walked(t, db, "t", 110); n != 10 {
		t.Errorf("after a Latest at version 100 and 10 appends, a read walked %d deltas, want 10", n)
	}
	if n := walked(t, db, "t", 60); n != 59 {
		t.Errorf("a read of version 60 walked %d deltas, want 59 (the snapshot is newer)", n)
	}
	l, err := cp.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	if err := json.Unmarshal(l.Values["msgs"], &items); err != nil || len(items) != 110 || items[109] != "m110" || items[0] != "m1" {
		t.Fatalf("Latest msgs = %v (%v)", items, err)
	}
	// A snapshot whose blob changed under it is not used.
	var snap []byte
	_ = db.view(func(txn *bdg.Txn) error {
		item, err := txn.Get(snapshotKey("t", "msgs"))
		if err == nil {
			snap, err = item.ValueCopy(nil)
		}
		return err
	})
	if snap == nil {
		t.Fatal("no snapshot saved")
	}
	err = db.updateOnce(func(txn *bdg.Txn) error {
		return txn.Set(blobKey("t", "msgs", 100), encodeBlob(checkpoint.Blob{Field: "msgs", Version: 100, Base: 99, Data: json.RawMessage(`["changed"]`)}))
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err = cp.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(l.Values["msgs"], &items); err != nil || items[99] != "changed" {
		t.Errorf("after the blob under the snapshot changed, item 100 = %q, want changed", items[99])
	}
}
