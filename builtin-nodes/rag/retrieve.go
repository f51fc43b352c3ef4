package rag

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/embeddings"
	"math"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/namespace"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// Hybrid ranking weight of the cosine similarity; BM25 (normalized by the
// best BM25 score) takes the rest.
const semanticWeight = 0.6

// maxCandidates bounds how many chunks hybrid ranking scores by cosine.
const maxCandidates = 5000

// snippetChars is the length of a citation's snippet.
const snippetChars = 160

// RetrieveConfig is the schema of a rag_retrieve node's config.
const RetrieveConfig = `{
	namespace: [...string] & [_, ...]
	query: string
	decide?: string
	reason?: string
	top_k?: *4 | int & >0 & <=50
	mode?: *"bm25" | "hybrid"
	embedder?: string
	fallback_embedder?: string
	min_score?: number & >=0
	field?: *"rag" | string
}`

func init() {
	node.MustRegister(node.Type{
		Name: "rag_retrieve",
		Description: "Decides whether to retrieve, then writes the top-K document chunks (BM25 or cosine+BM25) " +
			"with citations, the decision and its reason.",
		Config: RetrieveConfig,
		New:    newRetrieve,
	})
}

type retrieveNode struct {
	namespace []node.Template
	query     node.Template
	decide    node.Expr
	reason    node.Template
	topK      int
	mode      string
	embedder  EmbedderSpec
	minScore  float64
	field     string
}

