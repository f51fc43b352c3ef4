package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/graphctl/graphctl/runtime/node"
)

// Environment variables of embedding models.
const (
	// EmbedderEnv, when set, replaces the embedding model a graph names
	// (as GRAPHCTL_LLM does for chat models), e.g. "openai:BAAI/bge-m3".
	EmbedderEnv = "GRAPHCTL_EMBEDDER"
	// EmbeddingsURLEnv points openai: embedding specs at an OpenAI-compatible
	// /v1/embeddings server of their own (HuggingFace TEI, Ollama's /v1,
	// vLLM, LocalAI), separate from the chat model's OPENAI_BASE_URL.
	EmbeddingsURLEnv = "GRAPHCTL_EMBEDDINGS_URL"
	// EmbeddingsKeyEnv is the key of that server, when it needs one.
	EmbeddingsKeyEnv = "GRAPHCTL_EMBEDDINGS_KEY"
)

// ErrNoEmbedder is returned (wrapped) by ResolveEmbedder when the embedding
// model named cannot be used here because nothing configures it (no key, no
// server URL); callers with an offline fallback use it then.
var ErrNoEmbedder = errors.New("embedding model not configured")

// ResolveEmbedder returns the embedder for spec and the name its vectors are
// recorded under. $GRAPHCTL_EMBEDDER replaces spec when set. An openai:MODEL
// spec talks to $GRAPHCTL_EMBEDDINGS_URL when set (key
// $GRAPHCTL_EMBEDDINGS_KEY), else to OpenAI or $OPENAI_BASE_URL with
// $OPENAI_API_KEY, through langchaingo's OpenAI client (POST
// /v1/embeddings); without any of them it fails with ErrNoEmbedder. Under a
// test script or a script: override it is the local hash embedder, named
// "hash".
func ResolveEmbedder(ctx context.Context, s *node.Services, spec string) (embeddings.Embedder, string, error) {
	if o := strings.TrimSpace(modelsOf(s).getenv(EmbedderEnv)); o != "" {
		spec = o
	}
	return EmbedderFor(ctx, s, spec)
}

// EmbedderFor is ResolveEmbedder without $GRAPHCTL_EMBEDDER: the embedder of
// a model recorded with stored vectors (to embed a query the same way).
func EmbedderFor(ctx context.Context, s *node.Services, spec string) (embeddings.Embedder, string, error) {
	m := modelsOf(s)
	spec = strings.TrimSpace(spec)
	if s != nil {
		scripted := ScriptKey.Has(s)
		o, _ := OverrideKey.Get(s)
		if scripted || strings.HasPrefix(strings.TrimSpace(o), "script:") {
			return HashEmbedder{Dim: 256}, "hash", nil
		}
	}
	provider, name, _ := strings.Cut(spec, ":")
	if strings.EqualFold(provider, "openai") && name != "" {
		if base := strings.TrimSpace(m.getenv(EmbeddingsURLEnv)); base != "" {
			key := m.getenv(EmbeddingsKeyEnv)
			if key == "" {
				key = "unused"
			}
			c, err := openai.New(openai.WithToken(key), openai.WithBaseURL(strings.TrimRight(base, "/")), openai.WithEmbeddingModel(name))
			if err != nil {
				return nil, "", fmt.Errorf("embedder %s at %s: %w", spec, base, err)
			}
			e, err := embeddings.NewEmbedder(c)
			if err != nil {
				return nil, "", fmt.Errorf("embedder %s: %w", spec, err)
			}
			return traceEmbedder(spec, e), spec, nil
		}
		if m.getenv("OPENAI_API_KEY") == "" && m.getenv("OPENAI_BASE_URL") == "" {
			return nil, "", fmt.Errorf("%w: %s needs OPENAI_API_KEY (OpenAI), OPENAI_BASE_URL or %s (an OpenAI-compatible /v1/embeddings server)",
				ErrNoEmbedder, spec, EmbeddingsURLEnv)
		}
	}
	e, err := Embedder(ctx, s, spec)
	if err != nil {
		if errors.Is(err, ErrNoModel) {
			return nil, "", fmt.Errorf("%w: %w", ErrNoEmbedder, err)
		}
		return nil, "", err
	}
	return traceEmbedder(spec, e), spec, nil
}
