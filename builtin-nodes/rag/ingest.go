package rag

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/namespace"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// Store layout under a corpus namespace ns:
//
//	ns+["sources"] key source_id {source_id, kind, root, origin, status, error, added_at, updated_at, synced_at, documents, chunks, doc_ids}
//	ns+["docs"]    key doc_id    {doc_id, source_id, source_url, title, content_hash, fetched_at, etag, last_modified, chunk_ids, raw_text, embedding_model}
//	ns+["chunks"]  key chunk_id  Chunk fields, plus embedding, embedding_model and embedded_at when embedded
//	ns+["sync"]    key "state"   {synced_at, documents, chunks, titles, embedding_model}
const (
	SourcesNS = "sources"
	DocsNS    = "docs"
	ChunksNS  = "chunks"
	SyncNS    = "sync"
	// EmbeddingKey holds a chunk's vector in its stored value.
	EmbeddingKey = "embedding"
)

// chunkIndex lists the chunk fields BM25 indexes.
var chunkIndex = []string{"title", "section", "content"}

// Stats counts what one ingestion did.
type Stats struct {
	Documents int `json:"documents"`
	// Unchanged documents were skipped whole (same content_hash, or a 304
	// answer to a conditional fetch).
	Unchanged int `json:"unchanged_documents"`
	Chunks    int `json:"chunks"`
	// Indexed chunks were new or changed and were (re-)stored with their
	// embedding.
	Indexed int `json:"indexed"`
	// Embedded chunks got a new embedding.
	Embedded int `json:"embedded"`
	// Kept chunks of a changed document had the same content_hash and place.
	Kept int `json:"kept"`
	// Moved chunks of a changed document kept their content (and so their
	// id and embedding) but not their place: only their chunk_index was
	// rewritten.
	Moved   int `json:"moved"`
	Removed int `json:"removed"`
}

// add sums b into a.
func (a *Stats) add(b Stats) {
	a.Documents += b.Documents
	a.Unchanged += b.Unchanged
	a.Chunks += b.Chunks
	a.Indexed += b.Indexed
	a.Embedded += b.Embedded
	a.Kept += b.Kept
	a.Moved += b.Moved
	a.Removed += b.Removed
}

// Ingester stores documents as chunks in a Store, incrementally.
type Ingester struct {
	Store     store.Store
	Namespace []string
	// Embedder, when set, embeds new and changed chunks under EmbedderName,
	// which every embedding records; a chunk embedded by another model is
	// embedded again.
	Embedder     embeddings.Embedder
	EmbedderName string
	MaxChars     int
	// SourceID is recorded in the document records (the registered source
	// the documents come from).
	SourceID string
	// Now stamps fetched_at; nil means time.Now.
	Now func() time.Time
}

func (g *Ingester) ns(sub string) []string {
	return append(append([]string{}, g.Namespace...), sub)
}

