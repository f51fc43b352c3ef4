package badger

import (
	"context"
	"fmt"
	"strings"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/graphctl/graphctl/runtime/store"
)

// TestTablesWrittenWithSnappyStillRead opens a database whose table was
// written with Badger's default compression (snappy, as graphctl wrote
// them before) and checks that its data reads before and after a
// compaction rewrites every table with TableCompression, and after a
// reopen; the rewritten tables are smaller than their data.
func TestTablesWrittenWithSnappyStillRead(t *testing.T) {
	dir := t.TempDir()
	legacy, want := []byte("x/legacy"), []byte(strings.Repeat("written with snappy; ", 40))
	raw, err := bdg.OpenManaged(bdg.DefaultOptions(dir).WithLogger(nil).WithCompression(options.Snappy))
	if err != nil {
		t.Fatal(err)
	}
	txn := raw.NewTransactionAt(1, true)
	if err := txn.Set(legacy, want); err != nil {
		t.Fatal(err)
	}
	if err := txn.CommitAt(2, nil); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil { // flushes the memtable into a snappy table
		t.Fatal(err)
	}

	ctx := context.Background()
	ns := []string{"notes", "t1"}
	check := func(d *DB, when string) {
		t.Helper()
		if got := storedValue(t, d, legacy); string(got) != string(want) {
			t.Errorf("%s: the snappy table's value reads %q", when, got)
		}
		for i := range 200 {
			it, err := d.Store().Get(ctx, ns, fmt.Sprint(i))
			if err != nil || it.Value["text"] != fmt.Sprintf("note %d about the dishwasher's door seal", i) {
				t.Fatalf("%s: item %d = %v, %v", when, i, it, err)
			}
		}
	}
	d, err := Open(dir, Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		v := map[string]any{"text": fmt.Sprintf("note %d about the dishwasher's door seal", i)}
		if err := d.Store().Put(ctx, ns, fmt.Sprint(i), v, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	check(d, "before compaction")
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	check(d, "after compaction")
	tables := d.db.Tables()
	if len(tables) == 0 {
		t.Fatal("no tables after compaction")
	}
	for _, tb := range tables {
		if tb.OnDiskSize >= tb.UncompressedSize {
			t.Errorf("table %d: %d bytes on disk for %d of data, want it compressed", tb.ID, tb.OnDiskSize, tb.UncompressedSize)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err = Open(dir, Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	check(d, "after reopening")
}
