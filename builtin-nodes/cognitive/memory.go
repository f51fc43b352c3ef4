package cognitive

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/namespace"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// A memory is stored as one Store item whose value is a document
//
//	{key, value, category, confidence, access_count, last_accessed, ...details}
//
// plus reserved keys that are never returned: EmbeddingKey (the vector of the
// memory's text, when an embedder is configured), EmbeddingModelKey (the
// embedder that computed it) and IndexKey (the indexed paths, when they are
// not the default, so that updating access statistics keeps the item
// searchable the same way).
const (
	EmbeddingKey      = "_embedding"
	EmbeddingModelKey = "_embedding_model"
	IndexKey          = "_index"
)

// defaultIndex is the document paths a memory's search text comes from.
var defaultIndex = []string{"key", "value", "category"}

// Hybrid ranking: with an embedder, a memory's score is
// semanticWeight·cosine + (1-semanticWeight)·bm25/max(bm25). An item counts
// as a semantic match only when its cosine similarity reaches minCosine, so a
// new topic retrieves nothing instead of the least unrelated memories.
const (
	semanticWeight = 0.7
	minCosine      = 0.3
)

// MemoryRetrieveConfig is the schema of a memory_retrieve node's config.
const MemoryRetrieveConfig = `{
	namespace: [...string] & [_, ...]
	query?: string
	messages_field?: *"messages" | string
	limit?: *5 | int & >0
	min_score?: number & >=0
	field?: *"retrieved_memories" | string
	embedder?: string
}`

// MemoryStoreConfig is the schema of a memory_store node's config.
const MemoryStoreConfig = `{
	namespace: [...string] & [_, ...]
	from: string
	ttl?: string
	index?: [...string]
	embedder?: string
}`

func init() {
	node.MustRegister(node.Type{
		Name:        "memory_retrieve",
		Description: "Searches long-term memory (BM25, or merged with embedding similarity) and writes the relevant memories, counting their accesses.",
		Config:      MemoryRetrieveConfig,
		New:         newMemoryRetrieve,
	})
	node.MustRegister(node.Type{
		Name:        "memory_store",
		Description: "Upserts memory entries ({key, value, category?, confidence?}) computed from state into long-term memory.",
		Config:      MemoryStoreConfig,
		New:         newMemoryStore,
	})
}

type memoryRetrieve struct {
	namespace []node.Template
	source    textSource
	limit     int
	minScore  float64
	field     []string
	embedder  *embedderRef
	now       func() time.Time
}

