package badger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"

	"github.com/graphctl/graphctl/runtime/store"
)

// Store is the Badger store.Store; get one from (*DB).Store.
type Store struct {
	d *DB
	// emb, when set, embeds items at Put and queries at Search.
	emb store.Embedder
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.TTLRefresher = (*Store)(nil)
)

// record is an item as stored: a fixed binary header, the indexed terms and
// the value's JSON, which is decoded only when a filter or a result needs it.
// A value of compressFrom bytes or more is stored S2-compressed when that
// saves at least an eighth of it (flagCompressed).
//
//	expires (8, unix ns, 0 = none) created (8) updated (8) flags (1)
//	[uvarint(ttl ns), with flagTTL] uvarint(len(terms)) terms
//	value-JSON (or its S2 encoding)
type record struct {
	Created, Updated, Expires time.Time
	// TTL is the TTL the item was stored with (flagTTL), which a read that
	// refreshes it restarts. Records written before it was kept have none:
	// their TTL is Expires - Updated, as no read had refreshed it.
	TTL time.Duration
	// Indexed says the item takes part in text search; Terms are its indexed
	// text's terms, space-separated, computed once at Put.
	Indexed bool
	// SurfaceTerms says Terms are only the surface terms of the item's text
	// (words and CJK bigrams), as records were written before stems and Han
	// characters were indexed: a search expands them (see searchTerms).
	SurfaceTerms bool
	// VectorKnown says the record tells whether its item has a stored
	// embedding (HasVector); records written before it was kept do not.
	VectorKnown, HasVector bool
	Terms                  []byte
	raw                    []byte
	// compressed says raw is the S2 encoding of the value's JSON.
	compressed bool
	value      map[string]any
}

// Bits of a record's flags byte.
const (
	flagIndexed     = 1 << 0
	flagVectorKnown = 1 << 1
	flagHasVector   = 1 << 2
	flagCompressed  = 1 << 3
	// flagExpandedTerms marks records whose terms are store.Tokenize's,
	// stems and Han characters included; records without it hold the
	// surface terms only.
	flagExpandedTerms = 1 << 4
	// flagTTL marks records that hold their TTL after the header.
	flagTTL = 1 << 5
)

// compressFrom is the size of a value's JSON from which it is stored
// compressed: audit and run records are larger, most memories smaller.
const compressFrom = 256

const recordHeader = 25

func encodeRecord(r *record) []byte {
	out := make([]byte, recordHeader, recordHeader+binary.MaxVarintLen64+len(r.Terms)+len(r.raw))
	if !r.Expires.IsZero() {
		binary.BigEndian.PutUint64(out[0:], uint64(r.Expires.UnixNano()))
	}
	binary.BigEndian.PutUint64(out[8:], uint64(r.Created.UnixNano()))
	binary.BigEndian.PutUint64(out[16:], uint64(r.Updated.UnixNano()))
	if r.Indexed {
		out[24] |= flagIndexed
	}
	if r.VectorKnown {
		out[24] |= flagVectorKnown
	}
	if r.HasVector {
		out[24] |= flagHasVector
	}
	if !r.SurfaceTerms {
		out[24] |= flagExpandedTerms
	}
	if r.TTL > 0 {
		out[24] |= flagTTL
		out = binary.AppendUvarint(out, uint64(r.TTL))
	}
	out = binary.AppendUvarint(out, uint64(len(r.Terms)))
	out = append(out, r.Terms...)
	if n := s2.MaxEncodedLen(len(r.raw)); len(r.raw) >= compressFrom && n > 0 {
		at := len(out)
		out = slices.Grow(out, n)
		if enc := s2.Encode(out[at:cap(out)], r.raw); len(enc) <= len(r.raw)-len(r.raw)/8 {
			out[24] |= flagCompressed
			return out[:at+len(enc)]
		}
	}
	return append(out, r.raw...)
}

