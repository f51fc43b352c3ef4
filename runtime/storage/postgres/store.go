package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/store"
)

// Store is the PostgreSQL store.Store; get one from (*DB).Store.
type Store struct {
	d *DB
	// emb, when set, embeds items at Put and queries at Search.
	emb store.Embedder
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.TTLRefresher = (*Store)(nil)
)

// Put implements store.Store. Re-putting a live item keeps its creation time.
func (s *Store) Put(ctx context.Context, namespace []string, key string, value map[string]any, opts store.PutOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.d.now()
	p, err := store.PrepareItem(namespace, key, value, opts, now)
	if err != nil {
		return err
	}
	var (
		vec   []float32
		model *string
	)
	if s.emb != nil {
		if vec, err = store.EmbedItem(ctx, s.emb, value, opts); err != nil {
			return fmt.Errorf("store put %q/%s: %w", namespace, key, err)
		}
		if vec != nil {
			name := s.emb.Name()
			model = &name
		}
	}
	var expires, ttl *int64
	if !p.Expires.IsZero() {
		e, t := p.Expires.UnixNano(), opts.TTL.Nanoseconds()
		expires, ttl = &e, &t
	}
	err = s.d.execFenced(ctx, `
INSERT INTO store_items (namespace, key, value, created_ns, updated_ns, expires_ns, indexed, terms, embedding, embedding_model, ttl_ns)
VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, updated_ns = EXCLUDED.updated_ns,
	expires_ns = EXCLUDED.expires_ns, ttl_ns = EXCLUDED.ttl_ns, indexed = EXCLUDED.indexed, terms = EXCLUDED.terms,
	embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
	created_ns = CASE WHEN store_items.expires_ns IS NULL OR store_items.expires_ns > EXCLUDED.updated_ns
		THEN store_items.created_ns ELSE EXCLUDED.created_ns END`,
		namespace, key, p.Raw, now.UnixNano(), expires, p.Indexed, p.Terms, vec, model, ttl)
	if err != nil {
		return fmt.Errorf("store put %q/%s: %w", namespace, key, err)
	}
	return nil
}

// row is one stored item as read from store_items.
type row struct {
	namespace        []string
	key              string
	raw              []byte
	created, updated int64
	expires          *int64
	terms            string
	// vec is the item's embedding by the store's model, when read.
	vec   []float32
	value map[string]any
}

func (r *row) decode() error {
	if r.value == nil {
		if err := json.Unmarshal(r.raw, &r.value); err != nil {
			return fmt.Errorf("decode item %q/%s: %w", r.namespace, r.key, err)
		}
	}
	return nil
}

func (r *row) item() store.Item {
	it := store.Item{Namespace: r.namespace, Key: r.key, Value: r.value,
		CreatedAt: time.Unix(0, r.created).UTC(), UpdatedAt: time.Unix(0, r.updated).UTC()}
	if r.expires != nil {
		it.ExpiresAt = time.Unix(0, *r.expires).UTC()
	}
	return it
}

// Get implements store.Store; an expired item is not found.
func (s *Store) Get(ctx context.Context, namespace []string, key string) (*store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := row{namespace: namespace, key: key}
	err := s.d.pool.QueryRow(ctx, `
SELECT value, created_ns, updated_ns, expires_ns FROM store_items
WHERE namespace = $1 AND key = $2 AND (expires_ns IS NULL OR expires_ns > $3)`,
		namespace, key, s.d.now().UnixNano()).Scan(&r.raw, &r.created, &r.updated, &r.expires)
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err == nil {
		err = r.decode()
	}
	if err != nil {
		return nil, fmt.Errorf("store get %q/%s: %w", namespace, key, err)
	}
	it := r.item()
	return &it, nil
}