func newMemoryRetrieve(b node.Builder) (node.Node, error) {
	var cfg struct {
		Namespace     []string `json:"namespace"`
		Query         string   `json:"query"`
		MessagesField string   `json:"messages_field"`
		Limit         int      `json:"limit"`
		MinScore      float64  `json:"min_score"`
		Field         string   `json:"field"`
		Embedder      string   `json:"embedder"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "memory_retrieve node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	if cfg.Field == "" {
		cfg.Field = "retrieved_memories"
	}
	if cfg.Limit <= 0 {
		cfg.Limit = 5
	}
	n := &memoryRetrieve{limit: cfg.Limit, minScore: cfg.MinScore, now: time.Now}
	n.namespace = namespace.Compile(b, cfg.Namespace)
	n.source = newTextSource(b, "query", cfg.Query, "messages_field", cfg.MessagesField)
	n.field = objectField(b, "field", cfg.Field, graph.List)
	n.embedder = embedderFor(b, cfg.Embedder)
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Prepare implements node.Preparer.
func (n *memoryRetrieve) Prepare(ctx context.Context, services *node.Services) error {
	if err := namespace.RequireStore(services, "memory_retrieve"); err != nil {
		return err
	}
	if n.embedder != nil {
		return n.embedder.prepare(ctx, services, "memory_retrieve")
	}
	return nil
}

// candidate is one memory with its partial scores.
type candidate struct {
	item   store.Item
	bm25   float64
	cosine float64
	score  float64
}

// Run implements node.Node.
func (n *memoryRetrieve) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	if in.Services == nil || in.Services.Store == nil {
		return nil, node.Errorf("no_store", "%s: %v", in.Node, namespace.RequireStore(in.Services, "memory_retrieve"))
	}
	st := in.Services.Store
	ns, err := namespace.Render(in, n.namespace)
	if err != nil {
		return nil, err
	}
	text, err := n.source.text(in, "query")
	if err != nil {
		return nil, err
	}
	var cands []*candidate
	mode, embedderName := "bm25", ""
	if n.embedder != nil && strings.TrimSpace(text) != "" {
		mode = "hybrid"
		cands, err = n.hybrid(ctx, in, st, ns, text, &embedderName)
		var fb *fallbackError
		if errors.As(err, &fb) {
			n.embedder.fallback(in, fb.err, "bm25")
			mode = "bm25"
			cands, err = n.lexical(ctx, st, ns, text)
		}
	} else {
		cands, err = n.lexical(ctx, st, ns, text)
	}
	if err != nil {
		return nil, err
	}
	refs := make([]any, 0, len(cands))
	now := n.now().UTC()
	for _, c := range cands {
		if n.minScore > 0 && c.score < n.minScore {
			continue
		}
		if len(refs) == n.limit {
			break
		}
		ref, err := touch(ctx, st, c, now)
		if err != nil {
			return nil, node.Retryable("store_error", fmt.Errorf("%s: %w", in.Node, err))
		}
		refs = append(refs, ref)
	}
	if in.Emit != nil {
		keys := make([]any, len(refs))
		for i, r := range refs {
			keys[i] = r.(map[string]any)["key"]
		}
		payload := map[string]any{"mode": mode, "count": len(refs), "keys": keys}
		if mode == "hybrid" {
			payload["embedder"] = embedderName
		}
		in.Emit(event.Event{Type: MemoryRecalledEvent, Payload: payload})
	}
	return nested(n.field, refs), nil
}

// fallbackError is a lenient embedder's failure: the node goes on without it.
type fallbackError struct{ err error }

func (e *fallbackError) Error() string { return e.err.Error() }
func (e *fallbackError) Unwrap() error { return e.err }

// embedFailed returns err as a fallbackError when the embedder is lenient.
func (e *embedderRef) embedFailed(err error) error {
	if e.lenient {
		return &fallbackError{err: err}
	}
	return err
}

// lexical ranks memories by BM25 over the query's content words.
func (n *memoryRetrieve) lexical(ctx context.Context, st store.Store, ns []string, text string) ([]*candidate, error) {
	q := contentQuery(text)
	if q == "" {
		return nil, nil
	}
	items, err := st.Search(ctx, ns, store.SearchQuery{Query: q})
	if err != nil {
		return nil, node.Retryable("store_error", fmt.Errorf("search memories in %q: %w", ns, err))
	}
	out := make([]*candidate, len(items))
	for i, it := range items {
		out[i] = &candidate{item: it, bm25: it.Score, score: round4(it.Score)}
	}
	return out, nil
}

// hybrid merges BM25 with the cosine similarity of the query's embedding to
// each memory's. A memory without a vector of the current embedder (stored
// without one, or by another embedding model) is embedded now and rewritten
// with it, so changing the embedder re-embeds memories as they are searched.
func (n *memoryRetrieve) hybrid(ctx context.Context, in *node.Input, st store.Store, ns []string, text string, usedName *string) ([]*candidate, error) {
	emb, name, err := n.embedder.get(ctx, in)
	if err != nil {
		return nil, n.embedder.embedFailed(err)
	}
	qv, err := emb.EmbedQuery(ctx, text)
	if err != nil {
		return nil, n.embedder.embedFailed(node.Retryable("llm_error", fmt.Errorf("%s: embed the query: %w", in.Node, err)))
	}
	*usedName = name
	all, err := st.Search(ctx, ns, store.SearchQuery{})
	if err != nil {
		return nil, node.Retryable("store_error", fmt.Errorf("list memories in %q: %w", ns, err))
	}
	byKey := map[string]*candidate{}
	var out, stale []*candidate
	for _, it := range all {
		c := &candidate{item: it}
		if v, ok := currentVector(it.Value, name, len(qv)); ok {
			c.cosine = store.Cosine(qv, v)
		} else {
			stale = append(stale, c)
		}
		byKey[itemID(it)] = c
		out = append(out, c)
	}
	if len(stale) > 0 {
		if err := n.reembed(ctx, in, st, emb, name, qv, stale); err != nil {
			return nil, err
		}
	}
	if q := contentQuery(text); q != "" {
		hits, err := st.Search(ctx, ns, store.SearchQuery{Query: q})
		if err != nil {
			return nil, node.Retryable("store_error", fmt.Errorf("search memories in %q: %w", ns, err))
		}
		for _, h := range hits {
			if c, ok := byKey[itemID(h)]; ok {
				c.bm25 = h.Score
			}
		}
	}
	maxBM25 := 0.0
	for _, c := range out {
		maxBM25 = math.Max(maxBM25, c.bm25)
	}
	kept := out[:0]
	for _, c := range out {
		sem := 0.0
		if c.cosine >= minCosine {
			sem = c.cosine
		}
		lex := 0.0
		if maxBM25 > 0 {
			lex = c.bm25 / maxBM25
		}
		if sem == 0 && lex == 0 {
			continue
		}
		c.score = round4(semanticWeight*sem + (1-semanticWeight)*lex)
		kept = append(kept, c)
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].score > kept[j].score })
	return kept, nil
}

// currentVector returns a memory's vector when the embedder named model
// computed it: that model is recorded (or none is) and the length is the
// query's.
func currentVector(doc map[string]any, model string, dim int) ([]float32, bool) {
	v, ok := vector(doc[EmbeddingKey])
	if !ok || len(v) != dim {
		return nil, false
	}
	if m, recorded := doc[EmbeddingModelKey].(string); recorded && m != model {
		return nil, false
	}
	return v, true
}

// reembed embeds memories that lack a current vector, scores them against
// the query and stores their new vectors.
func (n *memoryRetrieve) reembed(ctx context.Context, in *node.Input, st store.Store, emb embeddings.Embedder, model string, qv []float32, stale []*candidate) error {
	texts := make([]string, len(stale))
	for i, c := range stale {
		texts[i] = memoryText(entryOf(c.item))
	}
	vectors, err := emb.EmbedDocuments(ctx, texts)
	if err == nil && len(vectors) != len(texts) {
		err = fmt.Errorf("the embedder returned %d vectors for %d memories", len(vectors), len(texts))
	}
	if err != nil {
		return n.embedder.embedFailed(node.Retryable("llm_error", fmt.Errorf("%s: embed %d memories: %w", in.Node, len(texts), err)))
	}
	now := n.now().UTC()
	for i, c := range stale {
		c.cosine = store.Cosine(qv, vectors[i])
		value := make(map[string]any, len(c.item.Value)+2)
		for k, v := range c.item.Value {
			value[k] = v
		}
		value[EmbeddingKey] = vectors[i]
		value[EmbeddingModelKey] = model
		c.item.Value = value
		opts := store.PutOptions{Index: indexOf(value)}
		if !c.item.ExpiresAt.IsZero() {
			if opts.TTL = c.item.ExpiresAt.Sub(now); opts.TTL <= 0 {
				continue
			}
		}
		if err := st.Put(ctx, c.item.Namespace, c.item.Key, value, opts); err != nil {
			return node.Retryable("store_error", fmt.Errorf("%s: store the new vector of memory %q: %w", in.Node, c.item.Key, err))
		}
	}
	return nil
}

// entryOf reads a stored memory document back as an entry.
func entryOf(it store.Item) memoryEntry {
	e := memoryEntry{key: it.Key, value: it.Value["value"]}
	e.category, _ = it.Value["category"].(string)
	if e.value == nil {
		plain := map[string]any{}
		for k, v := range it.Value {
			if !strings.HasPrefix(k, "_") && k != "access_count" && k != "last_accessed" && k != "key" {
				plain[k] = v
			}
		}
		e.value = plain
		return e
	}
	for k, v := range it.Value {
		if !entryKeys[k] && !strings.HasPrefix(k, "_") {
			if e.details == nil {
				e.details = map[string]any{}
			}
			e.details[k] = v
		}
	}
	return e
}

func itemID(it store.Item) string {
	return strings.Join(it.Namespace, "\x00") + "\x00\x00" + it.Key
}

// touch counts one access of a retrieved memory and returns its MemoryRef.
// The item is rewritten with its remaining time to live and its index paths.
func touch(ctx context.Context, st store.Store, c *candidate, now time.Time) (map[string]any, error) {
	it := c.item
	value := make(map[string]any, len(it.Value)+2)
	for k, v := range it.Value {
		value[k] = v
	}
	count, _ := number(value["access_count"])
	count++
	value["access_count"] = count
	value["last_accessed"] = now.Format(time.RFC3339Nano)
	opts := store.PutOptions{Index: indexOf(value)}
	// An item with a time to live is rewritten only while some of it remains:
	// a zero TTL would make it permanent.
	if !it.ExpiresAt.IsZero() {
		opts.TTL = it.ExpiresAt.Sub(now)
	}
	if it.ExpiresAt.IsZero() || opts.TTL > 0 {
		if err := st.Put(ctx, it.Namespace, it.Key, value, opts); err != nil {
			return nil, fmt.Errorf("update access statistics of memory %q in %q: %w", it.Key, it.Namespace, err)
		}
	}
	memValue, ok := value["value"]
	if !ok {
		plain := make(map[string]any, len(value))
		for k, v := range value {
			if !strings.HasPrefix(k, "_") && k != "access_count" && k != "last_accessed" {
				plain[k] = v
			}
		}
		memValue = plain
	}
	category, _ := value["category"].(string)
	ref := map[string]any{
		"key":           it.Key,
		"value":         memValue,
		"category":      category,
		"score":         c.score,
		"access_count":  int64(count),
		"last_accessed": value["last_accessed"],
	}
	if _, ok := value["value"]; ok {
		// A memory's details (a plan's time and place) come with it.
		for k, v := range value {
			if !entryKeys[k] && !strings.HasPrefix(k, "_") {
				ref[k] = v
			}
		}
	}
	return ref, nil
}

// indexOf returns the index paths recorded in a memory document, or the default.
func indexOf(value map[string]any) []string {
	raw, ok := value[IndexKey].([]any)
	if !ok {
		if s, ok := value[IndexKey].([]string); ok {
			return s
		}
		return defaultIndex
	}
	out := make([]string, 0, len(raw))
	for _, p := range raw {
		if s, ok := p.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// stopwords are words too common to make a memory relevant: English function
// words (and their stems, which the store's tokenizer adds: "does" → "doe")
// and the Chinese characters and character pairs (as the tokenizer produces
// them) of common function words and phrases.
var stopwords = withStems(set(
	"a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with", "from",
	"about", "as", "into", "is", "am", "are", "was", "were", "be", "been", "being", "do", "does", "did",
	"have", "has", "had", "i", "me", "my", "mine", "you", "your", "yours", "he", "she", "it", "its", "we",
	"our", "they", "their", "them", "this", "that", "these", "those", "what", "which", "who", "whom",
	"when", "where", "why", "how", "can", "could", "would", "should", "will", "shall", "may", "might",
	"must", "not", "no", "so", "than", "too", "very", "just", "there", "here", "any", "some", "all",
	"please", "tell", "know", "remember", "s", "t", "d", "ll", "m", "re", "ve", "don", "doesn", "didn",
	"我的", "你的", "他的", "她的", "我们", "你们", "他们", "什么", "怎么", "是不", "不是", "一个", "这个",
	"那个", "吗", "呢", "吧", "了", "的", "是", "我", "你", "他", "她", "在", "有", "和", "也", "就", "都",
	"还记", "记得", "告诉", "请问",
))

// withStems returns words with the stem of each added.
func withStems(words map[string]bool) map[string]bool {
	out := make(map[string]bool, len(words))
	for w := range words {
		out[w] = true
		out[store.Stem(w)] = true
	}
	return out
}

// contentQuery returns the query's search terms without stop words, joined by
// spaces (re-tokenizing it yields the same terms). Terms written in hiragana
// only are the grammar of Japanese (particles, verb endings: "ます", "てい",
// the pairs of "について"), shared by most Japanese sentences; they are left
// out when the query has other terms, so that "明日は雨が降っています" does not
// recall "猫を二匹飼っています" by its "ています", and kept when it has none
// ("ねこ").
func contentQuery(text string) string {
	var content, kana []string
	for _, t := range store.Tokenize(text) {
		switch {
		case stopwords[t]:
		case hiraganaOnly(t):
			kana = append(kana, t)
		default:
			content = append(content, t)
		}
	}
	if len(content) == 0 {
		content = kana
	}
	return strings.Join(content, " ")
}

// hiraganaOnly reports whether t is written in hiragana only.
func hiraganaOnly(t string) bool {
	for _, r := range t {
		if !unicode.Is(unicode.Hiragana, r) && r != 'ー' {
			return false
		}
	}
	return t != ""
}

func vector(v any) ([]float32, bool) {
	switch l := v.(type) {
	case []float32:
		return l, len(l) > 0
	case []any:
		out := make([]float32, len(l))
		for i, x := range l {
			f, ok := number(x)
			if !ok {
				return nil, false
			}
			out[i] = float32(f)
		}
		return out, len(out) > 0
	}
	return nil, false
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

type memoryStore struct {
	namespace []node.Template
	from      node.Expr
	ttl       time.Duration
	index     []string
	embedder  *embedderRef
	now       func() time.Time
}

func newMemoryStore(b node.Builder) (node.Node, error) {
	var cfg struct {
		Namespace []string `json:"namespace"`
		From      string   `json:"from"`
		TTL       string   `json:"ttl"`
		Index     []string `json:"index"`
		Embedder  string   `json:"embedder"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "memory_store node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &memoryStore{now: time.Now}
	if len(cfg.Index) > 0 {
		n.index = cfg.Index
	}
	n.namespace = namespace.Compile(b, cfg.Namespace)
	if strings.TrimSpace(cfg.From) == "" {
		b.Errorf("from", "invalid-config", "memory_store node %q needs from: an expression yielding a list of {key, value, category?, confidence?}", b.NodeName())
	} else {
		n.from = b.Expr("from", cfg.From, "")
	}
	if cfg.TTL != "" {
		d, err := ParseTTL(cfg.TTL)
		if err != nil {
			b.Errorf("ttl", "invalid-config", "memory_store node %q: %v", b.NodeName(), err)
		}
		n.ttl = d
	}
	for i, p := range cfg.Index {
		if strings.TrimSpace(p) == "" || strings.HasPrefix(p, "_") {
			b.Errorf(fmt.Sprintf("index.%d", i), "invalid-config", "index path %q: want a path of the memory document such as \"value\" or \"value.title\"", p)
		}
	}
	n.embedder = embedderFor(b, cfg.Embedder)
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// ParseTTL reads a time to live: a Go duration ("36h", "90m") or a number of
// days ("30d").
func ParseTTL(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("ttl %q: want a positive number of days such as \"30d\" or a duration such as \"12h\"", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("ttl %q: want a positive duration such as \"12h\" or a number of days such as \"30d\"", s)
	}
	return d, nil
}

// Prepare implements node.Preparer.
func (n *memoryStore) Prepare(ctx context.Context, services *node.Services) error {
	if err := namespace.RequireStore(services, "memory_store"); err != nil {
		return err
	}
	if n.embedder != nil {
		return n.embedder.prepare(ctx, services, "memory_store")
	}
	return nil
}

// memoryEntry is one validated entry to store.
type memoryEntry struct {
	key        string
	value      any
	category   string
	confidence *float64
	// details are the entry's other keys, such as a plan's target_time,
	// location and participants, stored beside the value.
	details map[string]any
}

// entryKeys are the keys of an entry that are not details; keys starting
// with "_" and the access statistics are never taken from an entry either.
var entryKeys = set("key", "value", "category", "confidence", "score", "access_count", "last_accessed")

// entries reads the from value: one entry object or a list of them.
func entries(v any) ([]memoryEntry, error) {
	var raw []any
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		if len(x) == 0 {
			return nil, nil
		}
		raw = []any{x}
	case []any:
		raw = x
	case []map[string]any:
		for _, m := range x {
			raw = append(raw, m)
		}
	default:
		return nil, fmt.Errorf("want a list of {key, value, category?, confidence?} or one such object, got %s", graph.DescribeValue(v))
	}
	var out []memoryEntry
	var errs []error
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("entry %d: want an object {key, value, category?, confidence?}, got %s", i, graph.DescribeValue(r)))
			continue
		}
		e := memoryEntry{}
		e.key, _ = m["key"].(string)
		e.key = strings.TrimSpace(e.key)
		if e.key == "" {
			errs = append(errs, fmt.Errorf("entry %d: key must be a non-empty string, got %s", i, graph.DescribeValue(m["key"])))
		}
		e.value = m["value"]
		if e.value == nil || e.value == "" {
			errs = append(errs, fmt.Errorf("entry %d (%q): value is missing", i, e.key))
		}
		if c, ok := m["category"]; ok && c != nil {
			s, ok := c.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("entry %d (%q): category must be a string, got %s", i, e.key, graph.DescribeValue(c)))
			}
			e.category = s
		}
		if c, ok := m["confidence"]; ok && c != nil {
			f, ok := number(c)
			if !ok || f < 0 || f > 1 {
				errs = append(errs, fmt.Errorf("entry %d (%q): confidence must be a number from 0 to 1, got %s", i, e.key, graph.DescribeValue(c)))
			}
			e.confidence = &f
		}
		for k, v := range m {
			if entryKeys[k] || strings.HasPrefix(k, "_") || v == nil {
				continue
			}
			if e.details == nil {
				e.details = map[string]any{}
			}
			e.details[k] = v
		}
		out = append(out, e)
	}
	return out, errors.Join(errs...)
}

