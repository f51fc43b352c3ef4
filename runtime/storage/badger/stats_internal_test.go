package badger

import (
	"context"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/store"
)

// TestStatsCountBytesWritten checks that Stats counts the bytes of the keys
// and values each kind of write sets, and of the keys it deletes.
func TestStatsCountBytesWritten(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t, Options{})
	item := itemKey([]string{"ns"}, "k")
	tests := []struct {
		name  string
		write func() error
		want  func() uint64 // read after the write
	}{
		{"checkpointer set", func() error {
			blobTx(t, d, func(tx *tx) error { return tx.set([]byte("key1"), []byte("value")) })
			return nil
		}, exactly(4 + 5)},
		{"checkpointer delete", func() error {
			blobTx(t, d, func(tx *tx) error { return tx.delete([]byte("key1")) })
			return nil
		}, exactly(4)},
		{"written ahead", func() error { return d.writeAhead([]byte("ahead"), []byte("blob")) }, exactly(5 + 4)},
		{"keys deleted in batches", func() error { return d.deleteKeys([][]byte{[]byte("a"), []byte("bc")}) }, exactly(3)},
		// An item's record is its value with the item's times; a new item
		// has no embedding to delete.
		{"store put", func() error {
			return d.Store().Put(ctx, []string{"ns"}, "k", map[string]any{"v": 1}, store.PutOptions{Index: []string{}})
		}, func() uint64 { return uint64(len(item)) + storedValueSize(t, d, item) }},
		// The item and its embedding.
		{"store delete", func() error { return d.Store().Delete(ctx, []string{"ns"}, "k") }, exactly(2 * len(item))},
	}
	for _, tt := range tests {
		before := d.Stats().Bytes
		if err := tt.write(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got, want := d.Stats().Bytes-before, tt.want(); got != want {
			t.Errorf("%s: %d bytes counted, want %d", tt.name, got, want)
		}
	}
}

// exactly is a want of n bytes.
func exactly(n int) func() uint64 { return func() uint64 { return uint64(n) } }

// storedValueSize returns the size of the value stored at key.
func storedValueSize(t *testing.T, d *DB, key []byte) uint64 {
	t.Helper()
	var size uint64
	err := d.view(func(txn *bdg.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		size = uint64(item.ValueSize())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return size
}
