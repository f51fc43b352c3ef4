package badger

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/store"
)

// Store is the Badger store.Store; get one from (*DB).Store.
type Store struct{ d *DB }

var _ store.Store = (*Store)(nil)

// record is the stored form of an item, after the 8-byte expiry header.
type record struct {
	Value   map[string]any `json:"v"`
	Created time.Time      `json:"c"`
	Updated time.Time      `json:"u"`
	Expires time.Time      `json:"e,omitzero"`
	// Indexed says the item takes part in text search; Terms are its
	// indexed text's terms, space-separated, computed once at Put.
	Indexed bool   `json:"i,omitempty"`
	Terms   string `json:"t,omitempty"`
}

func namespacePrefix(ns []string) []byte {
	out := []byte{kindItem, '/'}
	for _, e := range ns {
		out = binary.AppendUvarint(out, uint64(len(e))+1)
		out = append(out, e...)
	}
	return out
}

func itemKey(ns []string, key string) []byte {
	out := append(namespacePrefix(ns), 0)
	return append(out, key...)
}

// decodeItemKey splits an item key into namespace and key.
func decodeItemKey(k []byte) ([]string, string, error) {
	if len(k) < 2 || k[0] != kindItem {
		return nil, "", fmt.Errorf("not an item key: %q", k)
	}
	b := k[2:]
	var ns []string
	for {
		n, w := binary.Uvarint(b)
		if w <= 0 {
			return nil, "", fmt.Errorf("corrupt item key %q", k)
		}
		b = b[w:]
		if n == 0 {
			return ns, string(b), nil
		}
		if uint64(len(b)) < n-1 {
			return nil, "", fmt.Errorf("corrupt item key %q", k)
		}
		ns = append(ns, string(b[:n-1]))
		b = b[n-1:]
	}
}

func validNamespace(ns []string) error {
	if len(ns) == 0 {
		return errors.New("empty namespace")
	}
	for i, e := range ns {
		if e == "" {
			return fmt.Errorf("namespace %q: element %d is empty", ns, i)
		}
	}
	return nil
}

func (s *Store) expired(expiresNano uint64, now time.Time) bool {
	return expiresNano != 0 && now.UnixNano() >= int64(expiresNano)
}