// Run implements node.Node.
func (n *memoryStore) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	if in.Services == nil || in.Services.Store == nil {
		return nil, node.Errorf("no_store", "%s: %v", in.Node, namespace.RequireStore(in.Services, "memory_store"))
	}
	st := in.Services.Store
	ns, err := namespace.Render(in, n.namespace)
	if err != nil {
		return nil, err
	}
	v, err := n.from.Eval(in.Scope)
	if err != nil {
		return nil, node.Errorf("expression_error", "%s from: %w", in.Node, err)
	}
	list, err := entries(v)
	if err != nil {
		return nil, node.Errorf("invalid_memory", "%s from (%s): %w", in.Node, n.from.Source(), err)
	}
	if len(list) == 0 {
		return node.Update{}, nil
	}
	vectors, model, err := n.embed(ctx, in, list)
	if err != nil {
		return nil, err
	}
	keys := make([]any, 0, len(list))
	for i, e := range list {
		doc := map[string]any{"key": e.key, "value": e.value, "category": e.category, "access_count": 0}
		for k, v := range e.details {
			doc[k] = v
		}
		if e.confidence != nil {
			doc["confidence"] = *e.confidence
		}
		prev, err := st.Get(ctx, ns, e.key)
		switch {
		case err == nil:
			// An upsert keeps the memory's access statistics.
			for _, k := range []string{"access_count", "last_accessed"} {
				if v, ok := prev.Value[k]; ok {
					doc[k] = v
				}
			}
		case !errors.Is(err, store.ErrNotFound):
			return nil, node.Retryable("store_error", fmt.Errorf("%s: read memory %q in %q: %w", in.Node, e.key, ns, err))
		}
		index := defaultIndex
		switch {
		case n.index != nil:
			index = n.index
			doc[IndexKey] = stringsToAny(n.index)
		case len(e.details) > 0:
			// Details are searchable too: "the meeting at Starbucks".
			index = append(append([]string(nil), defaultIndex...), sortedKeys(e.details)...)
			doc[IndexKey] = stringsToAny(index)
		}
		if vectors != nil {
			doc[EmbeddingKey] = vectors[i]
			doc[EmbeddingModelKey] = model
		}
		if err := st.Put(ctx, ns, e.key, doc, store.PutOptions{TTL: n.ttl, Index: index}); err != nil {
			return nil, node.Retryable("store_error", fmt.Errorf("%s: store memory %q in %q: %w", in.Node, e.key, ns, err))
		}
		keys = append(keys, e.key)
	}
	if in.Emit != nil {
		in.Emit(event.Event{Type: MemoryStoredEvent, Payload: map[string]any{"count": len(keys), "keys": keys}})
	}
	return node.Update{}, nil
}

