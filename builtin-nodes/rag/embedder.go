package rag

import (
	"context"
	"errors"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

// EmbedderFallbackEvent is the event emitted when a corpus uses its offline
// fallback embedder because the configured one is not configured here.
const EmbedderFallbackEvent = "embedder_fallback"

// EmbedderSpec names the embedding model of a corpus: Spec (e.g.
// "openai:text-embedding-3-small"), and Fallback (e.g. "hash") used when Spec
// cannot be used here for want of a key or server.
type EmbedderSpec struct {
	Spec     string
	Fallback string
}

// Resolve returns the embedder and the name its vectors are recorded under.
// A fallback is announced on emit as an embedder_fallback event {wanted,
// using, reason, offline: true}.
func (e EmbedderSpec) Resolve(ctx context.Context, s *node.Services, emit event.Sink) (embeddings.Embedder, string, error) {
	emb, name, err := llm.ResolveEmbedder(ctx, s, e.Spec)
	if err == nil {
		return emb, name, nil
	}
	if e.Fallback == "" || !errors.Is(err, llm.ErrNoEmbedder) {
		return nil, "", err
	}
	fb, ferr := llm.Embedder(ctx, s, e.Fallback)
	if ferr != nil {
		return nil, "", ferr
	}
	fbName := e.Fallback
	if emit != nil {
		emit(event.Event{Type: EmbedderFallbackEvent, Payload: map[string]any{
			"wanted": e.Spec, "using": fbName, "offline": true, "reason": err.Error(),
		}})
	}
	return fb, fbName, nil
}
