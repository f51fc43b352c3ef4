package rag_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/rag"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/nodecache"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

func openStore(t *testing.T) store.Store {
	t.Helper()
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db.Store()
}

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	llm.HashEmbedder
	texts int
}

func (c *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts += len(texts)
	return c.HashEmbedder.EmbedDocuments(ctx, texts)
}

const guide = `# Bot Guide

Intro text.

## Setup

Set TELEGRAM_BOT_TOKEN in the environment.

## 料金

月額は無料です。

### Limits

Messages are split at 4096 characters.
`

func TestSplit(t *testing.T) {
	doc := rag.Document{ID: "d", SourceURL: "docs/guide.md", Title: "Bot Guide", Text: guide}
	chunks := rag.Split(doc, 1200)
	want := []struct{ section, content string }{
		{"Bot Guide", "Intro text."},
		{"Bot Guide > Setup", "Set TELEGRAM_BOT_TOKEN in the environment."},
		{"Bot Guide > 料金", "月額は無料です。"},
		{"Bot Guide > 料金 > Limits", "Messages are split at 4096 characters."},
	}
	if len(chunks) != len(want) {
		t.Fatalf("got %d chunks %+v, want %d", len(chunks), chunks, len(want))
	}
	for i, w := range want {
		c := chunks[i]
		if c.Section != w.section || c.Content != w.content || c.Index != i || c.SourceURL != "docs/guide.md" {
			t.Errorf("chunk %d = {%q %q %d %q}, want section %q content %q", i, c.Section, c.Content, c.Index, c.SourceURL, w.section, w.content)
		}
		if c.ID == "" || c.ContentHash != rag.Hash(c.Section+"\x00"+c.Content) {
			t.Errorf("chunk %d: id %q, content_hash %q", i, c.ID, c.ContentHash)
		}
	}
	// Chunk ids are content-addressed: editing one section changes only
	// that chunk's hash and id.
	edited := doc
	edited.Text = strings.Replace(guide, "月額は無料です。", "月額は500円です。", 1)
	after := rag.Split(edited, 1200)
	for i := range chunks {
		changed := after[i].ContentHash != chunks[i].ContentHash
		if changed != (i == 2) {
			t.Errorf("chunk %d: hash changed = %v", i, changed)
		}
		if (after[i].ID != chunks[i].ID) != changed {
			t.Errorf("chunk %d: id %q → %q while its hash changed = %v", i, chunks[i].ID, after[i].ID, changed)
		}
	}
	// Inserting a section moves the chunks after it (chunk_index) without
	// changing their ids.
	inserted := doc
	inserted.Text = strings.Replace(guide, "## Setup", "## New\n\nA new section.\n\n## Setup", 1)
	moved := rag.Split(inserted, 1200)
	if len(moved) != 5 || moved[1].Section != "Bot Guide > New" {
		t.Fatalf("after an insertion: %+v", moved)
	}
	for i, c := range chunks {
		j := i
		if i >= 1 {
			j = i + 1
		}
		if moved[j].ID != c.ID || moved[j].Index != j {
			t.Errorf("chunk %q: id %q index %d after the insertion, want id %q index %d", c.Section, moved[j].ID, moved[j].Index, c.ID, j)
		}
	}
}

func TestSplitRepeatedHeadingsKeepDistinctIDs(t *testing.T) {
	text := "# FAQ\n\n## Example\n\nfirst answer\n\n## Example\n\nsecond answer\n"
	doc := rag.Document{ID: "d", SourceURL: "faq.md", Text: text}
	chunks := rag.Split(doc, 1200)
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks %+v, want 2", len(chunks), chunks)
	}
	if chunks[0].Section != chunks[1].Section {
		t.Fatalf("sections %q and %q, want the same heading path", chunks[0].Section, chunks[1].Section)
	}
	if chunks[0].ID == chunks[1].ID {
		t.Errorf("both %q sections got chunk id %s: the second would overwrite the first in the store", chunks[0].Section, chunks[0].ID)
	}

	ctx := context.Background()
	st := openStore(t)
	ing := &rag.Ingester{Store: st, Namespace: []string{"kb"}}
	if _, err := ing.Ingest(ctx, []rag.Document{doc}); err != nil {
		t.Fatal(err)
	}
	items, err := st.Search(ctx, []string{"kb", rag.ChunksNS}, store.SearchQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Errorf("stored %d chunks, want 2", len(items))
	}
}