func newRetrieve(b node.Builder) (node.Node, error) {
	var cfg struct {
		Namespace []string `json:"namespace"`
		Query     string   `json:"query"`
		Decide    string   `json:"decide"`
		Reason    string   `json:"reason"`
		TopK      int      `json:"top_k"`
		Mode      string   `json:"mode"`
		Embedder  string   `json:"embedder"`
		Fallback  string   `json:"fallback_embedder"`
		MinScore  float64  `json:"min_score"`
		Field     string   `json:"field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "rag_retrieve node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &retrieveNode{topK: cfg.TopK, mode: cfg.Mode, embedder: EmbedderSpec{Spec: cfg.Embedder, Fallback: cfg.Fallback}, minScore: cfg.MinScore, field: cfg.Field}
	if n.topK == 0 {
		n.topK = 4
	}
	if n.mode == "" {
		n.mode = "bm25"
	}
	if n.field == "" {
		n.field = "rag"
	}
	n.namespace = namespace.Compile(b, cfg.Namespace)
	n.query = b.Template("query", cfg.Query)
	if cfg.Decide != "" {
		n.decide = b.Expr("decide", cfg.Decide, graph.Bool)
	}
	if cfg.Reason != "" {
		n.reason = b.Template("reason", cfg.Reason)
	}
	if cfg.Fallback != "" && cfg.Embedder == "" {
		b.Errorf("fallback_embedder", "invalid-config", "rag_retrieve node %q: fallback_embedder needs an embedder to fall back from", b.NodeName())
	}
	if f := check.Field(b, "field", n.field); f != nil && f.Type.Kind != graph.Object && f.Type.Kind != graph.Any {
		b.Errorf("field", "invalid-config", "rag_retrieve node %q writes an object to %q, which is declared %s; declare it {type: \"object\"}", b.NodeName(), n.field, f.Type)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Prepare implements node.Preparer.
func (n *retrieveNode) Prepare(_ context.Context, s *node.Services) error {
	return namespace.RequireStore(s, "rag_retrieve")
}

// Run implements node.Node.
func (n *retrieveNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	if in.Services == nil || in.Services.Store == nil {
		return nil, node.Errorf("no_store", "%s: %v", in.Node, namespace.RequireStore(in.Services, "rag_retrieve"))
	}
	query, err := n.query.Render(in.Scope)
	if err != nil {
		return nil, node.Errorf("template_error", "%s: query: %w", in.Node, err)
	}
	query = strings.TrimSpace(query)
	retrieve, reason := true, "retrieval is unconditional"
	if n.decide != nil {
		v, err := n.decide.Eval(in.Scope)
		if err != nil {
			return nil, node.Errorf("expression_error", "%s: decide (%s): %w", in.Node, n.decide.Source(), err)
		}
		retrieve, _ = v.(bool)
		reason = fmt.Sprintf("decide (%s) is %t", n.decide.Source(), retrieve)
	}
	if n.reason != nil {
		r, err := n.reason.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf("template_error", "%s: reason: %w", in.Node, err)
		}
		if strings.TrimSpace(r) != "" {
			reason = strings.TrimSpace(r) + " (" + reason + ")"
		}
	}
	if retrieve && query == "" {
		retrieve, reason = false, "the query is empty"
	}
	chunks := []any{}
	citations := []any{}
	if retrieve {
		ns, err := namespace.Render(in, n.namespace)
		if err != nil {
			return nil, err
		}
		hits, note, err := n.search(ctx, in, ns, query)
		if err != nil {
			return nil, err
		}
		if note != "" {
			reason += "; " + note
		}
		for _, h := range hits {
			chunks = append(chunks, h)
			citations = append(citations, map[string]any{
				"chunk_id": h["chunk_id"], "source_url": h["source_url"], "title": h["title"],
				"section": h["section"], "snippet": snippet(fmt.Sprint(h["content"])),
			})
		}
	}
	decision := map[string]any{"retrieve": retrieve, "reason": reason, "mode": n.mode, "count": len(chunks)}
	if in.Emit != nil {
		in.Emit(event.Event{Type: "retrieval", Payload: map[string]any{
			"query": query, "retrieve": retrieve, "reason": reason, "mode": n.mode, "count": len(chunks),
		}})
	}
	return node.Update{n.field: map[string]any{
		"query": query, "retrieved_chunks": chunks, "citations": citations, "decision": decision,
	}}, nil
}

// queryEmbedder returns the embedder of the query and its name: the
// configured one, else the model the corpus was embedded with (its sync
// record), so that query and chunks are vectors of the same model.
func (n *retrieveNode) queryEmbedder(ctx context.Context, in *node.Input, corpus []string) (embeddings.Embedder, string, error) {
	if n.embedder.Spec != "" {
		return n.embedder.Resolve(ctx, in.Services, in.Emit)
	}
	st, err := (&Corpus{Store: in.Services.Store, Namespace: corpus}).State(ctx)
	if err != nil {
		return nil, "", err
	}
	if st.EmbeddingModel == "" {
		return nil, "", fmt.Errorf("the corpus %v records no embedding model (not synced yet, or synced without an embedder); set the node's embedder", corpus)
	}
	return llm.EmbedderFor(ctx, in.Services, st.EmbeddingModel)
}

// search ranks the chunks of the corpus ns for query. In hybrid mode only
// chunks embedded by the query's model are compared by cosine; when the
// query cannot be embedded, ranking falls back to BM25 and the returned note
// says so.
func (n *retrieveNode) search(ctx context.Context, in *node.Input, corpus []string, query string) ([]map[string]any, string, error) {
	ns := append(append([]string{}, corpus...), ChunksNS)
	bm25 := func() ([]map[string]any, error) {
		items, err := in.Services.Store.Search(ctx, ns, store.SearchQuery{Query: query, Limit: n.topK * 3})
		if err != nil {
			return nil, node.Errorf("store_error", "%s: search %v: %w", in.Node, ns, err)
		}
		var out []map[string]any
		for _, it := range items {
			if it.Score < n.minScore || it.Score <= 0 {
				continue
			}
			out = append(out, hit(it, it.Score))
			if len(out) == n.topK {
				break
			}
		}
		return out, nil
	}
	if n.mode == "bm25" {
		hits, err := bm25()
		return hits, "", err
	}
	emb, model, err := n.queryEmbedder(ctx, in, corpus)
	if err != nil {
		return nil, "", node.Errorf("llm_config", "%s: embedder: %w", in.Node, err)
	}
	qv, err := emb.EmbedQuery(ctx, query)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", fmt.Errorf("%s: embed the query: %w", in.Node, err)
		}
		hits, berr := bm25()
		return hits, fmt.Sprintf("embedding the query with %s failed (%v): ranked by BM25 only", model, err), berr
	}
	bm, err := in.Services.Store.Search(ctx, ns, store.SearchQuery{Query: query, Limit: maxCandidates})
	if err != nil {
		return nil, "", node.Errorf("store_error", "%s: search %v: %w", in.Node, ns, err)
	}
	bmScore := map[string]float64{}
	best := 0.0
	for _, it := range bm {
		bmScore[it.Key] = it.Score
		best = math.Max(best, it.Score)
	}
	all, err := in.Services.Store.Search(ctx, ns, store.SearchQuery{Limit: maxCandidates})
	if err != nil {
		return nil, "", node.Errorf("store_error", "%s: list %v: %w", in.Node, ns, err)
	}
	type scored struct {
		item  store.Item
		score float64
	}
	var ranked []scored
	for _, it := range all {
		s := 0.0
		if it.Value["embedding_model"] == model {
			s = semanticWeight * cosine(qv, it.Value[EmbeddingKey])
		}
		if best > 0 {
			s += (1 - semanticWeight) * bmScore[it.Key] / best
		}
		if s <= 0 || s < n.minScore {
			continue
		}
		ranked = append(ranked, scored{it, s})
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		if ranked[i].score != ranked[j].score {
			return ranked[i].score > ranked[j].score
		}
		return ranked[i].item.Key < ranked[j].item.Key
	})
	var out []map[string]any
	for i := 0; i < len(ranked) && i < n.topK; i++ {
		out = append(out, hit(ranked[i].item, ranked[i].score))
	}
	return out, "", nil
}

func hit(it store.Item, score float64) map[string]any {
	h := map[string]any{"score": math.Round(score*1e4) / 1e4}
	for _, k := range []string{"chunk_id", "source_url", "title", "section", "content", "chunk_index", "content_hash"} {
		h[k] = it.Value[k]
	}
	return h
}

func cosine(q []float32, raw any) float64 {
	v, ok := raw.([]any)
	if !ok || len(v) != len(q) {
		return 0
	}
	var dot, nq, nv float64
	for i, x := range v {
		f, _ := x.(float64)
		dot += float64(q[i]) * f
		nq += float64(q[i]) * float64(q[i])
		nv += f * f
	}
	if nq == 0 || nv == 0 {
		return 0
	}
	return dot / math.Sqrt(nq*nv)
}

func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= snippetChars {
		return s
	}
	return string(r[:snippetChars]) + "…"
}