// Put implements store.Store. Overwriting an item keeps its creation time.
func (s *Store) Put(ctx context.Context, namespace []string, key string, value map[string]any, opts store.PutOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validNamespace(namespace); err != nil {
		return fmt.Errorf("store put %q: %w", key, err)
	}
	if key == "" {
		return fmt.Errorf("store put in %q: empty key", namespace)
	}
	if opts.TTL < 0 {
		return fmt.Errorf("store put %q/%s: negative TTL %v", namespace, key, opts.TTL)
	}
	if value == nil {
		value = map[string]any{}
	}
	now := s.d.now().UTC()
	rec := record{Value: value, Created: now, Updated: now, Indexed: opts.Index == nil || len(opts.Index) > 0}
	if rec.Indexed {
		var terms []string
		for _, text := range store.IndexText(value, opts.Index) {
			terms = append(terms, store.Tokenize(text)...)
		}
		rec.Terms = strings.Join(terms, " ")
	}
	if opts.TTL > 0 {
		rec.Expires = now.Add(opts.TTL)
	}
	k := itemKey(namespace, key)
	err := s.d.update(ctx, func(txn *bdg.Txn) error {
		if item, err := txn.Get(k); err == nil {
			var old record
			err := item.Value(func(v []byte) error {
				if len(v) < 8 || s.expired(binary.BigEndian.Uint64(v), now) {
					return nil
				}
				return json.Unmarshal(v[8:], &old)
			})
			if err != nil {
				return fmt.Errorf("decode previous value: %w", err)
			}
			if !old.Created.IsZero() {
				rec.Created = old.Created
			}
		} else if !errors.Is(err, bdg.ErrKeyNotFound) {
			return err
		}
		data, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encode value: %w", err)
		}
		var header [8]byte
		if !rec.Expires.IsZero() {
			binary.BigEndian.PutUint64(header[:], uint64(rec.Expires.UnixNano()))
		}
		e := bdg.NewEntry(k, append(header[:], data...))
		if !rec.Expires.IsZero() && s.d.wallClock {
			e.ExpiresAt = uint64(rec.Expires.Unix()) + 1
		}
		return txn.SetEntry(e)
	})
	if err != nil {
		return fmt.Errorf("store put %q/%s: %w", namespace, key, err)
	}
	return nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, namespace []string, key string) (*store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *store.Item
	now := s.d.now()
	err := s.d.db.View(func(txn *bdg.Txn) error {
		item, err := txn.Get(itemKey(namespace, key))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			rec, ok, err := s.decode(v, now)
			if err != nil {
				return err
			}
			if !ok {
				return store.ErrNotFound
			}
			out = rec.item(namespace, key)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store get %q/%s: %w", namespace, key, err)
	}
	return out, nil
}

// decode reads a stored value; ok is false when it has expired.
func (s *Store) decode(v []byte, now time.Time) (*record, bool, error) {
	if len(v) < 8 {
		return nil, false, errors.New("corrupt item: short value")
	}
	if s.expired(binary.BigEndian.Uint64(v), now) {
		return nil, false, nil
	}
	var rec record
	if err := json.Unmarshal(v[8:], &rec); err != nil {
		return nil, false, fmt.Errorf("decode item: %w", err)
	}
	return &rec, true, nil
}

func (r *record) item(ns []string, key string) *store.Item {
	return &store.Item{Namespace: ns, Key: key, Value: r.Value, CreatedAt: r.Created, UpdatedAt: r.Updated, ExpiresAt: r.Expires}
}

// Delete implements store.Store. Deleting a missing item is not an error.
func (s *Store) Delete(ctx context.Context, namespace []string, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.d.update(ctx, func(txn *bdg.Txn) error { return txn.Delete(itemKey(namespace, key)) })
	if err != nil {
		return fmt.Errorf("store delete %q/%s: %w", namespace, key, err)
	}
	return nil
}

// Search implements store.Store: items under the namespace prefix that match
// the filter, ranked by BM25 when there is a query (non-indexed items and
// items sharing no term with the query are left out), otherwise newest first.
// A zero Limit returns every match.
func (s *Store) Search(ctx context.Context, nsPrefix []string, q store.SearchQuery) ([]store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q.Limit < 0 || q.Offset < 0 {
		return nil, fmt.Errorf("store search %q: negative limit %d or offset %d", nsPrefix, q.Limit, q.Offset)
	}
	query := store.Tokenize(q.Query)
	textSearch := strings.TrimSpace(q.Query) != ""
	now := s.d.now()
	var (
		items []store.Item
		docs  [][]string
	)
	err := s.d.db.View(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.IteratorOptions{Prefix: namespacePrefix(nsPrefix), PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var (
				rec *record
				ok  bool
			)
			err := it.Item().Value(func(v []byte) error {
				var err error
				rec, ok, err = s.decode(v, now)
				return err
			})
			if err != nil {
				return fmt.Errorf("item %q: %w", it.Item().Key(), err)
			}
			if !ok || (textSearch && !rec.Indexed) {
				continue
			}
			if len(q.Filter) > 0 {
				match, err := store.MatchFilter(rec.Value, q.Filter)
				if err != nil {
					return err
				}
				if !match {
					continue
				}
			}
			ns, key, err := decodeItemKey(it.Item().Key())
			if err != nil {
				return err
			}
			items = append(items, *rec.item(ns, key))
			if textSearch {
				docs = append(docs, strings.Fields(rec.Terms))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
	}
	if textSearch {
		scores := store.DefaultBM25.Score(query, docs)
		hits := items[:0]
		for i := range items {
			if scores[i] > 0 {
				items[i].Score = scores[i]
				hits = append(hits, items[i])
			}
		}
		items = hits
	}
	slices.SortStableFunc(items, func(a, b store.Item) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return b.UpdatedAt.Compare(a.UpdatedAt)
	})
	return page(items, q.Offset, q.Limit), nil
}

func page[T any](s []T, offset, limit int) []T {
	if offset >= len(s) {
		return []T{}
	}
	s = s[offset:]
	if limit > 0 && limit < len(s) {
		s = s[:limit]
	}
	return s
}

// ListNamespaces implements store.Store. Prefix and Suffix elements "*"
// match any element; they are applied to whole namespaces before MaxDepth
// truncates them. The result is sorted and without duplicates.
func (s *Store) ListNamespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q.Limit < 0 || q.Offset < 0 || q.MaxDepth < 0 {
		return nil, fmt.Errorf("list namespaces: negative limit %d, offset %d or max depth %d", q.Limit, q.Offset, q.MaxDepth)
	}
	fixed := q.Prefix
	if i := slices.Index(fixed, "*"); i >= 0 {
		fixed = fixed[:i]
	}
	now := s.d.now()
	seen := map[string][]string{}
	err := s.d.db.View(func(txn *bdg.Txn) error {
		prefix := namespacePrefix(fixed)
		it := txn.NewIterator(bdg.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var live bool
			err := it.Item().Value(func(v []byte) error {
				live = len(v) >= 8 && !s.expired(binary.BigEndian.Uint64(v), now)
				return nil
			})
			if err != nil {
				return err
			}
			if !live {
				continue
			}
			ns, _, err := decodeItemKey(it.Item().Key())
			if err != nil {
				return err
			}
			if !matchElems(ns, q.Prefix, false) || !matchElems(ns, q.Suffix, true) {
				continue
			}
			if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
				ns = ns[:q.MaxDepth]
			}
			seen[strings.Join(ns, "\x00")] = ns
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	out := make([][]string, 0, len(seen))
	for _, ns := range seen {
		out = append(out, ns)
	}
	slices.SortFunc(out, slices.Compare)
	return page(out, q.Offset, q.Limit), nil
}

// matchElems reports whether ns starts (or, with suffix, ends) with pattern,
// where "*" matches any element.
func matchElems(ns, pattern []string, suffix bool) bool {
	if len(pattern) > len(ns) {
		return false
	}
	off := 0
	if suffix {
		off = len(ns) - len(pattern)
	}
	for i, p := range pattern {
		if p != "*" && p != ns[off+i] {
			return false
		}
	}
	return true
}
