package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/runtime/workspace"
)

// namedEmbedder is a langchaingo embedder with the name its vectors are
// recorded under.
type namedEmbedder struct {
	embeddings.Embedder
	name string
}

func (e namedEmbedder) Name() string { return e.name }

// itemStore returns the store behind serve's /store API: with
// $GRAPHCTL_EMBEDDER set, one that embeds the items put with their index
// fields and ranks queries by cosine similarity; otherwise nil (the
// workspace's store, text search by BM25).
func itemStore(ctx context.Context, ws *workspace.Workspace, extra node.Extra) (store.Store, string, error) {
	if strings.TrimSpace(os.Getenv(llm.EmbedderEnv)) == "" {
		return nil, "", nil
	}
	e, name, err := llm.ResolveEmbedder(ctx, &node.Services{Extra: extra}, "")
	if err != nil {
		return nil, "", fmt.Errorf("$%s: %w", llm.EmbedderEnv, err)
	}
	return ws.StoreWith(namedEmbedder{Embedder: e, name: name}), name, nil
}
