package badger

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/store"
)

// TestStoreCompressesLargeValues checks that a large value that compresses
// well is stored compressed and a small or incompressible one as it is, and
// that each reads back whole through Get, a filtered Search and, after the
// DB is reopened, from disk; a record stored uncompressed (as before
// compression existed) reads as it did.
func TestStoreCompressesLargeValues(t *testing.T) {
	ctx := context.Background()
	noise := make([]byte, 3*compressFrom)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		value          map[string]any
		wantCompressed bool
	}{
		{"small", map[string]any{"kind": "k", "text": "a short memory"}, false},
		{"large and repetitive", map[string]any{"kind": "k", "nodes": strings.Repeat(`{"node":"extract","status":"ok"},`, 60)}, true},
		{"large and incompressible", map[string]any{"kind": "k", "blob": base64.StdEncoding.EncodeToString(noise)}, false},
	}
	dir := t.TempDir()
	d, err := Open(dir, Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	ns := []string{"audit", "runs", "t1"}
	for _, tt := range tests {
		if err := d.Store().Put(ctx, ns, tt.name, tt.value, store.PutOptions{}); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
	}
	check := func(d *DB, when string) {
		t.Helper()
		for _, tt := range tests {
			raw := storedValue(t, d, itemKey(ns, tt.name))
			if got := raw[24]&flagCompressed != 0; got != tt.wantCompressed {
				t.Errorf("%s %s: stored compressed = %v, want %v", when, tt.name, got, tt.wantCompressed)
			}
			it, err := d.Store().Get(ctx, ns, tt.name)
			if err != nil {
				t.Fatalf("%s %s: %v", when, tt.name, err)
			}
			if !reflect.DeepEqual(it.Value, tt.value) {
				t.Errorf("%s %s: Get = %.80v…, want %.80v…", when, tt.name, it.Value, tt.value)
			}
		}
		hits, err := d.Store().Search(ctx, ns, store.SearchQuery{Filter: map[string]any{"kind": "k"}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(tests) {
			t.Errorf("%s: filtered search found %d items, want %d", when, len(hits), len(tests))
		}
	}
	check(d, "written")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err = Open(dir, Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	check(d, "reopened")

	// A large record as stored before values were compressed.
	old := record{Created: time.Now(), Updated: time.Now(), VectorKnown: true, raw: []byte(`{"nodes":"` + strings.Repeat("x", 2*compressFrom) + `"}`)}
	v := encodeRecord(&old)
	v = v[:25+binary.PutUvarint(make([]byte, binary.MaxVarintLen64), 0)]
	v[24] &^= flagCompressed
	v = append(v, old.raw...)
	if err := d.update(ctx, func(txn *bdg.Txn) error { return txn.Set(itemKey(ns, "old"), v) }); err != nil {
		t.Fatal(err)
	}
	it, err := d.Store().Get(ctx, ns, "old")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := it.Value["nodes"].(string); len(got) != 2*compressFrom {
		t.Errorf("uncompressed record read back %d bytes of its value, want %d", len(got), 2*compressFrom)
	}
}

// storedValue returns the bytes stored at key.
func storedValue(t *testing.T, d *DB, key []byte) []byte {
	t.Helper()
	var out []byte
	err := d.view(func(txn *bdg.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		out, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return out
}
