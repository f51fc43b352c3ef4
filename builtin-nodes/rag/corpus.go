package rag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/namespace"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// Source kinds.
const (
	KindFile      = "file"
	KindDirectory = "directory"
	KindURL       = "url"
	KindSitemap   = "sitemap"
)

// Source origins: where a source was registered.
const (
	// OriginGraph sources are the sources of a rag_ingest node's config; a
	// sync drops those the graph no longer lists.
	OriginGraph = "graph"
	// OriginCLI sources were added with `graphctl docs add`.
	OriginCLI = "cli"
)

// Source statuses.
const (
	StatusPending = "pending"
	StatusOK      = "ok"
	StatusError   = "error"
)

// syncKey is the key of the corpus's sync record under ns+["sync"].
const syncKey = "state"

// Source is a registered document source.
type Source struct {
	ID     string `json:"source_id"`
	Kind   string `json:"kind"`
	Root   string `json:"root"`
	Origin string `json:"origin"`
	// Status is pending before the first sync, then ok or error (Error says
	// why; the documents of the last good sync stay searchable).
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`
	AddedAt string `json:"added_at"`
	// UpdatedAt is when a sync last changed the source's documents.
	UpdatedAt string `json:"updated_at,omitempty"`
	// SyncedAt is when it was last synced, changed or not.
	SyncedAt  string   `json:"synced_at,omitempty"`
	Documents int      `json:"documents"`
	Chunks    int      `json:"chunks"`
	DocIDs    []string `json:"doc_ids,omitempty"`
}

// SourceID is the id of the source at root.
func SourceID(root string) string { return "src-" + Hash(root)[:12] }

// SyncResult is what a sync did.
type SyncResult struct {
	Stats
	// Sources counts the sources synced; Failed maps a failed source's root
	// to its error (its stored documents are kept).
	Sources int               `json:"sources"`
	Failed  map[string]string `json:"failed,omitempty"`
	// RemovedDocuments counts documents that left their source.
	RemovedDocuments int    `json:"removed_documents"`
	SyncedAt         string `json:"synced_at"`
	// EmbedError is the embedder's failure when it made a source fail (an
	// embeddings server that is down or serves no embeddings).
	EmbedError error `json:"-"`
}

// SyncState is the corpus-wide record of the last sync.
type SyncState struct {
	SyncedAt       string   `json:"synced_at"`
	Documents      int      `json:"documents"`
	Chunks         int      `json:"chunks"`
	Titles         []string `json:"titles"`
	EmbeddingModel string   `json:"embedding_model"`
	// FallbackFrom is the embedder that failed at the last sync, when its
	// fallback (EmbeddingModel) embedded the corpus instead.
	FallbackFrom string `json:"fallback_from,omitempty"`
}

// Corpus is a namespace of the Store holding registered sources, their
// documents and chunks: what rag_ingest keeps up to date and `graphctl docs`
// manages.
type Corpus struct {
	Store     store.Store
	Namespace []string
	// Loader reads sources; its BaseDir resolves relative paths.
	Loader *Loader
	// Embedder and EmbedderName embed new chunks (see Ingester).
	Embedder     embeddings.Embedder
	EmbedderName string
	// FallbackFrom names the embedder Embedder stands in for, when that
	// one failed; the sync record keeps it.
	FallbackFrom string
	MaxChars     int
	// Now reads the clock; nil means time.Now.
	Now func() time.Time
}

func (c *Corpus) ns(sub string) []string {
	return append(append([]string{}, c.Namespace...), sub)
}

func (c *Corpus) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Corpus) loader() *Loader {
	if c.Loader == nil {
		c.Loader = &Loader{}
	}
	return c.Loader
}

// KindOf says what a source root is: a sitemap (an http(s) URL whose path
// ends in .xml), a page URL, or a local file or directory (which must exist).
func (c *Corpus) KindOf(root string) (string, error) {
	root = strings.TrimSpace(root)
	if root == "" {
		return "", errors.New("source is empty")
	}
	if IsURL(root) {
		if strings.HasSuffix(strings.ToLower(strings.SplitN(root, "?", 2)[0]), ".xml") {
			return KindSitemap, nil
		}
		return KindURL, nil
	}
	info, err := os.Stat(c.loader().resolve(root))
	if err != nil {
		return "", fmt.Errorf("source %q: %w", root, err)
	}
	if info.IsDir() {
		return KindDirectory, nil
	}
	return KindFile, nil
}

func toSource(v map[string]any) (Source, error) {
	var s Source
	b, err := json.Marshal(v)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

func fromSource(s Source) (map[string]any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

func (c *Corpus) put(ctx context.Context, s Source) error {
	v, err := fromSource(s)
	if err != nil {
		return fmt.Errorf("source %s: %w", s.Root, err)
	}
	if err := c.Store.Put(ctx, c.ns(SourcesNS), s.ID, v, store.PutOptions{Index: []string{}}); err != nil {
		return fmt.Errorf("store source %s: %w", s.Root, err)
	}
	return nil
}

// Add registers a source (pending until synced). Adding a registered root
// again returns it unchanged, with added false.
func (c *Corpus) Add(ctx context.Context, root, origin string) (src Source, added bool, err error) {
	root = strings.TrimSpace(root)
	kind, err := c.KindOf(root)
	if err != nil {
		return Source{}, false, err
	}
	id := SourceID(root)
	if it, err := c.Store.Get(ctx, c.ns(SourcesNS), id); err == nil {
		s, err := toSource(it.Value)
		return s, false, err
	} else if !errors.Is(err, store.ErrNotFound) {
		return Source{}, false, fmt.Errorf("read source %s: %w", root, err)
	}
	s := Source{ID: id, Kind: kind, Root: root, Origin: origin, Status: StatusPending, AddedAt: c.now().UTC().Format(time.RFC3339)}
	return s, true, c.put(ctx, s)
}

// Sources returns the registered sources, by root.
func (c *Corpus) Sources(ctx context.Context) ([]Source, error) {
	items, err := c.Store.Search(ctx, c.ns(SourcesNS), store.SearchQuery{Limit: 100000})
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	out := make([]Source, 0, len(items))
	for _, it := range items {
		s, err := toSource(it.Value)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", it.Key, err)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Root < out[j].Root })
	return out, nil
}

// Find returns the source with the given id or root.
func (c *Corpus) Find(ctx context.Context, ref string) (Source, error) {
	ref = strings.TrimSpace(ref)
	id := ref
	if !strings.HasPrefix(ref, "src-") {
		id = SourceID(ref)
	}
	it, err := c.Store.Get(ctx, c.ns(SourcesNS), id)
	if errors.Is(err, store.ErrNotFound) {
		return Source{}, fmt.Errorf("no source %q is registered (see graphctl docs list)", ref)
	}
	if err != nil {
		return Source{}, fmt.Errorf("read source %s: %w", ref, err)
	}
	return toSource(it.Value)
}

func (c *Corpus) ingester(sourceID string) *Ingester {
	return &Ingester{Store: c.Store, Namespace: c.Namespace, Embedder: c.Embedder, EmbedderName: c.EmbedderName,
		MaxChars: c.MaxChars, SourceID: sourceID, Now: c.Now}
}

// Remove unregisters a source and deletes its documents and chunks; it
// returns the source and how many documents and chunks went.
func (c *Corpus) Remove(ctx context.Context, ref string) (Source, int, int, error) {
	s, err := c.Find(ctx, ref)
	if err != nil {
		return Source{}, 0, 0, err
	}
	ing := c.ingester(s.ID)
	chunks := 0
	for _, id := range s.DocIDs {
		n, err := ing.RemoveDocument(ctx, id)
		chunks += n
		if err != nil {
			return s, 0, chunks, err
		}
	}
	if err := c.Store.Delete(ctx, c.ns(SourcesNS), s.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return s, len(s.DocIDs), chunks, fmt.Errorf("remove source %s: %w", s.Root, err)
	}
	return s, len(s.DocIDs), chunks, c.writeState(ctx, "")
}

// Reconcile makes the graph's sources (roots) registered with origin graph,
// and unregisters graph sources the graph no longer lists (with their
// documents). Sources added from the command line are left alone.
func (c *Corpus) Reconcile(ctx context.Context, roots []string) error {
	want := map[string]bool{}
	for _, r := range roots {
		r = strings.TrimSpace(r)
		want[SourceID(r)] = true
		if _, _, err := c.Add(ctx, r, OriginGraph); err != nil {
			return err
		}
	}
	all, err := c.Sources(ctx)
	if err != nil {
		return err
	}
	for _, s := range all {
		if s.Origin == OriginGraph && !want[s.ID] {
			if _, _, _, err := c.Remove(ctx, s.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// Sync reads the named sources (by id or root; every registered source when
// none is named) and ingests them incrementally: pages are fetched with the
// validators of the last fetch (a 304 skips the page), only new chunks are
// embedded, and documents a source no longer has are deleted. A source that
// cannot be read is marked error, keeps its documents, and does not stop the
// others.
func (c *Corpus) Sync(ctx context.Context, refs ...string) (SyncResult, error) {
	res := SyncResult{}
	var sources []Source
	if len(refs) == 0 {
		all, err := c.Sources(ctx)
		if err != nil {
			return res, err
		}
		sources = all
	} else {
		for _, r := range refs {
			s, err := c.Find(ctx, r)
			if err != nil {
				return res, err
			}
			sources = append(sources, s)
		}
	}
	l := c.loader()
	l.Validators = func(url string) (string, string) {
		it, err := c.Store.Get(ctx, c.ns(DocsNS), DocID(url))
		if err != nil || it.Value["embedding_model"] != c.EmbedderName {
			return "", ""
		}
		etag, _ := it.Value["etag"].(string)
		lm, _ := it.Value["last_modified"].(string)
		return etag, lm
	}
	defer func() { l.Validators = nil }()
	now := c.now().UTC().Format(time.RFC3339)
	for _, s := range sources {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		res.Sources++
		fail := func(err error) error {
			s.Status, s.Error, s.SyncedAt = StatusError, err.Error(), now
			if res.Failed == nil {
				res.Failed = map[string]string{}
			}
			res.Failed[s.Root] = err.Error()
			return c.put(ctx, s)
		}
		docs, err := l.Load(ctx, s.Root)
		if err != nil {
			if err := fail(err); err != nil {
				return res, err
			}
			continue
		}
		ing := c.ingester(s.ID)
		st, err := ing.Ingest(ctx, docs)
		res.Stats.add(st)
		if err != nil {
			// An embedder or store failure: the documents ingested so far
			// are kept, and the next sync goes on from them.
			if ctx.Err() != nil {
				return res, err
			}
			if errors.Is(err, errEmbedding) && res.EmbedError == nil {
				res.EmbedError = err
			}
			if err := fail(err); err != nil {
				return res, err
			}
			continue
		}
		ids := make([]string, 0, len(docs))
		for _, d := range docs {
			ids = append(ids, d.ID)
		}
		removedDocs := 0
		for _, old := range s.DocIDs {
			if slices.Contains(ids, old) {
				continue
			}
			n, err := ing.RemoveDocument(ctx, old)
			res.Removed += n
			if err != nil {
				return res, fmt.Errorf("sync %s: %w", s.Root, err)
			}
			removedDocs++
		}
		res.RemovedDocuments += removedDocs
		if s.UpdatedAt == "" || st.Indexed+st.Moved+st.Removed+removedDocs > 0 {
			s.UpdatedAt = now
		}
		s.Status, s.Error, s.SyncedAt = StatusOK, "", now
		s.Documents, s.Chunks, s.DocIDs = len(docs), st.Chunks, ids
		if err := c.put(ctx, s); err != nil {
			return res, err
		}
	}
	res.SyncedAt = now
	return res, c.writeState(ctx, now)
}

// writeState refreshes the corpus's sync record from its sources (and,
// when syncedAt is not empty, the time of the sync).
func (c *Corpus) writeState(ctx context.Context, syncedAt string) error {
	prev, err := c.State(ctx)
	if err != nil {
		return err
	}
	st := SyncState{SyncedAt: prev.SyncedAt, EmbeddingModel: c.EmbedderName, FallbackFrom: c.FallbackFrom, Titles: []string{}}
	if syncedAt != "" {
		st.SyncedAt = syncedAt
	}
	sources, err := c.Sources(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, s := range sources {
		st.Documents += s.Documents
		st.Chunks += s.Chunks
		for _, id := range s.DocIDs {
			it, err := c.Store.Get(ctx, c.ns(DocsNS), id)
			if err != nil {
				continue
			}
			if t, _ := it.Value["title"].(string); t != "" && !seen[t] {
				seen[t] = true
				st.Titles = append(st.Titles, t)
			}
		}
	}
	sort.Strings(st.Titles)
	v := map[string]any{}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if err := c.Store.Put(ctx, c.ns(SyncNS), syncKey, v, store.PutOptions{Index: []string{}}); err != nil {
		return fmt.Errorf("store the sync record: %w", err)
	}
	return nil
}

// State returns the corpus's sync record; a zero SyncState before the
// first sync.
func (c *Corpus) State(ctx context.Context) (SyncState, error) {
	var st SyncState
	it, err := c.Store.Get(ctx, c.ns(SyncNS), syncKey)
	if errors.Is(err, store.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read the sync record: %w", err)
	}
	b, err := json.Marshal(it.Value)
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(b, &st)
}

// IngestNodes lists the rag_ingest nodes of a compiled graph, in
// declaration order.
func IngestNodes(g *compile.Graph) []string {
	var out []string
	for _, name := range g.NodeOrder {
		if _, ok := g.Nodes[name].Impl.(*ingestNode); ok {
			out = append(out, name)
		}
	}
	return out
}

// CorpusOf returns the corpus the rag_ingest node nodeName of g keeps (the
// only one when nodeName is empty), with its embedder resolved against s,
// and the graph's own sources for Reconcile; an embedder fallback is
// announced on emit (may be nil). The node's namespace must not depend on
// state.
func CorpusOf(ctx context.Context, g *compile.Graph, nodeName string, s *node.Services, emit event.Sink) (*Corpus, []string, error) {
	nodes := IngestNodes(g)
	if nodeName == "" {
		switch len(nodes) {
		case 0:
			return nil, nil, fmt.Errorf("graph %q has no rag_ingest node: it keeps no document corpus", g.Spec.Name)
		case 1:
			nodeName = nodes[0]
		default:
			return nil, nil, fmt.Errorf("graph %q has several rag_ingest nodes (%s): name one", g.Spec.Name, strings.Join(nodes, ", "))
		}
	}
	cn, ok := g.Nodes[nodeName]
	if !ok {
		return nil, nil, fmt.Errorf("graph %q has no node %q (its rag_ingest nodes: %s)", g.Spec.Name, nodeName, strings.Join(nodes, ", "))
	}
	n, ok := cn.Impl.(*ingestNode)
	if !ok {
		return nil, nil, fmt.Errorf("node %q of graph %q is a %s node, not rag_ingest", nodeName, g.Spec.Name, cn.Spec.Type)
	}
	ns, err := namespace.Render(&node.Input{Node: nodeName, Scope: map[string]any{}}, n.namespace)
	if err != nil {
		return nil, nil, fmt.Errorf("node %q: its namespace depends on the run's state, so it names no single corpus: %w", nodeName, err)
	}
	c, err := n.Corpus(ctx, s, ns, emit)
	if err != nil {
		return nil, nil, fmt.Errorf("node %q: embedder: %w", nodeName, err)
	}
	return c, append([]string(nil), n.sources...), nil
}