func TestSplitBySize(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		maxChars int
		pieces   int
	}{
		{"fits", "short paragraph", 100, 1},
		{"paragraphs", strings.Repeat("word ", 30) + "\n\n" + strings.Repeat("more ", 30), 200, 2},
		{"japanese sentences", strings.Repeat("これは文です。", 40), 100, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := rag.Split(rag.Document{SourceURL: "x", Text: tt.text}, tt.maxChars)
			if len(chunks) != tt.pieces {
				t.Fatalf("got %d pieces, want %d", len(chunks), tt.pieces)
			}
			seen := map[string]bool{}
			for _, c := range chunks {
				if n := len([]rune(c.Content)); n > tt.maxChars {
					t.Errorf("piece of %d runes exceeds %d", n, tt.maxChars)
				}
				if seen[c.ID] {
					t.Errorf("duplicate chunk id %s", c.ID)
				}
				seen[c.ID] = true
			}
		})
	}
}

func TestIngestIncremental(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	emb := &countingEmbedder{HashEmbedder: llm.HashEmbedder{Dim: 64}}
	ing := &rag.Ingester{Store: st, Namespace: []string{"kb"}, Embedder: emb, EmbedderName: "hash:64"}
	doc := func(text string) rag.Document {
		return rag.Document{ID: rag.DocID("guide.md"), SourceURL: "guide.md", Title: "Bot Guide", ContentHash: rag.Hash(text), Text: text}
	}
	edited := strings.Replace(guide, "無料", "500円", 1)
	inserted := strings.Replace(edited, "## Setup", "## New\n\nA new section.\n\n## Setup", 1)
	removed := strings.Replace(inserted, "Intro text.", "", 1)
	steps := []struct {
		name string
		text string
		want rag.Stats
	}{
		{"first ingestion embeds every chunk", guide, rag.Stats{Documents: 1, Chunks: 4, Indexed: 4, Embedded: 4}},
		{"same content is skipped whole", guide, rag.Stats{Documents: 1, Unchanged: 1, Chunks: 4}},
		{"one edited section re-embeds one chunk", edited, rag.Stats{Documents: 1, Chunks: 4, Indexed: 1, Embedded: 1, Kept: 3, Removed: 1}},
		{"an inserted section embeds only itself; the chunks after it move", inserted, rag.Stats{Documents: 1, Chunks: 5, Indexed: 1, Embedded: 1, Kept: 1, Moved: 3}},
		{"a removed section deletes its chunk; the others move, none is embedded", removed, rag.Stats{Documents: 1, Chunks: 4, Moved: 4, Removed: 1}},
	}
	total := 0
	for _, s := range steps {
		got, err := ing.Ingest(ctx, []rag.Document{doc(s.text)})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s: stats %+v, want %+v", s.name, got, s.want)
		}
		total += s.want.Embedded
		if emb.texts != total {
			t.Errorf("%s: embedder saw %d texts in all, want %d", s.name, emb.texts, total)
		}
	}
	items, err := st.Search(ctx, []string{"kb", rag.ChunksNS}, store.SearchQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 4 {
		t.Fatalf("%d chunks stored, want 4", len(items))
	}
	for _, it := range items {
		for _, k := range []string{"source_url", "title", "section", "chunk_id", "content_hash", rag.EmbeddingKey} {
			if it.Value[k] == nil {
				t.Errorf("chunk %s has no %s", it.Key, k)
			}
		}
	}
}

