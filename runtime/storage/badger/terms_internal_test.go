package badger

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/store"
)

// surfaceRecord returns a store item's value as written before stems and
// Han characters were indexed: the header with the indexed flag (and no
// expanded-terms flag), the surface terms of its text, its JSON.
func surfaceRecord(at time.Time, terms, raw string) []byte {
	v := make([]byte, 25)
	binary.BigEndian.PutUint64(v[8:], uint64(at.UnixNano()))
	binary.BigEndian.PutUint64(v[16:], uint64(at.UnixNano()))
	v[24] = flagIndexed | flagVectorKnown
	v = binary.AppendUvarint(v, uint64(len(terms)))
	v = append(v, terms...)
	return append(v, raw...)
}

// TestSearchExpandsSurfaceTerms: items written with the surface terms only
// are found by the stems and Han characters of a query, with the scores an
// item stored now gets, and are stored expanded once rewritten.
func TestSearchExpandsSurfaceTerms(t *testing.T) {
	ctx := context.Background()
	d, err := Open(t.TempDir(), Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := d.Store()
	old, now := []string{"memories", "old"}, []string{"memories", "new"}
	items := []struct {
		key, text, surface string
	}{
		{"pets", "I have two cats and I love hiking", "i have two cats and i love hiking"},
		{"neko", "猫を二匹飼っています", "猫を を二 二匹 匹飼 飼っ って てい いま ます"},
		{"job", "Works as a nurse in 東京都", "works as a nurse in 東京 京都"},
	}
	at := time.Now()
	for _, it := range items {
		raw := `{"text":"` + it.text + `"}`
		if err := d.update(ctx, func(txn *bdg.Txn) error {
			return txn.Set(itemKey(old, it.key), surfaceRecord(at, it.surface, raw))
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, now, it.key, map[string]any{"text": it.text}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"cat", []string{"pets"}},
		{"cats", []string{"pets"}},
		{"do I like to hike?", []string{"pets"}},
		{"猫について教えて", []string{"neko"}},
		{"nursing work", []string{"job"}},
		{"京都", []string{"job"}},
		{"dog", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := s.Search(ctx, old, store.SearchQuery{Query: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.Search(ctx, now, store.SearchQuery{Query: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			if keys := itemKeysOf(got); !slices.Equal(keys, tt.want) {
				t.Fatalf("Search(%q) over surface-term items = %v, want %v", tt.query, keys, tt.want)
			}
			if keys := itemKeysOf(want); !slices.Equal(keys, tt.want) {
				t.Fatalf("Search(%q) over items stored now = %v, want %v", tt.query, keys, tt.want)
			}
			for i := range got {
				if got[i].Score != want[i].Score {
					t.Errorf("%s: score %v over surface terms, %v stored now", got[i].Key, got[i].Score, want[i].Score)
				}
			}
		})
	}

	// Rewritten, an item is stored with its expanded terms.
	if err := s.Put(ctx, old, "pets", map[string]any{"text": items[0].text}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, err := parseRecord(storedValue(t, d, itemKey(old, "pets")))
	if err != nil {
		t.Fatal(err)
	}
	if rec.SurfaceTerms || !slices.Contains(strings.Fields(string(rec.Terms)), "cat") {
		t.Errorf("rewritten item: surface terms %v, terms %q; want expanded terms with \"cat\"", rec.SurfaceTerms, rec.Terms)
	}
}

func itemKeysOf(items []store.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Key)
	}
	return out
}
