package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Embedder turns text into vectors for semantic search. Its method set is
// that of langchaingo's embeddings.Embedder, with the model's name: vectors
// stored under another name are stale and ignored by searches.
type Embedder interface {
	Name() string
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// EmbeddingError is the failure of an embedder: the model behind semantic
// search could not embed an item or a query. Callers tell it from an error of
// the request or of the database with errors.As.
type EmbeddingError struct {
	// Model is the embedder's name.
	Model string
	// Query is true when the text was a search's query, false for an item.
	Query bool
	// Err is what the embedder returned.
	Err error
}

func (e *EmbeddingError) Error() string {
	if e.Query {
		return fmt.Sprintf("embed query with %s: %v", e.Model, e.Err)
	}
	return fmt.Sprintf("embed with %s: %v", e.Model, e.Err)
}

func (e *EmbeddingError) Unwrap() error { return e.Err }

// EmbedQuery returns the vector of a search's query text; a failure is an
// *EmbeddingError.
func EmbedQuery(ctx context.Context, e Embedder, text string) ([]float32, error) {
	vec, err := e.EmbedQuery(ctx, text)
	if err != nil {
		return nil, &EmbeddingError{Model: e.Name(), Query: true, Err: err}
	}
	return vec, nil
}

// EmbedItem returns the vector of an item's indexed text (the fields of
// opts.Index, every string field when nil), or nil when the item is not
// indexed or has no text; a failure of the embedder is an *EmbeddingError.
func EmbedItem(ctx context.Context, e Embedder, value map[string]any, opts PutOptions) ([]float32, error) {
	if opts.Index != nil && len(opts.Index) == 0 {
		return nil, nil
	}
	text := strings.TrimSpace(strings.Join(IndexText(value, opts.Index), "\n"))
	if text == "" {
		return nil, nil
	}
	vecs, err := e.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return nil, &EmbeddingError{Model: e.Name(), Err: err}
	}
	if len(vecs) != 1 || len(vecs[0]) == 0 {
		return nil, &EmbeddingError{Model: e.Name(), Err: fmt.Errorf("got %d vectors for one text", len(vecs))}
	}
	return vecs[0], nil
}

// Cosine is the cosine similarity of a and b; 0 when their lengths differ or
// either is zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// RankVectors orders the candidates of a semantic search as every backend
// must: by cosine similarity of their vector with the query's, then newest
// update first; candidates without a vector (nil: not indexed, or embedded by
// another model) or of another dimension are left out. It returns the page
// at offset of at most limit items (limit 0 = all).
func RankVectors[T any](query []float32, cands []T, vector func(T) []float32, updated func(T) time.Time, offset, limit int) []Ranked[T] {
	hits := make([]Ranked[T], 0, len(cands))
	for _, c := range cands {
		if v := vector(c); len(v) == len(query) && len(v) > 0 {
			hits = append(hits, Ranked[T]{Item: c, Score: Cosine(query, v)})
		}
	}
	slices.SortStableFunc(hits, func(a, b Ranked[T]) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return updated(b.Item).Compare(updated(a.Item))
	})
	return Page(hits, offset, limit)
}

// EncodeVector serialises a vector with the name of the model that made it:
// uvarint(len(model)) model, then each component as a big-endian float32.
func EncodeVector(model string, v []float32) []byte {
	out := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(model)+4*len(v)), uint64(len(model)))
	out = append(out, model...)
	for _, x := range v {
		out = binary.BigEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

// DecodeVector reads what EncodeVector wrote.
func DecodeVector(b []byte) (model string, v []float32, err error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n || (uint64(len(b)-w)-n)%4 != 0 {
		return "", nil, errors.New("corrupt item vector")
	}
	model, b = string(b[w:w+int(n)]), b[w+int(n):]
	v = make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.BigEndian.Uint32(b[4*i:]))
	}
	return model, v, nil
}