// parseRecord reads a stored record; the result aliases v.
func parseRecord(v []byte) (*record, error) {
	if len(v) < recordHeader+1 {
		return nil, errors.New("corrupt item: short value")
	}
	r := &record{
		Created:     time.Unix(0, int64(binary.BigEndian.Uint64(v[8:]))).UTC(),
		Updated:     time.Unix(0, int64(binary.BigEndian.Uint64(v[16:]))).UTC(),
		Indexed:     v[24]&flagIndexed != 0,
		VectorKnown: v[24]&flagVectorKnown != 0,
		HasVector:   v[24]&flagHasVector != 0,
		compressed:  v[24]&flagCompressed != 0,
		// Records written before flagExpandedTerms have it clear.
		SurfaceTerms: v[24]&flagExpandedTerms == 0,
	}
	if e := binary.BigEndian.Uint64(v); e != 0 {
		r.Expires = time.Unix(0, int64(e)).UTC()
	}
	at := recordHeader
	if v[24]&flagTTL != 0 {
		ttl, w := binary.Uvarint(v[at:])
		if w <= 0 || ttl > math.MaxInt64 {
			return nil, errors.New("corrupt item: bad ttl")
		}
		r.TTL, at = time.Duration(ttl), at+w
	}
	n, w := binary.Uvarint(v[at:])
	rest := v[at+max(w, 0):]
	if w <= 0 || uint64(len(rest)) < n {
		return nil, errors.New("corrupt item: bad terms length")
	}
	r.Terms, r.raw = rest[:n], rest[n:]
	return r, nil
}

// searchTerms returns the terms a search matches the record by. Records
// written before stems and Han characters were indexed hold their text's
// surface terms; those are expanded as store.Tokenize expands them today,
// so a data directory written then needs no re-indexing: its items match
// "cat" for "cats" and "猫" in "猫を飼う" as items stored now do, and a Put
// (a memory's recall rewrites it) stores them expanded.
func (r *record) searchTerms() []string {
	terms := strings.Fields(string(r.Terms))
	if r.SurfaceTerms {
		return store.ExpandSurfaceTerms(terms)
	}
	return terms
}

// decodeValue decodes the value JSON once.
func (r *record) decodeValue() (map[string]any, error) {
	if r.value == nil {
		raw := r.raw
		if r.compressed {
			var err error
			if raw, err = s2.Decode(nil, raw); err != nil {
				return nil, fmt.Errorf("decompress item value: %w", err)
			}
		}
		v, err := decodeObject(raw)
		if err != nil {
			return nil, fmt.Errorf("decode item value: %w", err)
		}
		r.value = v
	}
	return r.value, nil
}

func namespacePrefix(ns []string) []byte {
	return appendNamespace(make([]byte, 0, namespaceSize(ns)), ns)
}

// namespaceSize is the length of namespacePrefix(ns).
func namespaceSize(ns []string) int {
	n := 2
	for _, e := range ns {
		n += uvarintSize(uint64(len(e))+1) + len(e)
	}
	return n
}

