package rag

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/namespace"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// Store layout under a corpus namespace ns:
//
//	ns+["docs"]    key doc_id    {doc_id, source_url, title, content_hash, fetched_at, chunk_ids}
//	ns+["chunks"]  key chunk_id  Chunk fields, plus embedding and embedding_model when embedded
const (
	DocsNS   = "docs"
	ChunksNS = "chunks"
	// EmbeddingKey holds a chunk's vector in its stored value.
	EmbeddingKey = "embedding"
)

// chunkIndex lists the chunk fields BM25 indexes.
var chunkIndex = []string{"title", "section", "content"}

// Stats counts what one ingestion did.
type Stats struct {
	Documents int `json:"documents"`
	// Unchanged documents were skipped whole (same content_hash).
	Unchanged int `json:"unchanged_documents"`
	Chunks    int `json:"chunks"`
	// Indexed chunks were new or changed and were (re-)stored.
	Indexed int `json:"indexed"`
	// Embedded chunks got a new embedding.
	Embedded int `json:"embedded"`
	// Kept chunks of a changed document had the same content_hash.
	Kept    int `json:"kept"`
	Removed int `json:"removed"`
}

// Ingester stores documents as chunks in a Store, incrementally.
type Ingester struct {
	Store     store.Store
	Namespace []string
	// Embedder, when set, embeds new and changed chunks under EmbedderName.
	Embedder     embeddings.Embedder
	EmbedderName string
	MaxChars     int
	// Now stamps fetched_at; nil means time.Now.
	Now func() time.Time
}

func (g *Ingester) ns(sub string) []string {
	return append(append([]string{}, g.Namespace...), sub)
}

// Ingest stores docs. A document whose content_hash matches the stored one is
// skipped; otherwise its chunks are compared by chunk_id and content_hash,
// only new or changed chunks are embedded and stored, and chunks the new
// version no longer has are deleted.
func (g *Ingester) Ingest(ctx context.Context, docs []Document) (Stats, error) {
	var st Stats
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	for _, d := range docs {
		st.Documents++
		prev, err := g.Store.Get(ctx, g.ns(DocsNS), d.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return st, fmt.Errorf("ingest %s: read document record: %w", d.SourceURL, err)
		}
		if prev != nil && prev.Value["content_hash"] == d.ContentHash && prev.Value["embedding_model"] == g.EmbedderName {
			st.Unchanged++
			if ids, ok := prev.Value["chunk_ids"].([]any); ok {
				st.Chunks += len(ids)
			}
			continue
		}
		chunks := Split(d, g.MaxChars)
		st.Chunks += len(chunks)
		var changed []Chunk
		for _, c := range chunks {
			old, err := g.Store.Get(ctx, g.ns(ChunksNS), c.ID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return st, fmt.Errorf("ingest %s: read chunk %s: %w", d.SourceURL, c.ID, err)
			}
			if old != nil && old.Value["content_hash"] == c.ContentHash && old.Value["embedding_model"] == g.EmbedderName &&
				old.Value["title"] == c.Title && toInt(old.Value["chunk_index"]) == c.Index {
				st.Kept++
				continue
			}
			changed = append(changed, c)
		}
		var vecs [][]float32
		if g.Embedder != nil && len(changed) > 0 {
			texts := make([]string, len(changed))
			for i, c := range changed {
				texts[i] = c.Title + "\n" + c.Section + "\n" + c.Content
			}
			vecs, err = g.Embedder.EmbedDocuments(ctx, texts)
			if err != nil {
				return st, fmt.Errorf("ingest %s: embed %d chunks with %s: %w", d.SourceURL, len(texts), g.EmbedderName, err)
			}
			if len(vecs) != len(texts) {
				return st, fmt.Errorf("ingest %s: embedder %s returned %d vectors for %d chunks", d.SourceURL, g.EmbedderName, len(vecs), len(texts))
			}
			st.Embedded += len(vecs)
		}
		for i, c := range changed {
			v := chunkValue(c)
			if vecs != nil {
				v[EmbeddingKey] = floats(vecs[i])
				v["embedding_model"] = g.EmbedderName
				v["embedded_at"] = now().UTC().Format(time.RFC3339)
			} else {
				v["embedding_model"] = g.EmbedderName
			}
			if err := g.Store.Put(ctx, g.ns(ChunksNS), c.ID, v, store.PutOptions{Index: chunkIndex}); err != nil {
				return st, fmt.Errorf("ingest %s: store chunk %s: %w", d.SourceURL, c.ID, err)
			}
			st.Indexed++
		}
		ids := make([]any, len(chunks))
		keep := map[string]bool{}
		for i, c := range chunks {
			ids[i] = c.ID
			keep[c.ID] = true
		}
		if prev != nil {
			oldIDs, _ := prev.Value["chunk_ids"].([]any)
			for _, id := range oldIDs {
				s, _ := id.(string)
				if s == "" || keep[s] {
					continue
				}
				if err := g.Store.Delete(ctx, g.ns(ChunksNS), s); err != nil && !errors.Is(err, store.ErrNotFound) {
					return st, fmt.Errorf("ingest %s: delete stale chunk %s: %w", d.SourceURL, s, err)
				}
				st.Removed++
			}
		}
		rec := map[string]any{
			"doc_id": d.ID, "source_url": d.SourceURL, "title": d.Title, "content_hash": d.ContentHash,
			"fetched_at": now().UTC().Format(time.RFC3339), "chunk_ids": ids, "raw_text": d.Text,
			"embedding_model": g.EmbedderName,
		}
		if err := g.Store.Put(ctx, g.ns(DocsNS), d.ID, rec, store.PutOptions{Index: []string{}}); err != nil {
			return st, fmt.Errorf("ingest %s: store document record: %w", d.SourceURL, err)
		}
	}
	return st, nil
}