// RefreshTTL implements store.TTLRefresher: each live item with a TTL
// expires its TTL after now.
func (s *Store) RefreshTTL(ctx context.Context, items []store.ItemRef) error {
	if len(items) == 0 {
		return ctx.Err()
	}
	namespaces := make([]string, len(items))
	keys := make([]string, len(items))
	for i, it := range items {
		b, err := json.Marshal(it.Namespace)
		if err != nil {
			return fmt.Errorf("store refresh ttl: %w", err)
		}
		namespaces[i], keys[i] = string(b), it.Key
	}
	// ttl_ns is recorded at Put; an item stored before it was has kept
	// its TTL as expires_ns - updated_ns.
	err := s.d.execFenced(ctx, `
UPDATE store_items AS s SET ttl_ns = COALESCE(s.ttl_ns, s.expires_ns - s.updated_ns),
	expires_ns = $1 + COALESCE(s.ttl_ns, s.expires_ns - s.updated_ns)
FROM unnest($2::text[], $3::text[]) AS r(namespace, key)
WHERE s.namespace = ARRAY(SELECT jsonb_array_elements_text(r.namespace::jsonb)) AND s.key = r.key
	AND s.expires_ns IS NOT NULL AND s.expires_ns > $1`,
		s.d.now().UnixNano(), namespaces, keys)
	if err != nil {
		return fmt.Errorf("store refresh ttl of %d items: %w", len(items), err)
	}
	return nil
}

// Delete implements store.Store; deleting a missing item is not an error.
func (s *Store) Delete(ctx context.Context, namespace []string, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.d.execFenced(ctx, `DELETE FROM store_items WHERE namespace = $1 AND key = $2`, namespace, key); err != nil {
		return fmt.Errorf("store delete %q/%s: %w", namespace, key, err)
	}
	return nil
}

// prefixClause selects the namespaces under prefix, with its arguments
// numbered from n.
func prefixClause(prefix []string, n int) (string, []any) {
	if len(prefix) == 0 {
		return "TRUE", nil
	}
	return fmt.Sprintf("namespace[1] = $%d AND namespace[1:%d] = $%d::text[]", n, len(prefix), n+1), []any{prefix[0], prefix}
}

// Search implements store.Store: live items under the prefix are selected in
// SQL, filtered and ranked in Go exactly as the Badger store does (by cosine
// similarity, computed exactly in Go, when the store has an embedder).
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
	} else if textSearch && len(q.Filter) == 0 {
		return s.searchText(ctx, nsPrefix, q)
	}
	where, args := prefixClause(nsPrefix, 2)
	args = append([]any{s.d.now().UnixNano()}, args...)
	vecCol := "NULL::real[]"
	if qvec != nil {
		vecCol = fmt.Sprintf("CASE WHEN embedding_model = $%d THEN embedding END", len(args)+1)
		args = append(args, s.emb.Name())
	}
	sql := `SELECT namespace, key, value, created_ns, updated_ns, expires_ns, terms, ` + vecCol + ` FROM store_items
WHERE (expires_ns IS NULL OR expires_ns > $1) AND ` + where
	if textSearch {
		sql += " AND indexed"
	}
	rows, err := s.d.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
	}
	var cands []*row
	for rows.Next() {
		r := &row{}
		if err := rows.Scan(&r.namespace, &r.key, &r.raw, &r.created, &r.updated, &r.expires, &r.terms, &r.vec); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
		}
		cands = append(cands, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
	}
	sortRows(cands)
	if len(q.Filter) > 0 {
		kept := cands[:0]
		for _, r := range cands {
			if err := r.decode(); err != nil {
				return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
			}
			match, err := store.MatchFilter(r.value, q.Filter)
			if err != nil {
				return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
			}
			if match {
				kept = append(kept, r)
			}
		}
		cands = kept
	}
	if qvec != nil {
		return pageItems(nsPrefix, store.RankVectors(qvec, cands, func(r *row) []float32 { return r.vec }, rowUpdated, q.Offset, q.Limit))
	}
	return rankedItems(nsPrefix, q, cands, nil)
}