// uvarintSize is the length of the uvarint encoding of v.
func uvarintSize(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func appendNamespace(out []byte, ns []string) []byte {
	out = append(out, kindItem, '/')
	for _, e := range ns {
		out = binary.AppendUvarint(out, uint64(len(e))+1)
		out = append(out, e...)
	}
	return out
}

// itemKey is the key of an item, made in one allocation.
func itemKey(ns []string, key string) []byte {
	out := appendNamespace(make([]byte, 0, namespaceSize(ns)+1+len(key)), ns)
	return append(append(out, 0), key...)
}

// vectorKey is the key of the embedding of the item at item key k.
func vectorKey(k []byte) []byte {
	return append([]byte{kindVector}, k[1:]...)
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

func (s *Store) expired(expiresNano uint64, now time.Time) bool {
	return expiresNano != 0 && now.UnixNano() >= int64(expiresNano)
}

// Put implements store.Store. Overwriting an item keeps its creation time.
func (s *Store) Put(ctx context.Context, namespace []string, key string, value map[string]any, opts store.PutOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.d.now().UTC()
	p, err := s.prepare(ctx, store.BatchPut{Namespace: namespace, Key: key, Value: value, Opts: opts}, now)
	if err != nil {
		return err
	}
	if err := s.write(ctx, []putItem{p}, now); err != nil {
		return fmt.Errorf("store put %q/%s: %w", namespace, key, err)
	}
	return nil
}

// PutBatch implements store.Batcher: the items are put as Put puts them
// (deleted as Delete deletes them), in one transaction.
func (s *Store) PutBatch(ctx context.Context, items []store.BatchPut) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.d.now().UTC()
	ps := make([]putItem, len(items))
	for i, it := range items {
		if it.Delete {
			ps[i] = putItem{namespace: it.Namespace, key: it.Key, k: itemKey(it.Namespace, it.Key), delete: true}
			continue
		}
		p, err := s.prepare(ctx, it, now)
		if err != nil {
			return err
		}
		ps[i] = p
	}
	if err := s.write(ctx, ps, now); err != nil {
		return fmt.Errorf("store put batch of %d items: %w", len(items), err)
	}
	return nil
}

// write puts and deletes the items in one transaction under their locks,
// then records what it wrote in the DB's knownItems.
func (s *Store) write(ctx context.Context, ps []putItem, now time.Time) error {
	keys := itemKeys(ps)
	unlock := s.d.itemLocks.lock(keys)
	defer unlock()
	useKnown := !repeats(keys)
	var facts []itemFacts
	var vlog bool
	err := s.d.update(ctx, func(txn *bdg.Txn) error {
		var err error
		facts, err = s.writeItems(txn, ps, now, useKnown, len(ps) > 1, &vlog)
		return err
	})
	if vlog {
		s.d.logs.wroteValueLog()
	}
	s.d.items.learn(ps, facts, err == nil)
	return err
}

// itemKeys returns the items' keys.
func itemKeys(ps []putItem) [][]byte {
	keys := make([][]byte, len(ps))
	for i, p := range ps {
		keys[i] = p.k
	}
	return keys
}

// writeItems puts and deletes the items in txn (see put) and returns what
// knownItems keeps of each. Items that appear twice must not useKnown
// (knownItems knows them as they were before the transaction). wrap names
// the item in its error.
func (s *Store) writeItems(txn *bdg.Txn, ps []putItem, now time.Time, useKnown, wrap bool, vlog *bool) ([]itemFacts, error) {
	facts := make([]itemFacts, len(ps))
	for i, p := range ps {
		var err error
		op := "put"
		if p.delete {
			op, err = "delete", s.d.deleteItem(txn, p.k)
		} else {
			facts[i], err = s.put(txn, p, now, useKnown, vlog)
		}
		if err != nil && wrap {
			err = fmt.Errorf("store %s %q/%s: %w", op, p.namespace, p.key, err)
		}
		if err != nil {
			return nil, err
		}
	}
	return facts, nil
}

// repeats reports whether a key appears twice.
func repeats(keys [][]byte) bool {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[string(k)] {
			return true
		}
		seen[string(k)] = true
	}
	return false
}

// putItem is an item prepared for a put: its stored record, key and
// embedding.
type putItem struct {
	namespace []string
	key       string
	k         []byte
	rec       record
	vec       []float32
	delete    bool
	// fresh is set when the caller knows no item is stored under the key
	// (store.BatchPut.New): the put reads none.
	fresh bool
}

func (s *Store) prepare(ctx context.Context, it store.BatchPut, now time.Time) (putItem, error) {
	p, err := store.PrepareItem(it.Namespace, it.Key, it.Value, it.Opts, now)
	if err != nil {
		return putItem{}, err
	}
	out := putItem{namespace: it.Namespace, key: it.Key, k: itemKey(it.Namespace, it.Key), fresh: it.New,
		rec: record{Created: now, Updated: now, Indexed: p.Indexed, Terms: []byte(p.Terms), raw: p.Raw, Expires: p.Expires}}
	if !p.Expires.IsZero() {
		out.rec.TTL = it.Opts.TTL
	}
	if s.emb != nil {
		if out.vec, err = store.EmbedItem(ctx, s.emb, it.Value, it.Opts); err != nil {
			return putItem{}, fmt.Errorf("store put %q/%s: %w", it.Namespace, it.Key, err)
		}
	}
	return out, nil
}