func (g *Ingester) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Ingest stores docs. A document whose content_hash (and embedding model)
// matches the stored one, or that the server answered 304 for, is skipped;
// otherwise its chunks are compared by their content-addressed chunk_id:
// only new chunks (and chunks embedded by another model) are embedded, a
// chunk that only moved gets its chunk_index rewritten with its embedding
// kept, and chunks the new version no longer has are deleted.
func (g *Ingester) Ingest(ctx context.Context, docs []Document) (Stats, error) {
	var st Stats
	now := g.now().UTC().Format(time.RFC3339)
	for _, d := range docs {
		st.Documents++
		prev, err := g.Store.Get(ctx, g.ns(DocsNS), d.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return st, fmt.Errorf("ingest %s: read document record: %w", d.SourceURL, err)
		}
		if prev != nil && prev.Value["embedding_model"] == g.EmbedderName &&
			(d.NotModified || prev.Value["content_hash"] == d.ContentHash) {
			st.Unchanged++
			if ids, ok := prev.Value["chunk_ids"].([]any); ok {
				st.Chunks += len(ids)
			}
			// Keep the record's validators and source current.
			rec := maps.Clone(prev.Value)
			rec["checked_at"] = now
			if g.SourceID != "" {
				rec["source_id"] = g.SourceID
			}
			if d.ETag != "" || d.LastModified != "" {
				rec["etag"], rec["last_modified"] = d.ETag, d.LastModified
			}
			if err := g.Store.Put(ctx, g.ns(DocsNS), d.ID, rec, store.PutOptions{Index: []string{}}); err != nil {
				return st, fmt.Errorf("ingest %s: store document record: %w", d.SourceURL, err)
			}
			continue
		}
		if d.NotModified {
			// A 304 for a page this store does not have (or has under
			// another model): nothing to ingest it from.
			return st, fmt.Errorf("ingest %s: the server answered 304 Not Modified but the page is not stored; sync again without validators", d.SourceURL)
		}
		ds, err := g.ingestDoc(ctx, d, prev, now)
		st.add(ds)
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// ingestDoc indexes one document: its chunks that changed are embedded and
// stored, those that only moved are updated, those it no longer has are
// deleted, and its record is stored.
func (g *Ingester) ingestDoc(ctx context.Context, d Document, prev *store.Item, now string) (Stats, error) {
	var st Stats
	chunks := Split(d, g.MaxChars)
	st.Chunks = len(chunks)
	changed, moved, err := g.sortChunks(ctx, d, chunks, &st)
	if err != nil {
		return st, err
	}
	vecs, err := g.embed(ctx, d, changed, &st)
	if err != nil {
		return st, err
	}
	if err := g.storeChunks(ctx, d, changed, vecs, moved, now, &st); err != nil {
		return st, err
	}
	ids, err := g.removeStale(ctx, d, chunks, prev, &st)
	if err != nil {
		return st, err
	}
	rec := map[string]any{
		"doc_id": d.ID, "source_url": d.SourceURL, "title": d.Title, "content_hash": d.ContentHash,
		"fetched_at": now, "checked_at": now, "chunk_ids": ids, "raw_text": d.Text,
		"embedding_model": g.EmbedderName, "etag": d.ETag, "last_modified": d.LastModified,
	}
	if g.SourceID != "" {
		rec["source_id"] = g.SourceID
	}
	if err := g.Store.Put(ctx, g.ns(DocsNS), d.ID, rec, store.PutOptions{Index: []string{}}); err != nil {
		return st, fmt.Errorf("ingest %s: store document record: %w", d.SourceURL, err)
	}
	return st, nil
}

// sortChunks compares a document's chunks with those stored: a chunk whose
// content (or embedding model) changed is to be embedded again, one that
// only moved (title, index, URL) gets its stored value updated, and one
// unchanged is kept (counted in st.Kept).
func (g *Ingester) sortChunks(ctx context.Context, d Document, chunks []Chunk, st *Stats) (changed []Chunk, moved []map[string]any, err error) {
	for _, c := range chunks {
		old, err := g.Store.Get(ctx, g.ns(ChunksNS), c.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, fmt.Errorf("ingest %s: read chunk %s: %w", d.SourceURL, c.ID, err)
		}
		embedded := old != nil && old.Value["embedding_model"] == g.EmbedderName &&
			(g.Embedder == nil || old.Value[EmbeddingKey] != nil) && old.Value["content_hash"] == c.ContentHash
		switch {
		case !embedded:
			changed = append(changed, c)
		case old.Value["title"] == c.Title && toInt(old.Value["chunk_index"]) == c.Index && old.Value["source_url"] == c.SourceURL:
			st.Kept++
		default:
			v := maps.Clone(old.Value)
			for k, val := range chunkValue(c) {
				v[k] = val
			}
			moved = append(moved, v)
		}
	}
	return changed, moved, nil
}

// errEmbedding marks the failures of the embedder itself.
var errEmbedding = errors.New("embedding failed")

// embed embeds the changed chunks (nil without an embedder).
func (g *Ingester) embed(ctx context.Context, d Document, changed []Chunk, st *Stats) ([][]float32, error) {
	if g.Embedder == nil || len(changed) == 0 {
		return nil, nil
	}
	texts := make([]string, len(changed))
	for i, c := range changed {
		texts[i] = c.Title + "\n" + c.Section + "\n" + c.Content
	}
	vecs, err := g.Embedder.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("ingest %s: embed %d chunks with %s: %w: %w", d.SourceURL, len(texts), g.EmbedderName, errEmbedding, err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("ingest %s: embedder %s returned %d vectors for %d chunks", d.SourceURL, g.EmbedderName, len(vecs), len(texts))
	}
	st.Embedded += len(vecs)
	return vecs, nil
}

// storeChunks stores the changed chunks with their vectors and the moved
// ones.
func (g *Ingester) storeChunks(ctx context.Context, d Document, changed []Chunk, vecs [][]float32, moved []map[string]any, now string, st *Stats) error {
	for i, c := range changed {
		v := chunkValue(c)
		v["embedding_model"] = g.EmbedderName
		if vecs != nil {
			v[EmbeddingKey] = floats(vecs[i])
			v["embedded_at"] = now
		}
		if err := g.Store.Put(ctx, g.ns(ChunksNS), c.ID, v, store.PutOptions{Index: chunkIndex}); err != nil {
			return fmt.Errorf("ingest %s: store chunk %s: %w", d.SourceURL, c.ID, err)
		}
		st.Indexed++
	}
	for _, v := range moved {
		id, _ := v["chunk_id"].(string)
		if err := g.Store.Put(ctx, g.ns(ChunksNS), id, v, store.PutOptions{Index: chunkIndex}); err != nil {
			return fmt.Errorf("ingest %s: store chunk %s: %w", d.SourceURL, id, err)
		}
		st.Moved++
	}
	return nil
}

// removeStale deletes the chunks of the document's previous record that it
// no longer has, and returns the ids of its chunks now.
func (g *Ingester) removeStale(ctx context.Context, d Document, chunks []Chunk, prev *store.Item, st *Stats) ([]any, error) {
	ids := make([]any, len(chunks))
	keep := map[string]bool{}
	for i, c := range chunks {
		ids[i] = c.ID
		keep[c.ID] = true
	}
	if prev == nil {
		return ids, nil
	}
	oldIDs, _ := prev.Value["chunk_ids"].([]any)
	for _, id := range oldIDs {
		s, _ := id.(string)
		if s == "" || keep[s] {
			continue
		}
		if err := g.Store.Delete(ctx, g.ns(ChunksNS), s); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("ingest %s: delete stale chunk %s: %w", d.SourceURL, s, err)
		}
		st.Removed++
	}
	return ids, nil
}

// RemoveDocument deletes a document record and its chunks; it returns how
// many chunks it deleted.
func (g *Ingester) RemoveDocument(ctx context.Context, docID string) (int, error) {
	prev, err := g.Store.Get(ctx, g.ns(DocsNS), docID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("remove document %s: %w", docID, err)
	}
	n := 0
	ids, _ := prev.Value["chunk_ids"].([]any)
	for _, id := range ids {
		s, _ := id.(string)
		if s == "" {
			continue
		}
		if err := g.Store.Delete(ctx, g.ns(ChunksNS), s); err != nil && !errors.Is(err, store.ErrNotFound) {
			return n, fmt.Errorf("remove document %s: chunk %s: %w", docID, s, err)
		}
		n++
	}
	if err := g.Store.Delete(ctx, g.ns(DocsNS), docID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return n, fmt.Errorf("remove document %s: %w", docID, err)
	}
	return n, nil
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
	sources?: [...string]
	every?: string
	embedder?: string
	fallback_embedder?: string
	max_chars?: *1200 | int & >=100
	field?: string
}`

func init() {
	node.MustRegister(node.Type{
		Name: "rag_ingest",
		Description: "Keeps a corpus of documents (files, directories, URLs, sitemaps) up to date in the Store as cited chunks, " +
			"on a schedule (every); only new chunks are embedded.",
		Config: IngestConfig,
		New:    newIngest,
	})
}

type ingestNode struct {
	namespace []node.Template
	sources   []string
	every     time.Duration
	embedder  EmbedderSpec
	maxChars  int
	field     string
	baseDir   string
}

func newIngest(b node.Builder) (node.Node, error) {
	var cfg struct {
		Namespace        []string `json:"namespace"`
		Sources          []string `json:"sources"`
		Every            string   `json:"every"`
		Embedder         string   `json:"embedder"`
		FallbackEmbedder string   `json:"fallback_embedder"`
		MaxChars         int      `json:"max_chars"`
		Field            string   `json:"field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "rag_ingest node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &ingestNode{sources: cfg.Sources, maxChars: cfg.MaxChars, field: cfg.Field,
		embedder: EmbedderSpec{Spec: cfg.Embedder, Fallback: cfg.FallbackEmbedder}}
	n.namespace = namespace.Compile(b, cfg.Namespace)
	if f := b.Graph().File; f != "" {
		n.baseDir = filepath.Dir(f)
	}
	for i, s := range cfg.Sources {
		if strings.TrimSpace(s) == "" {
			b.Errorf(fmt.Sprintf("sources.%d", i), "invalid-config", "rag_ingest node %q: source %d is empty", b.NodeName(), i)
		}
	}
	if cfg.Every != "" {
		d, err := time.ParseDuration(cfg.Every)
		if err != nil || d <= 0 {
			b.Errorf("every", "invalid-config", "rag_ingest node %q: every %q: want a positive duration such as \"30m\" or \"24h\"", b.NodeName(), cfg.Every)
		}
		n.every = d
	}
	if cfg.FallbackEmbedder != "" && cfg.Embedder == "" {
		b.Errorf("fallback_embedder", "invalid-config", "rag_ingest node %q: fallback_embedder needs an embedder to fall back from", b.NodeName())
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

// Every is how often the node syncs (0: every run).
func (n *ingestNode) Every() time.Duration { return n.every }

// Corpus returns the corpus a rag_ingest node keeps, for a namespace already
// rendered, with its embedder resolved against services; the events of an
// embedder fallback go to emit (nil: dropped).
func (n *ingestNode) Corpus(ctx context.Context, s *node.Services, ns []string, emit event.Sink) (*Corpus, error) {
	c := &Corpus{Store: s.Store, Namespace: ns, Loader: &Loader{BaseDir: n.baseDir}, MaxChars: n.maxChars}
	if n.embedder.Spec != "" {
		e, name, err := n.embedder.Resolve(ctx, s, emit)
		if err != nil {
			return nil, err
		}
		c.Embedder, c.EmbedderName = e, name
	}
	return c, nil
}

// Run implements node.Node: it syncs the corpus when it is due (never
// synced, older than every, or embedded by another model than the one
// configured now), and writes what the corpus holds.
func (n *ingestNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	if in.Services == nil || in.Services.Store == nil {
		return nil, node.Errorf("no_store", "%s: %v", in.Node, namespace.RequireStore(in.Services, "rag_ingest"))
	}
	ns, err := namespace.Render(in, n.namespace)
	if err != nil {
		return nil, err
	}
	c, err := n.Corpus(ctx, in.Services, ns, in.Emit)
	if err != nil {
		return nil, node.Errorf("llm_config", "%s: embedder: %w", in.Node, err)
	}
	prev, err := c.State(ctx)
	if err != nil {
		return nil, node.Retryable("store_error", fmt.Errorf("%s: %w", in.Node, err))
	}
	due, why := n.due(prev, c.EmbedderName, time.Now())
	payload := map[string]any{"synced": false, "reason": why, "embedding_model": c.EmbedderName}
	if due {
		if err := c.Reconcile(ctx, n.sources); err != nil {
			return nil, node.Errorf("store_error", "%s: %w", in.Node, err)
		}
		res, err := c.Sync(ctx)
		if err != nil {
			return nil, node.Retryable("ingest_error", fmt.Errorf("%s: %w", in.Node, err))
		}
		if fb := n.embedder.Fallback; res.EmbedError != nil && fb != "" && c.EmbedderName != fb {
			// The embedder is configured but fails (its server down, or
			// serving no embeddings): the fallback embeds the corpus, so
			// that the documents can be found, until a later sync with
			// the embedder succeeds.
			if res, err = n.fallBack(ctx, in, c, res.EmbedError); err != nil {
				return nil, err
			}
		}
		payload["synced"] = true
		for k, v := range statsMap(res.Stats) {
			payload[k] = v
		}
		payload["sources"] = res.Sources
		payload["removed_documents"] = res.RemovedDocuments
		if len(res.Failed) > 0 {
			failed := map[string]any{}
			for k, v := range res.Failed {
				failed[k] = v
			}
			payload["failed"] = failed
		}
	}
	st, err := c.State(ctx)
	if err != nil {
		return nil, node.Retryable("store_error", fmt.Errorf("%s: %w", in.Node, err))
	}
	payload["synced_at"] = st.SyncedAt
	if st.EmbeddingModel != "" {
		// The model the corpus's vectors are from: the fallback's while the
		// configured embedder fails.
		payload["embedding_model"] = st.EmbeddingModel
	}
	payload["corpus_documents"] = st.Documents
	payload["corpus_chunks"] = st.Chunks
	if in.Emit != nil {
		in.Emit(event.Event{Type: "rag_ingest", Payload: maps.Clone(payload)})
	}
	if n.field == "" {
		return node.Update{}, nil
	}
	titles := make([]any, len(st.Titles))
	for i, t := range st.Titles {
		titles[i] = t
	}
	payload["titles"] = titles
	return node.Update{n.field: payload}, nil
}

// fallBack syncs c again with the node's fallback embedder, after the
// configured one failed with cause, announcing it as an embedder_fallback
// event.
func (n *ingestNode) fallBack(ctx context.Context, in *node.Input, c *Corpus, cause error) (SyncResult, error) {
	fb, name, err := n.embedder.FallBack(ctx, in.Services, c.EmbedderName, cause, in.Emit)
	if err != nil {
		return SyncResult{}, node.Errorf("llm_config", "%s: fallback embedder: %w", in.Node, err)
	}
	c.Embedder, c.FallbackFrom, c.EmbedderName = fb, c.EmbedderName, name
	res, err := c.Sync(ctx)
	if err != nil {
		return res, node.Retryable("ingest_error", fmt.Errorf("%s: %w", in.Node, err))
	}
	return res, nil
}

// due says whether the corpus needs a sync now, and why (or why not).
func (n *ingestNode) due(st SyncState, model string, now time.Time) (bool, string) {
	if st.SyncedAt == "" {
		return true, "first sync"
	}
	last, err := time.Parse(time.RFC3339, st.SyncedAt)
	if err != nil {
		return true, "the last sync time is unreadable"
	}
	age := now.Sub(last)
	if st.EmbeddingModel != model {
		if st.FallbackFrom == model && n.every > 0 && age < n.every {
			return false, fmt.Sprintf("%s failed at the last sync, %s ago: the documents keep their %s vectors until the next sync in %s (every %s), or run graphctl docs sync",
				model, age.Round(time.Second), st.EmbeddingModel, (n.every - age).Round(time.Second), n.every)
		}
		return true, fmt.Sprintf("the embedding model changed from %q to %q: chunks are embedded again", st.EmbeddingModel, model)
	}
	if n.every == 0 {
		return true, "no schedule (every): synced on every run"
	}
	if age >= n.every {
		return true, fmt.Sprintf("last synced %s ago (every %s)", age.Round(time.Second), n.every)
	}
	return false, fmt.Sprintf("synced %s ago; next sync in %s (every %s), or run graphctl docs sync", age.Round(time.Second), (n.every - age).Round(time.Second), n.every)
}

func statsMap(st Stats) map[string]any {
	return map[string]any{
		"documents": st.Documents, "unchanged_documents": st.Unchanged, "chunks": st.Chunks,
		"indexed": st.Indexed, "embedded": st.Embedded, "kept": st.Kept, "moved": st.Moved, "removed": st.Removed,
	}
}