// embed computes the entries' vectors; it returns none without an embedder,
// and none, with a memory_fallback event, when the graph's default embedder
// fails (memory_retrieve embeds such memories later).
func (n *memoryStore) embed(ctx context.Context, in *node.Input, list []memoryEntry) ([][]float32, string, error) {
	if n.embedder == nil {
		return nil, "", nil
	}
	emb, name, err := n.embedder.get(ctx, in)
	if err == nil {
		texts := make([]string, len(list))
		for i, e := range list {
			texts[i] = memoryText(e)
		}
		var vectors [][]float32
		vectors, err = emb.EmbedDocuments(ctx, texts)
		if err == nil && len(vectors) != len(list) {
			err = fmt.Errorf("the embedder returned %d vectors for %d memories", len(vectors), len(list))
		}
		if err == nil {
			return vectors, name, nil
		}
		err = node.Retryable("llm_error", fmt.Errorf("%s: embed %d memories: %w", in.Node, len(list), err))
	}
	if n.embedder.lenient {
		n.embedder.fallback(in, err, "no_vector")
		return nil, "", nil
	}
	return nil, "", err
}

// memoryText is the text a memory's embedding is computed from.
func memoryText(e memoryEntry) string {
	parts := []string{strings.ReplaceAll(e.key, "_", " ")}
	switch v := e.value.(type) {
	case string:
		parts = append(parts, v)
	case map[string]any:
		parts = append(parts, store.IndexText(v, nil)...)
	default:
		parts = append(parts, fmt.Sprint(v))
	}
	if e.category != "" {
		parts = append(parts, e.category)
	}
	for _, k := range sortedKeys(e.details) {
		parts = append(parts, store.IndexText(map[string]any{k: e.details[k]}, nil)...)
	}
	return strings.Join(parts, " ")
}

func stringsToAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