// put writes a prepared item in txn, keeping the creation time of the item
// it replaces and deleting that item's embedding when it may have one, and
// returns what knownItems keeps of it. It reads the item replaced unless
// useKnown and the DB knows it. It sets *vlog when it writes a value that
// may go to the value log.
func (s *Store) put(txn *bdg.Txn, p putItem, now time.Time, useKnown bool, vlog *bool) (itemFacts, error) {
	created := now
	staleVector := false // whether the item replaced may have a stored embedding
	if p.fresh {
		// Nothing to keep of an item that is not stored.
	} else if known, ok := s.d.items.get(p.k); ok && useKnown {
		if known.expires.IsZero() || now.Before(known.expires) {
			created = known.created
		}
		staleVector = known.hasVector
	} else if item, err := txn.Get(p.k); err == nil {
		err := item.Value(func(v []byte) error {
			old, err := parseRecord(v)
			if err != nil {
				return err
			}
			if old.Expires.IsZero() || now.Before(old.Expires) {
				created = old.Created
			}
			staleVector = !old.VectorKnown || old.HasVector
			return nil
		})
		if err != nil {
			return itemFacts{}, fmt.Errorf("previous value: %w", err)
		}
	} else if !errors.Is(err, bdg.ErrKeyNotFound) {
		return itemFacts{}, err
	}
	r := p.rec
	r.Created = created
	r.VectorKnown, r.HasVector = true, p.vec != nil
	e := bdg.NewEntry(p.k, encodeRecord(&r))
	if !r.Expires.IsZero() && s.d.wallClock {
		e.ExpiresAt = uint64(r.Expires.Unix()) + 1
	}
	if err := s.setEntry(txn, e, vlog); err != nil {
		return itemFacts{}, err
	}
	facts := itemFacts{created: created, expires: r.Expires, hasVector: p.vec != nil}
	if len(e.Value) <= maxKnownValue {
		facts.value = e.Value
	}
	// A vector made from the previous value no longer describes it. An
	// item that is new, or whose record says it has none, has none.
	if p.vec == nil {
		if !staleVector {
			return facts, nil
		}
		return facts, s.d.deleteIn(txn, vectorKey(p.k))
	}
	ve := bdg.NewEntry(vectorKey(p.k), store.EncodeVector(s.emb.Name(), p.vec))
	ve.ExpiresAt = e.ExpiresAt
	return facts, s.setEntry(txn, ve, vlog)
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, namespace []string, key string) (*store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *store.Item
	now := s.d.now()
	k := itemKey(namespace, key)
	if known, ok := s.d.items.get(k); ok && known.value != nil {
		rec, ok, err := s.decode(known.value, now)
		if err == nil && ok {
			out, err = rec.item(namespace, key)
		} else if err == nil {
			err = store.ErrNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("store get %q/%s: %w", namespace, key, err)
		}
		return out, nil
	}
	err := s.d.view(func(txn *bdg.Txn) error {
		item, err := txn.Get(k)
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		rec, ok, err := s.decode(v, now)
		if err != nil {
			return err
		}
		if !ok {
			return store.ErrNotFound
		}
		out, err = rec.item(namespace, key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store get %q/%s: %w", namespace, key, err)
	}
	return out, nil
}

// RefreshTTL implements store.TTLRefresher: each live item with a TTL
// expires its TTL after now (its embedding with it).
func (s *Store) RefreshTTL(ctx context.Context, items []store.ItemRef) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	now := s.d.now().UTC()
	keys := make([][]byte, len(items))
	for i, it := range items {
		keys[i] = itemKey(it.Namespace, it.Key)
	}
	unlock := s.d.itemLocks.lock(keys)
	defer unlock()
	var vlog bool
	err := s.d.update(ctx, func(txn *bdg.Txn) error {
		for _, k := range keys {
			if err := s.refreshTTL(txn, k, now, &vlog); err != nil {
				return err
			}
		}
		return nil
	})
	if vlog {
		s.d.logs.wroteValueLog()
	}
	for _, k := range keys {
		s.d.items.forget(k)
	}
	if err != nil {
		return fmt.Errorf("store refresh ttl of %d items: %w", len(items), err)
	}
	return nil
}

// refreshTTL restarts the TTL of the item at item key k in txn, when it is
// live and has one. It sets *vlog when it writes a value that may go to the
// value log.
func (s *Store) refreshTTL(txn *bdg.Txn, k []byte, now time.Time, vlog *bool) error {
	v, err := valueOf(txn, k)
	if v == nil || err != nil {
		return err
	}
	rec, live, err := s.decode(v, now)
	if err != nil || !live || rec.Expires.IsZero() {
		return err
	}
	ttl := rec.TTL
	if ttl <= 0 {
		ttl = rec.Expires.Sub(rec.Updated)
	}
	e := bdg.NewEntry(k, withTTL(v, now.Add(ttl), ttl))
	if s.d.wallClock {
		e.ExpiresAt = uint64(now.Add(ttl).Unix()) + 1
	}
	if err := s.setEntry(txn, e, vlog); err != nil {
		return err
	}
	if rec.VectorKnown && !rec.HasVector {
		return nil
	}
	vv, err := valueOf(txn, vectorKey(k))
	if vv == nil || err != nil {
		return err
	}
	ve := bdg.NewEntry(vectorKey(k), vv)
	ve.ExpiresAt = e.ExpiresAt
	return s.setEntry(txn, ve, vlog)
}

// valueOf returns a copy of the value of key in txn, nil when there is none.
func valueOf(txn *bdg.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

// setEntry sets e in txn, counting what it writes; it sets *vlog when e
// may go to the value log.
func (s *Store) setEntry(txn *bdg.Txn, e *bdg.Entry, vlog *bool) error {
	if s.d.logs.inValueLog(len(e.Value)) {
		*vlog = true
	}
	s.d.wrote(len(e.Key) + len(e.Value))
	return txn.SetEntry(e)
}

// withTTL returns the stored record v expiring at expires, with its TTL
// recorded as ttl; the rest of the record (its terms and value) is kept as
// it is stored.
func withTTL(v []byte, expires time.Time, ttl time.Duration) []byte {
	rest := v[recordHeader:]
	if v[24]&flagTTL != 0 {
		_, w := binary.Uvarint(rest)
		rest = rest[w:]
	}
	out := make([]byte, recordHeader, recordHeader+binary.MaxVarintLen64+len(rest))
	copy(out, v[:recordHeader])
	binary.BigEndian.PutUint64(out[0:], uint64(expires.UnixNano()))
	out[24] |= flagTTL
	out = binary.AppendUvarint(out, uint64(ttl))
	return append(out, rest...)
}

// decode reads a stored value; ok is false when it has expired.
func (s *Store) decode(v []byte, now time.Time) (*record, bool, error) {
	if len(v) < 8 {
		return nil, false, errors.New("corrupt item: short value")
	}
	if s.expired(binary.BigEndian.Uint64(v), now) {
		return nil, false, nil
	}
	rec, err := parseRecord(v)
	return rec, err == nil, err
}

func (r *record) item(ns []string, key string) (*store.Item, error) {
	v, err := r.decodeValue()
	if err != nil {
		return nil, err
	}
	return &store.Item{Namespace: ns, Key: key, Value: v, CreatedAt: r.Created, UpdatedAt: r.Updated, ExpiresAt: r.Expires}, nil
}

// Delete implements store.Store. Deleting a missing item is not an error.
func (s *Store) Delete(ctx context.Context, namespace []string, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := itemKey(namespace, key)
	unlock := s.d.itemLocks.lock([][]byte{k})
	defer unlock()
	err := s.d.update(ctx, func(txn *bdg.Txn) error { return s.d.deleteItem(txn, k) })
	s.d.items.forget(k)
	if err != nil {
		return fmt.Errorf("store delete %q/%s: %w", namespace, key, err)
	}
	return nil
}

// deleteItem deletes the item at item key k and its embedding in txn.
func (d *DB) deleteItem(txn *bdg.Txn, k []byte) error {
	if err := d.deleteIn(txn, k); err != nil {
		return err
	}
	return d.deleteIn(txn, vectorKey(k))
}

// deleteIn deletes key in txn.
func (d *DB) deleteIn(txn *bdg.Txn, key []byte) error {
	d.wrote(len(key))
	return txn.Delete(key)
}

// Search implements store.Store: items under the namespace prefix that match
// the filter, ranked by cosine similarity with the query when the store has
// an embedder (items without a vector of its model are left out), else by BM25 when there is a query (non-indexed items and
// items sharing no term with the query are left out), otherwise newest first.
// A zero Limit returns every match.
func (s *Store) Search(ctx context.Context, nsPrefix []string, q store.SearchQuery) ([]store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q.Limit < 0 || q.Offset < 0 {
		return nil, fmt.Errorf("store search %q: negative limit %d or offset %d", nsPrefix, q.Limit, q.Offset)
	}
	textSearch := strings.TrimSpace(q.Query) != ""
	var qvec []float32
	if textSearch && s.emb != nil {
		var err error
		if qvec, err = store.EmbedQuery(ctx, s.emb, q.Query); err != nil {
			return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
		}
	}
	now := s.d.now()
	type hit struct {
		key []byte
		rec *record
		vec []float32
	}
	var (
		hits []hit
	)
	err := s.d.view(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.IteratorOptions{Prefix: namespacePrefix(nsPrefix), PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			rec, ok, err := s.decode(v, now)
			if err != nil {
				return fmt.Errorf("item %q: %w", it.Item().Key(), err)
			}
			if !ok || (textSearch && !rec.Indexed) {
				continue
			}
			if len(q.Filter) > 0 {
				value, err := rec.decodeValue()
				if err != nil {
					return fmt.Errorf("item %q: %w", it.Item().Key(), err)
				}
				match, err := store.MatchFilter(value, q.Filter)
				if err != nil {
					return err
				}
				if !match {
					continue
				}
			}
			h := hit{key: it.Item().KeyCopy(nil), rec: rec}
			if qvec != nil {
				if h.vec, err = s.vector(txn, h.key); err != nil {
					return fmt.Errorf("item %q: %w", h.key, err)
				}
			}
			hits = append(hits, h)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
	}
	updated := func(h hit) time.Time { return h.rec.Updated }
	var ranked []store.Ranked[hit]
	if qvec != nil {
		ranked = store.RankVectors(qvec, hits, func(h hit) []float32 { return h.vec }, updated, q.Offset, q.Limit)
	} else {
		ranked = store.Rank(q.Query, hits, func(h hit) []string { return h.rec.searchTerms() }, updated, q.Offset, q.Limit)
	}
	items := make([]store.Item, 0, len(ranked))
	for _, r := range ranked {
		h := r.Item
		ns, key, err := decodeItemKey(h.key)
		if err != nil {
			return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
		}
		item, err := h.rec.item(ns, key)
		if err != nil {
			return nil, fmt.Errorf("store search %q: item %q: %w", nsPrefix, h.key, err)
		}
		item.Score = r.Score
		items = append(items, *item)
	}
	return items, nil
}

// vector reads the embedding of the item at item key k: nil when it has none
// or it was made by another model than the store's.
func (s *Store) vector(txn *bdg.Txn, k []byte) ([]float32, error) {
	item, err := txn.Get(vectorKey(k))
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var vec []float32
	err = item.Value(func(v []byte) error {
		model, dv, err := store.DecodeVector(v)
		if err == nil && model == s.emb.Name() {
			vec = dv
		}
		return err
	})
	return vec, err
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
	err := s.d.view(func(txn *bdg.Txn) error {
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
			if !store.MatchNamespace(ns, q.Prefix, q.Suffix) {
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
	return store.Page(out, q.Offset, q.Limit), nil
}

// Stats returns the counters of the DB the store writes to.
func (s *Store) Stats() Stats { return s.d.Stats() }