// searchText answers a text query without a filter through the GIN index on
// the items' terms: only the items sharing a term with the query are read,
// and the size of the collection under the prefix (items and terms, counted
// in SQL in the same round trip) makes their BM25 scores those of a full scan.
func (s *Store) searchText(ctx context.Context, nsPrefix []string, q store.SearchQuery) ([]store.Item, error) {
	var lexemes []string
	seen := map[string]bool{}
	for _, t := range store.Tokenize(q.Query) {
		if !seen[t] {
			seen[t] = true
			lexemes = append(lexemes, "'"+strings.NewReplacer(`\`, `\\`, "'", "''").Replace(t)+"'")
		}
	}
	if len(lexemes) == 0 {
		return []store.Item{}, nil
	}
	where, args := prefixClause(nsPrefix, 2)
	live := `(expires_ns IS NULL OR expires_ns > $1) AND indexed AND ` + where
	args = append([]any{s.d.now().UnixNano()}, args...)
	b := &pgx.Batch{}
	var corpus store.Corpus
	b.Queue(`SELECT count(*), coalesce(sum(term_count), 0) FROM store_items WHERE `+live, args...).QueryRow(func(r pgx.Row) error {
		return r.Scan(&corpus.Docs, &corpus.Terms)
	})
	var cands []*row
	b.Queue(`SELECT namespace, key, value, created_ns, updated_ns, expires_ns, terms FROM store_items
WHERE `+live+fmt.Sprintf(` AND tsv @@ $%d::tsquery`, len(args)+1), append(args, strings.Join(lexemes, " | "))...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			r := &row{}
			if err := rows.Scan(&r.namespace, &r.key, &r.raw, &r.created, &r.updated, &r.expires, &r.terms); err != nil {
				return err
			}
			cands = append(cands, r)
		}
		return rows.Err()
	})
	if err := s.d.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
	}
	sortRows(cands)
	return rankedItems(nsPrefix, q, cands, &corpus)
}

// sortRows puts rows in a stable order before ranking, so ties fall the same
// way as in Badger (namespace, then key, in byte order).
func sortRows(cands []*row) {
	slices.SortFunc(cands, func(a, b *row) int {
		if c := compareNamespaces(a.namespace, b.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
}

// rankedItems ranks candidates (corpus: see store.RankIn) and decodes the
// page asked for.
func rankedItems(nsPrefix []string, q store.SearchQuery, cands []*row, corpus *store.Corpus) ([]store.Item, error) {
	return pageItems(nsPrefix, store.RankIn(q.Query, cands, corpus,
		func(r *row) []string { return strings.Fields(r.terms) },
		rowUpdated, q.Offset, q.Limit))
}

func rowUpdated(r *row) time.Time { return time.Unix(0, r.updated) }

// pageItems decodes a page of ranked rows.
func pageItems(nsPrefix []string, ranked []store.Ranked[*row]) ([]store.Item, error) {
	items := make([]store.Item, 0, len(ranked))
	for _, h := range ranked {
		if err := h.Item.decode(); err != nil {
			return nil, fmt.Errorf("store search %q: %w", nsPrefix, err)
		}
		it := h.Item.item()
		it.Score = h.Score
		items = append(items, it)
	}
	return items, nil
}

// compareNamespaces orders namespaces as the Badger key encoding does:
// element by element, a shorter element (by length first) sorting first.
func compareNamespaces(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if len(a[i]) != len(b[i]) {
			return len(a[i]) - len(b[i])
		}
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// ListNamespaces implements store.Store.
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
	where, args := prefixClause(fixed, 2)
	rows, err := s.d.pool.Query(ctx, `SELECT DISTINCT namespace FROM store_items WHERE (expires_ns IS NULL OR expires_ns > $1) AND `+where,
		append([]any{s.d.now().UnixNano()}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	defer rows.Close()
	seen := map[string][]string{}
	for rows.Next() {
		var ns []string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("list namespaces: %w", err)
		}
		if !store.MatchNamespace(ns, q.Prefix, q.Suffix) {
			continue
		}
		if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
			ns = ns[:q.MaxDepth]
		}
		seen[strings.Join(ns, "\x00")] = ns
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	out := make([][]string, 0, len(seen))
	for _, ns := range seen {
		out = append(out, ns)
	}
	slices.SortFunc(out, slices.Compare)
	return store.Page(out, q.Offset, q.Limit), nil
}