func chunkValue(c Chunk) map[string]any {
	return map[string]any{
		"chunk_id": c.ID, "doc_id": c.DocID, "source_url": c.SourceURL, "title": c.Title, "section": c.Section,
		"chunk_index": c.Index, "content": c.Content, "token_count": c.TokenCount, "content_hash": c.ContentHash,
	}
}

func floats(v []float32) []any {
	out := make([]any, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return -1
}

// IngestConfig is the schema of a rag_ingest node's config.
const IngestConfig = `{
	namespace: [...string] & [_, ...]
	sources: [...string] & [_, ...]
	embedder?: string
	max_chars?: *1200 | int & >=100
	field?: string
}`

func init() {
	node.MustRegister(node.Type{
		Name: "rag_ingest",
		Description: "Ingests documents (files, directories, URLs, sitemaps) into the Store as cited chunks; " +
			"only new or changed chunks are embedded and indexed.",
		Config: IngestConfig,
		New:    newIngest,
	})
}

type ingestNode struct {
	namespace []node.Template
	sources   []string
	embedder  string
	maxChars  int
	field     string
	loader    *Loader
}

func newIngest(b node.Builder) (node.Node, error) {
	var cfg struct {
		Namespace []string `json:"namespace"`
		Sources   []string `json:"sources"`
		Embedder  string   `json:"embedder"`
		MaxChars  int      `json:"max_chars"`
		Field     string   `json:"field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "rag_ingest node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &ingestNode{sources: cfg.Sources, embedder: cfg.Embedder, maxChars: cfg.MaxChars, field: cfg.Field}
	n.namespace = namespace.Compile(b, cfg.Namespace)
	base := ""
	if f := b.Graph().File; f != "" {
		base = filepath.Dir(f)
	}
	n.loader = &Loader{BaseDir: base}
	for i, s := range cfg.Sources {
		if strings.TrimSpace(s) == "" {
			b.Errorf(fmt.Sprintf("sources.%d", i), "invalid-config", "rag_ingest node %q: source %d is empty", b.NodeName(), i)
		}
	}
	if cfg.Field != "" {
		check.Field(b, "field", cfg.Field)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Prepare implements node.Preparer.
func (n *ingestNode) Prepare(_ context.Context, s *node.Services) error {
	return namespace.RequireStore(s, "rag_ingest")
}

// Run implements node.Node.
func (n *ingestNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	if in.Services == nil || in.Services.Store == nil {
		return nil, node.Errorf("no_store", "%s: %v", in.Node, namespace.RequireStore(in.Services, "rag_ingest"))
	}
	ns, err := namespace.Render(in, n.namespace)
	if err != nil {
		return nil, err
	}
	ing := &Ingester{Store: in.Services.Store, Namespace: ns, MaxChars: n.maxChars}
	if n.embedder != "" {
		e, err := llm.Embedder(ctx, in.Services, n.embedder)
		if err != nil {
			return nil, node.Errorf("llm_config", "%s: embedder: %w", in.Node, err)
		}
		ing.Embedder, ing.EmbedderName = e, n.embedder
	}
	var docs []Document
	for _, src := range n.sources {
		d, err := n.loader.Load(ctx, src)
		if err != nil {
			return nil, node.Retryable("fetch_error", fmt.Errorf("%s: %w", in.Node, err))
		}
		docs = append(docs, d...)
	}
	st, err := ing.Ingest(ctx, docs)
	if err != nil {
		return nil, node.Errorf("store_error", "%s: %w", in.Node, err)
	}
	payload := statsMap(st)
	if in.Emit != nil {
		in.Emit(event.Event{Type: "rag_ingest", Payload: payload})
	}
	if n.field == "" {
		return node.Update{}, nil
	}
	return node.Update{n.field: payload}, nil
}

func statsMap(st Stats) map[string]any {
	return map[string]any{
		"documents": st.Documents, "unchanged_documents": st.Unchanged, "chunks": st.Chunks,
		"indexed": st.Indexed, "embedded": st.Embedded, "kept": st.Kept, "removed": st.Removed,
	}
}
