package store

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/graphctl/graphctl/runtime/store/jsonenc"
)

// Ranked is a search candidate with its relevance score.
type Ranked[T any] struct {
	Item  T
	Score float64
}

// Rank orders the candidates of a search as every backend must: with a
// non-blank query, by BM25 score over each candidate's indexed terms (those
// sharing no term with the query are dropped), then newest update first; it
// returns the page at offset of at most limit items (limit 0 = all).
// Candidates are the live items under the namespace prefix that passed the
// filter (and, for a text query, are indexed): document frequencies are taken
// over them.
func Rank[T any](query string, cands []T, terms func(T) []string, updated func(T) time.Time, offset, limit int) []Ranked[T] {
	return RankIn(query, cands, nil, terms, updated, offset, limit)
}

// RankIn is Rank over candidates selected from a larger set (those sharing a
// term with the query, found by an index): corpus is the size of the whole
// set, so the scores are those Rank gives over it. A nil corpus means the
// candidates are the whole set.
func RankIn[T any](query string, cands []T, corpus *Corpus, terms func(T) []string, updated func(T) time.Time, offset, limit int) []Ranked[T] {
	hits := make([]Ranked[T], len(cands))
	for i, c := range cands {
		hits[i].Item = c
	}
	if strings.TrimSpace(query) != "" {
		docs := make([][]string, len(cands))
		for i, c := range cands {
			docs[i] = terms(c)
		}
		var scores []float64
		if corpus != nil {
			scores = DefaultBM25.ScoreIn(Tokenize(query), docs, *corpus)
		} else {
			scores = DefaultBM25.Score(Tokenize(query), docs)
		}
		kept := hits[:0]
		for i := range hits {
			if scores[i] > 0 {
				hits[i].Score = scores[i]
				kept = append(kept, hits[i])
			}
		}
		hits = kept
	}
	slices.SortStableFunc(hits, func(a, b Ranked[T]) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return updated(b.Item).Compare(updated(a.Item))
	})
	return Page(hits, offset, limit)
}

// Page returns the items of s from offset, at most limit of them (0 = all).
func Page[T any](s []T, offset, limit int) []T {
	if offset >= len(s) {
		return []T{}
	}
	s = s[offset:]
	if limit > 0 && limit < len(s) {
		s = s[:limit]
	}
	return s
}

// MatchNamespace reports whether ns starts with prefix and ends with suffix,
// where "*" in either matches any one element.
func MatchNamespace(ns, prefix, suffix []string) bool {
	return matchElems(ns, prefix, false) && matchElems(ns, suffix, true)
}

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

// ValidNamespace checks a namespace an item is put under: at least one
// element, none empty.
func ValidNamespace(ns []string) error {
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

// Prepared is an item checked and encoded for a backend to write.
type Prepared struct {
	// Raw is the value's JSON.
	Raw []byte
	// Indexed says whether the item takes part in text search; Terms are its
	// indexed tokens, space-separated.
	Indexed bool
	Terms   string
	// Expires is zero for an item without a TTL.
	Expires time.Time
}

// PrepareItem checks a Put's arguments as every backend must (a valid
// namespace, a key, a TTL that is not negative) and encodes the value and its
// search terms. now is the time of the Put.
func PrepareItem(namespace []string, key string, value map[string]any, opts PutOptions, now time.Time) (*Prepared, error) {
	if err := ValidNamespace(namespace); err != nil {
		return nil, fmt.Errorf("store put %q: %w", key, err)
	}
	if key == "" {
		return nil, fmt.Errorf("store put in %q: empty key", namespace)
	}
	if opts.TTL < 0 {
		return nil, fmt.Errorf("store put %q/%s: negative TTL %v", namespace, key, opts.TTL)
	}
	if value == nil {
		value = map[string]any{}
	}
	raw, err := jsonenc.Append(nil, value)
	if err != nil {
		return nil, fmt.Errorf("store put %q/%s: encode value: %w", namespace, key, err)
	}
	p := &Prepared{Raw: raw, Indexed: opts.Index == nil || len(opts.Index) > 0}
	if p.Indexed {
		var terms []string
		for _, text := range IndexText(value, opts.Index) {
			terms = append(terms, Tokenize(text)...)
		}
		p.Terms = strings.Join(terms, " ")
	}
	if opts.TTL > 0 {
		p.Expires = now.Add(opts.TTL)
	}
	return p, nil
}
