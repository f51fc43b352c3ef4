package llm

import (
	"context"

	"github.com/graphctl/graphctl/builtin-nodes/llm/internal/hashvec"
)

// HashEmbedder is a local embeddings.Embedder: a hashed bag of words per
// text, so texts sharing words are close. It needs no server and is what
// scripted runs and the "hash" embedding spec use.
type HashEmbedder struct {
	// Dim is the vector length.
	Dim int
}

// EmbedDocuments implements embeddings.Embedder.
func (h HashEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = hashvec.Vector(t, h.Dim)
	}
	return out, nil
}

// EmbedQuery implements embeddings.Embedder.
func (h HashEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return hashvec.Vector(text, h.Dim), nil
}
