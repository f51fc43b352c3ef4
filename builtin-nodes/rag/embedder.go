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
// fallback embedder because the configured one is not configured here or
// fails.
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
	return e.FallBack(ctx, s, e.Spec, err, emit)
}

// FallBack returns the fallback embedder and its name, standing in for
// wanted, which cannot be used because of cause; it is announced on emit as
// an embedder_fallback event.
func (e EmbedderSpec) FallBack(ctx context.Context, s *node.Services, wanted string, cause error, emit event.Sink) (embeddings.Embedder, string, error) {
	fb, err := llm.Embedder(ctx, s, e.Fallback)
	if err != nil {
		return nil, "", err
	}
	if emit != nil {
		emit(event.Event{Type: EmbedderFallbackEvent, Payload: map[string]any{
			"wanted": wanted, "using": e.Fallback, "offline": true, "reason": cause.Error(),
		}})
	}
	return fb, e.Fallback, nil
}
