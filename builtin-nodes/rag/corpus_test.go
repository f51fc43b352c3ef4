package rag_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/builtin-nodes/rag"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/store"
)

// docSite serves pages with ETag and Last-Modified validators, answering
// 304 to a conditional request that matches, and counts what it served.
type docSite struct {
	mu       sync.Mutex
	pages    map[string]string // path → markdown
	versions map[string]int
	full     map[string]int // 200 answers per path
	notMod   map[string]int // 304 answers per path
	useETag  bool
}

func (d *docSite) set(path, text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pages[path] = text
	d.versions[path]++
}

func (d *docSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r.URL.Path == "/sitemap.xml" {
		w.Header().Set("Content-Type", "application/xml")
		var sb strings.Builder
		sb.WriteString(`<?xml version="1.0"?><urlset>`)
		for _, p := range []string{"/a", "/b"} {
			if _, ok := d.pages[p]; ok {
				sb.WriteString("<url><loc>http://" + r.Host + p + "</loc></url>")
			}
		}
		sb.WriteString("</urlset>")
		w.Write([]byte(sb.String()))
		return
	}
	text, ok := d.pages[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	v := d.versions[r.URL.Path]
	etag := `"` + r.URL.Path + "-" + string(rune('0'+v)) + `"`
	modified := time.Date(2025, 1, v, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	if d.useETag {
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			d.notMod[r.URL.Path]++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else {
		w.Header().Set("Last-Modified", modified)
		if r.Header.Get("If-Modified-Since") == modified {
			d.notMod[r.URL.Path]++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	d.full[r.URL.Path]++
	w.Header().Set("Content-Type", "text/markdown")
	w.Write([]byte(text))
}

func TestCorpusSyncsSourcesWithValidators(t *testing.T) {
	for _, useETag := range []bool{true, false} {
		name := "Last-Modified"
		if useETag {
			name = "ETag"
		}
		t.Run(name, func(t *testing.T) {
			site := &docSite{pages: map[string]string{}, versions: map[string]int{}, full: map[string]int{}, notMod: map[string]int{}, useETag: useETag}
			site.set("/a", "# A\n\n## One\n\nalpha\n\n## Two\n\nbeta")
			site.set("/b", "# B\n\ngamma")
			srv := httptest.NewServer(site)
			defer srv.Close()
			ctx := context.Background()
			emb := &countingEmbedder{HashEmbedder: llm.HashEmbedder{Dim: 32}}
			c := &rag.Corpus{Store: openStore(t), Namespace: []string{"kb"}, Embedder: emb, EmbedderName: "hash:32"}
			src, added, err := c.Add(ctx, srv.URL+"/sitemap.xml", rag.OriginCLI)
			if err != nil || !added || src.Kind != rag.KindSitemap || src.Status != rag.StatusPending {
				t.Fatalf("add: %+v %v %v", src, added, err)
			}
			if _, again, _ := c.Add(ctx, srv.URL+"/sitemap.xml", rag.OriginCLI); again {
				t.Error("adding a registered source again added it")
			}
			res, err := c.Sync(ctx)
			if err != nil || res.Documents != 2 || res.Embedded != 3 || res.Sources != 1 {
				t.Fatalf("first sync %+v %v", res, err)
			}
			// Nothing changed: every page answered 304, nothing embedded.
			res, err = c.Sync(ctx)
			if err != nil || res.Unchanged != 2 || res.Embedded != 0 || site.notMod["/a"] != 1 || site.notMod["/b"] != 1 {
				t.Fatalf("second sync %+v %v; 304s %v", res, err, site.notMod)
			}
			// One page edited, one gone: one chunk embedded, b's chunk removed.
			site.set("/a", "# A\n\n## One\n\nalpha\n\n## Two\n\nbeta, edited")
			site.mu.Lock()
			delete(site.pages, "/b")
			site.mu.Unlock()
			res, err = c.Sync(ctx)
			if err != nil || res.Embedded != 1 || res.Kept != 1 || res.RemovedDocuments != 1 || res.Removed != 2 {
				t.Fatalf("third sync %+v %v", res, err)
			}
			list, err := c.Sources(ctx)
			if err != nil || len(list) != 1 {
				t.Fatalf("sources %+v %v", list, err)
			}
			s := list[0]
			if s.Status != rag.StatusOK || s.Documents != 1 || s.Chunks != 2 || s.UpdatedAt == "" || s.SyncedAt == "" {
				t.Errorf("source after sync %+v", s)
			}
			if emb.texts != 4 {
				t.Errorf("embedded %d texts in all, want 4", emb.texts)
			}
			st, _ := c.State(ctx)
			if st.Documents != 1 || st.EmbeddingModel != "hash:32" || len(st.Titles) != 1 || st.Titles[0] != "A" {
				t.Errorf("sync state %+v", st)
			}
			// Removing the source deletes its documents and chunks.
			if _, docs, chunks, err := c.Remove(ctx, s.Root); err != nil || docs != 1 || chunks != 2 {
				t.Fatalf("remove: %d docs %d chunks %v", docs, chunks, err)
			}
			items, _ := c.Store.Search(ctx, []string{"kb"}, store.SearchQuery{Limit: 100})
			for _, it := range items {
				if it.Namespace[1] == rag.ChunksNS || it.Namespace[1] == rag.DocsNS || it.Namespace[1] == rag.SourcesNS {
					t.Errorf("left after removal: %v %s", it.Namespace, it.Key)
				}
			}
		})
	}
}

func TestCorpusFailingSourceKeepsItsDocuments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nalpha"), 0o644)
	c := &rag.Corpus{Store: openStore(t), Namespace: []string{"kb"}, Loader: &rag.Loader{BaseDir: dir}}
	if _, _, err := c.Add(ctx, "a.md", rag.OriginCLI); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Add(ctx, "missing.md", rag.OriginCLI); err == nil || !strings.Contains(err.Error(), "missing.md") {
		t.Fatalf("adding a missing file: %v", err)
	}
	if _, err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "a.md"))
	res, err := c.Sync(ctx)
	if err != nil || len(res.Failed) != 1 {
		t.Fatalf("sync %+v %v", res, err)
	}
	list, _ := c.Sources(ctx)
	if list[0].Status != rag.StatusError || !strings.Contains(list[0].Error, "a.md") || list[0].Documents != 1 {
		t.Errorf("source %+v", list[0])
	}
	if items, _ := c.Store.Search(ctx, []string{"kb", rag.ChunksNS}, store.SearchQuery{}); len(items) != 1 {
		t.Errorf("%d chunks left, want the last good one", len(items))
	}
}

// ingestRig is a graph whose directory holds a.md (sections One: alpha,
// Two: beta), a store, and run, which builds a rag_ingest node with a
// config and runs it, returning its ingest field and events.
func ingestRig(t *testing.T) (*graph.Graph, store.Store, func(cfg map[string]any) (map[string]any, *nodetest.Recorder)) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\n## One\n\nalpha\n\n## Two\n\nbeta"), 0o644)
	g, err := nodetest.Graph(nil, "ingest: object")
	if err != nil {
		t.Fatal(err)
	}
	g.File = filepath.Join(dir, "g.cue")
	st := openStore(t)
	return g, st, func(cfg map[string]any) (map[string]any, *nodetest.Recorder) {
		t.Helper()
		n, b, err := nodetest.Build(g, "rag_ingest", "ingest_docs", cfg)
		if err != nil || n == nil {
			t.Fatalf("build: %v %v", err, b.Problems())
		}
		up, rec, err := runNode(t, n, nodetest.Scope(g, nil), st)
		if err != nil {
			t.Fatal(err)
		}
		return up["ingest"].(map[string]any), rec
	}
}

// retrieveHits runs a hybrid rag_retrieve of query over the corpus "docs"
// and returns the chunks it found.
func retrieveHits(t *testing.T, g *graph.Graph, st store.Store, query string) []any {
	t.Helper()
	rn, b, err := nodetest.Build(g, "rag_retrieve", "retrieve", map[string]any{"namespace": []any{"docs"}, "query": query, "mode": "hybrid", "field": "ingest"})
	if err != nil || rn == nil {
		t.Fatalf("build retrieve: %v %v", err, b.Problems())
	}
	up, _, err := runNode(t, rn, nodetest.Scope(g, nil), st)
	if err != nil {
		t.Fatal(err)
	}
	hits, _ := up["ingest"].(map[string]any)["retrieved_chunks"].([]any)
	return hits
}

func TestIngestNodeSyncsOnScheduleAndOnModelChange(t *testing.T) {
	ctx := context.Background()
	g, st, run := ingestRig(t)
	llmSrv := llmtest.NewServer(t)
	cfg := map[string]any{"namespace": []any{"docs"}, "sources": []any{"a.md"}, "every": "1h",
		"embedder": "openai:text-embedding-3-small", "fallback_embedder": "hash", "field": "ingest"}

	// No key or server for the embedder: the offline fallback, announced.
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv(llm.EmbeddingsURLEnv, "")
	t.Setenv(llm.EmbedderEnv, "")
	out, rec := run(cfg)
	if out["synced"] != true || out["embedded"] != 2 || out["embedding_model"] != "hash" {
		t.Fatalf("first run %v", out)
	}
	if fb := rec.OfType(rag.EmbedderFallbackEvent); len(fb) != 1 || fb[0].Payload["using"] != "hash" || fb[0].Payload["wanted"] != "openai:text-embedding-3-small" {
		t.Errorf("fallback events %v", fb)
	}
	// Within the hour: no sync.
	out, _ = run(cfg)
	if out["synced"] != false || !strings.Contains(out["reason"].(string), "next sync in") || out["corpus_chunks"] != 2 {
		t.Fatalf("second run %v", out)
	}
	// A real embedder configured (an OpenAI-compatible /v1/embeddings
	// server): the model changed, so every chunk is embedded again with it,
	// and each records its model.
	t.Setenv(llm.EmbeddingsURLEnv, llmSrv.URL())
	out, rec = run(cfg)
	if out["synced"] != true || out["embedded"] != 2 || out["embedding_model"] != "openai:text-embedding-3-small" ||
		!strings.Contains(out["reason"].(string), "embedding model changed") {
		t.Fatalf("after configuring the embedder %v", out)
	}
	if len(rec.OfType(rag.EmbedderFallbackEvent)) != 0 {
		t.Error("fallback announced with the embedder configured")
	}
	if calls := llmSrv.Embeddings(); len(calls) != 1 || len(calls[0]) != 2 {
		t.Errorf("embeddings calls %v", calls)
	}
	items, _ := st.Search(ctx, []string{"docs", rag.ChunksNS}, store.SearchQuery{})
	for _, it := range items {
		if it.Value["embedding_model"] != "openai:text-embedding-3-small" || it.Value["embedded_at"] == nil || len(it.Value[rag.EmbeddingKey].([]any)) != 64 {
			t.Errorf("chunk %s: model %v at %v", it.Key, it.Value["embedding_model"], it.Value["embedded_at"])
		}
	}
	// Retrieval embeds the query with the corpus's model.
	hits := retrieveHits(t, g, st, "alpha")
	if len(hits) == 0 || hits[0].(map[string]any)["content"] != "alpha" {
		t.Errorf("hits %v", hits)
	}
	if calls := llmSrv.Embeddings(); len(calls) != 2 || calls[1][0] != "alpha" {
		t.Errorf("the query was not embedded by the corpus's model: %v", calls)
	}
}

// TestIngestNodeFallsBackWhenTheEmbedderFails: an embedder that is
// configured but fails (its server down) does not leave the corpus empty:
// the fallback embeds it, announced, and retrieval finds the documents; the
// failed embedder is tried again at the next scheduled sync, not on every
// run, and once it works the corpus is embedded with it.
func TestIngestNodeFallsBackWhenTheEmbedderFails(t *testing.T) {
	g, st, run := ingestRig(t)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	t.Setenv(llm.EmbedderEnv, "")
	t.Setenv(llm.EmbeddingsURLEnv, down.URL)
	cfg := map[string]any{"namespace": []any{"docs"}, "sources": []any{"a.md"}, "every": "1h",
		"embedder": "openai:text-embedding-3-small", "fallback_embedder": "hash", "field": "ingest"}

	out, rec := run(cfg)
	if out["synced"] != true || out["embedding_model"] != "hash" || out["corpus_chunks"] != 2 || out["failed"] != nil {
		t.Fatalf("sync with the embedder down: %v", out)
	}
	if fb := rec.OfType(rag.EmbedderFallbackEvent); len(fb) != 1 || fb[0].Payload["wanted"] != "openai:text-embedding-3-small" ||
		!strings.Contains(fb[0].Payload["reason"].(string), "embed") {
		t.Errorf("fallback events %v", fb)
	}
	if hits := retrieveHits(t, g, st, "alpha"); len(hits) == 0 || hits[0].(map[string]any)["content"] != "alpha" {
		t.Errorf("hits %v, want the documents found with the fallback's vectors", hits)
	}

	// Within the hour the failed embedder is not tried again.
	out, _ = run(cfg)
	if out["synced"] != false || !strings.Contains(out["reason"].(string), "failed at the last sync") {
		t.Fatalf("run within the hour: %v", out)
	}

	// The next sync (here: every run, no schedule) with the server back
	// embeds the corpus with the configured embedder.
	llmSrv := llmtest.NewServer(t)
	t.Setenv(llm.EmbeddingsURLEnv, llmSrv.URL())
	delete(cfg, "every")
	out, rec = run(cfg)
	if out["synced"] != true || out["embedding_model"] != "openai:text-embedding-3-small" || out["embedded"] != 2 || len(rec.OfType(rag.EmbedderFallbackEvent)) != 0 {
		t.Fatalf("sync with the server back: %v", out)
	}
}