func TestLoader(t *testing.T) {
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.Write([]byte(`<?xml version="1.0"?><urlset><url><loc>` + base + `/page</loc></url><url><loc>` + base + `/raw.md</loc></url></urlset>`))
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<html><head><title>Drift Docs</title><script>var x=1</script></head><body><nav>menu</nav><h1>Perps</h1><p>Funding is hourly.</p><h2>Fees</h2><p>Taker fee 0.1%.</p></body></html>`))
	})
	mux.HandleFunc("/raw.md", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/markdown")
		w.Write([]byte("# Raw\n\nbody"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	base = srv.URL
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docs", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "docs", "a.md"), []byte("# A\n\ntext a"), 0o644)
	os.WriteFile(filepath.Join(dir, "docs", "sub", "b.txt"), []byte("plain b"), 0o644)
	os.WriteFile(filepath.Join(dir, "docs", "image.png"), []byte("x"), 0o644)

	l := &rag.Loader{BaseDir: dir}
	tests := []struct {
		src     string
		sources []string
		titles  []string
		wantErr string
	}{
		{src: "docs", sources: []string{"docs/a.md", "docs/sub/b.txt"}, titles: []string{"A", "b"}},
		{src: base + "/sitemap.xml", sources: []string{base + "/page", base + "/raw.md"}, titles: []string{"Drift Docs", "Raw"}},
		{src: base + "/missing", wantErr: "404"},
		{src: "nope.md", wantErr: "nope.md"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			docs, err := l.Load(context.Background(), tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != len(tt.sources) {
				t.Fatalf("got %d documents, want %d", len(docs), len(tt.sources))
			}
			for i, d := range docs {
				if d.SourceURL != tt.sources[i] || d.Title != tt.titles[i] || d.ContentHash != rag.Hash(d.Text) {
					t.Errorf("doc %d = %q %q", i, d.SourceURL, d.Title)
				}
			}
		})
	}
	docs, _ := l.Load(context.Background(), base+"/page")
	if got := docs[0].Text; !strings.Contains(got, "## Fees") || strings.Contains(got, "menu") || strings.Contains(got, "var x") {
		t.Errorf("page text %q: want headings kept, nav and scripts dropped", got)
	}
}

// runNode runs a built node with a store.
func runNode(t *testing.T, n node.Node, scope map[string]any, st store.Store) (node.Update, *nodetest.Recorder, error) {
	t.Helper()
	rec := &nodetest.Recorder{}
	in := &node.Input{Node: "n", ThreadID: "t", RunID: "r", Step: 1, Attempt: 1, State: scope["state"].(map[string]any),
		Scope: scope, Emit: rec.Sink(), Services: &node.Services{Store: st}}
	up, err := n.Run(context.Background(), in)
	return up, rec, err
}

func TestRetrieve(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	ing := &rag.Ingester{Store: st, Namespace: []string{"kb"}, Embedder: llm.HashEmbedder{Dim: 256}, EmbedderName: "hash"}
	docs := []rag.Document{
		{ID: "1", SourceURL: "docs/bot.md", Title: "Bot", Text: "# Bot\n\n## 料金\n\nこのボットの利用料金は無料です。\n\n## Setup\n\nSet the token."},
		{ID: "2", SourceURL: "https://docs.drift.trade/perps", Title: "Perps", Text: "# Perps\n\n## Funding\n\nDrift funding rates are paid hourly."},
	}
	if _, err := ing.Ingest(ctx, docs); err != nil {
		t.Fatal(err)
	}
	g, err := nodetest.Graph(nil, "rag: object", "text: string", "plan: string")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		config   map[string]any
		state    map[string]any
		retrieve bool
		first    string
		reason   string
	}{
		{"bm25 japanese", map[string]any{"namespace": []any{"kb"}, "query": "${text}"}, map[string]any{"text": "料金はいくらですか"}, true, "docs/bot.md", "unconditional"},
		{"hybrid english", map[string]any{"namespace": []any{"kb"}, "query": "${text}", "mode": "hybrid", "embedder": "hash"}, map[string]any{"text": "how often is drift funding paid"}, true, "https://docs.drift.trade/perps", "unconditional"},
		{"decided against", map[string]any{"namespace": []any{"kb"}, "query": "${text}", "decide": "plan == 'rag'", "reason": "plan ${plan}"}, map[string]any{"text": "hi", "plan": "direct"}, false, "", "plan direct (decide (plan == 'rag') is false)"},
		{"decided for", map[string]any{"namespace": []any{"kb"}, "query": "${text}", "decide": "plan == 'rag'"}, map[string]any{"text": "Set the token", "plan": "rag"}, true, "docs/bot.md", "is true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, err := nodetest.Build(g, "rag_retrieve", "retrieve", tt.config)
			if err != nil || n == nil {
				t.Fatalf("build: %v %v", err, b.Problems())
			}
			up, rec, err := runNode(t, n, nodetest.Scope(g, tt.state), st)
			if err != nil {
				t.Fatal(err)
			}
			out := up["rag"].(map[string]any)
			dec := out["decision"].(map[string]any)
			if dec["retrieve"] != tt.retrieve || !strings.Contains(dec["reason"].(string), tt.reason) {
				t.Errorf("decision %v, want retrieve %v reason containing %q", dec, tt.retrieve, tt.reason)
			}
			chunks := out["retrieved_chunks"].([]any)
			cites := out["citations"].([]any)
			if len(chunks) != len(cites) || dec["count"] != len(chunks) {
				t.Errorf("%d chunks, %d citations, count %v", len(chunks), len(cites), dec["count"])
			}
			if len(rec.OfType("retrieval")) != 1 {
				t.Errorf("want one retrieval event, got %v", rec.Events())
			}
			if !tt.retrieve {
				if len(chunks) != 0 {
					t.Errorf("no retrieval, yet %d chunks", len(chunks))
				}
				return
			}
			if len(chunks) == 0 {
				t.Fatal("no chunks retrieved")
			}
			c := cites[0].(map[string]any)
			if c["source_url"] != tt.first || c["chunk_id"] == "" || c["section"] == "" {
				t.Errorf("first citation %v, want source %s", c, tt.first)
			}
		})
	}
}

func TestRetrieveConfigErrors(t *testing.T) {
	g, err := nodetest.Graph(nil, "rag: object", "text: string", "count: int")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		config map[string]any
		path   string
	}{
		{"fallback without embedder", map[string]any{"namespace": []any{"kb"}, "query": "x", "mode": "hybrid", "fallback_embedder": "hash"}, "fallback_embedder"},
		{"field not an object", map[string]any{"namespace": []any{"kb"}, "query": "x", "field": "count"}, "field"},
		{"unknown field in query", map[string]any{"namespace": []any{"kb"}, "query": "${txt}"}, "query"},
		{"decide not a bool", map[string]any{"namespace": []any{"kb"}, "query": "x", "decide": "text"}, "decide"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, b, _ := nodetest.Build(g, "rag_retrieve", "retrieve", tt.config)
			if n != nil {
				t.Fatal("built a node from an invalid config")
			}
			found := false
			for _, p := range b.Problems() {
				if p.Path == tt.path {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem at %q: %v", tt.path, b.Problems())
			}
		})
	}
}

// runImageSummary builds an image_summary node over a Store and returns a
// function that runs it on img with the node cache of the store, a model
// scripted with script (a model call past it fails), and the events sent.
func runImageSummary(t *testing.T, st store.Store, img any, script []any) func() (map[string]any, []event.Event, error) {
	t.Helper()
	decl := "image: string"
	if _, list := img.([]any); list {
		decl = "image: list<string>"
	}
	g, err := nodetest.Graph(nil, "vision: object", decl)
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]any{"image": "image"}
	n, b, err := nodetest.Build(g, "image_summary", "vision", config)
	if err != nil || n == nil {
		t.Fatalf("build: %v %v", err, b.Problems())
	}
	return func() (map[string]any, []event.Event, error) {
		var events []event.Event
		emit := func(ev event.Event) { events = append(events, ev) }
		scope := nodetest.Scope(g, map[string]any{"image": img})
		cache := nodecache.New(st, nodecache.Node{Graph: "g", Name: "n", Type: "image_summary", Config: config}, 0, emit)
		in := &node.Input{Node: "n", State: scope["state"].(map[string]any), Scope: scope, Emit: emit, Cache: cache,
			Services: &node.Services{Store: st, Extra: llm.ServiceKey.Bind(llm.ScriptKey.Bind(node.Extra{}, script), llm.NewModels(nil))}}
		up, err := n.Run(context.Background(), in)
		if err != nil {
			return nil, events, err
		}
		return up["vision"].(map[string]any), events, nil
	}
}

// The image summary lives in the node cache, keyed by the image's SHA-256:
// the second run of the same image reuses it without a model call and says
// so (cached: true, a cache_hit event).
func TestImageSummaryCache(t *testing.T) {
	st := openStore(t)
	script := []any{map[string]any{"node": "n", "json": map[string]any{"summary": "請求書", "entities": []any{"ACME"}, "tables": []any{}, "warnings": []any{}}}}
	run := runImageSummary(t, st, "data:image/png;base64,iVBORw0KGgo=", script)
	first, events, err := run()
	if err != nil {
		t.Fatal(err)
	}
	if first["summary"] != "請求書" || first["cached"] != false || first["mime"] != "image/png" || first["size"] != 8 ||
		first["model"] != "script" || len(first["image_sha256"].(string)) != 64 {
		t.Errorf("first summary %v", first)
	}
	if hasEvent(events, nodecache.HitEvent) {
		t.Errorf("first run: a cache hit %v", events)
	}
	// The script holds one reply: a second model call would fail.
	second, events, err := run()
	if err != nil {
		t.Fatalf("second run called the model again: %v", err)
	}
	if second["cached"] != true || second["summary"] != "請求書" || second["image_sha256"] != first["image_sha256"] {
		t.Errorf("second summary %v", second)
	}
	if !hasEvent(events, nodecache.HitEvent) || !hasEvent(events, "vision") {
		t.Errorf("second run: events %v, want cache_hit and vision", events)
	}
	// The summary is stored in the node cache under the image's hash.
	items, err := st.Search(context.Background(), append(slices.Clone(nodecache.Namespace), "g", "n"), store.SearchQuery{})
	if err != nil || len(items) != 1 {
		t.Fatalf("node cache items %v, %v; want one", items, err)
	}
	if key, _ := nodecache.Digest(first["image_sha256"]); items[0].Key != key {
		t.Errorf("stored under %s, want the digest of the image hash %s", items[0].Key, key)
	}
	if items[0].CreatedAt.IsZero() {
		t.Errorf("the stored summary has no creation time: %+v", items[0])
	}
}

// An album (a list of images) is summarized image by image, each from the
// cache when it was seen, into one summary numbering them, with each
// image's own under images.
func TestImageSummaryOfAnAlbum(t *testing.T) {
	st := openStore(t)
	summary := func(text, entity string) map[string]any {
		return map[string]any{"node": "n", "json": map[string]any{"summary": text, "entities": []any{entity}, "tables": []any{}, "warnings": []any{}}}
	}
	first, second := "data:image/png;base64,iVBORw0KGgo=", "data:image/png;base64,iVBORw0KGgoA"
	if _, _, err := runImageSummary(t, st, first, []any{summary("請求書", "ACME")})(); err != nil {
		t.Fatal(err)
	}
	// The first image was seen: only the second calls the model.
	got, events, err := runImageSummary(t, st, []any{first, second}, []any{summary("領収書", "Globex")})()
	if err != nil {
		t.Fatal(err)
	}
	if got["summary"] != "1. 請求書\n2. 領収書" || !reflect.DeepEqual(got["entities"], []any{"ACME", "Globex"}) || got["cached"] != false {
		t.Errorf("album summary %v", got)
	}
	images, _ := got["images"].([]any)
	if len(images) != 2 || images[0].(map[string]any)["cached"] != true || images[1].(map[string]any)["cached"] != false ||
		got["image_sha256"] != images[0].(map[string]any)["image_sha256"] {
		t.Errorf("images %v", got["images"])
	}
	visions := 0
	for _, e := range events {
		if e.Type == "vision" {
			visions++
		}
	}
	if visions != 2 {
		t.Errorf("events %v, want a vision event per image", events)
	}
	if _, _, err := runImageSummary(t, st, []any{first, 7}, nil)(); err == nil || !strings.Contains(err.Error(), "item 1 is") {
		t.Errorf("a list with a number: %v", err)
	}
}

// A summary stored before the node cache (namespace ["vision_cache"], key
// the image's SHA-256) is still used, without a model call, and moves into
// the node cache.
func TestImageSummaryReadsSummariesStoredBeforeTheNodeCache(t *testing.T) {
	st := openStore(t)
	png := []byte("\x89PNG\r\n\x1a\n")
	sha := rag.Hash(string(png))
	old := map[string]any{"image_sha256": sha, "mime": "image/png", "size": len(png), "model": "openai:gpt-4o",
		"summary_json": map[string]any{"summary": "古い要約", "entities": []any{}, "tables": []any{}, "warnings": []any{}},
		"created_at":   "2026-01-02T03:04:05Z"}
	if err := st.Put(context.Background(), []string{"vision_cache"}, sha, old, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// No scripted reply: a model call fails the run.
	run := runImageSummary(t, st, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png), []any{})
	got, _, err := run()
	if err != nil {
		t.Fatalf("the stored summary was not used: %v", err)
	}
	if got["summary"] != "古い要約" || got["cached"] != true || got["image_sha256"] != sha || got["model"] != "openai:gpt-4o" {
		t.Errorf("summary %v", got)
	}
	_, events, err := run()
	if err != nil || !hasEvent(events, nodecache.HitEvent) {
		t.Errorf("second run: %v, events %v; want a node cache hit", err, events)
	}
}

func hasEvent(events []event.Event, typ string) bool {
	for _, ev := range events {
		if ev.Type == typ {
			return true
		}
	}
	return false
}

func TestParseSummary(t *testing.T) {
	tests := []struct {
		reply   string
		wantErr string
	}{
		{`{"summary": "a chart", "entities": ["x"]}`, ""},
		{"```json\n{\"summary\": \"s\", \"tables\": [], \"warnings\": [\"blurry\"]}\n```", ""},
		{`{"entities": []}`, "no string summary"},
		{`{"summary": "s", "tables": "none"}`, "tables must be a list"},
		{`not json`, "not a JSON object"},
	}
	for _, tt := range tests {
		got, err := rag.ParseSummary(tt.reply)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err %v, want %q", tt.reply, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.reply, err)
			continue
		}
		for _, k := range []string{"entities", "tables", "warnings"} {
			if _, ok := got[k].([]any); !ok {
				t.Errorf("%q: %s is %T, want a list", tt.reply, k, got[k])
			}
		}
	}
}
