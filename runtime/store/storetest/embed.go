package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/store"
)

// ConceptEmbedder is a deterministic local embedder for tests: each dimension
// is a concept (vehicles, fruit, drinks, weather) and a text's vector counts
// the words of each concept it holds, so "automobile" is near "car" though
// they share no word. The last dimension is constant, so no vector is zero.
type ConceptEmbedder struct {
	// Model is the name the vectors are recorded under.
	Model string
}

// concepts lists the words of each dimension.
var concepts = [][]string{
	{"car", "cars", "automobile", "truck", "vehicle", "drive", "driving", "sedan", "車", "自動車"},
	{"banana", "bananas", "apple", "apples", "fruit", "orchard"},
	{"coffee", "espresso", "tea", "drink", "latte", "コーヒー"},
	{"rain", "umbrella", "storm", "weather", "cloudy"},
}

// Name implements store.Embedder.
func (e ConceptEmbedder) Name() string { return e.Model }

// Vector is the embedding of text.
func (e ConceptEmbedder) Vector(text string) []float32 {
	v := make([]float32, len(concepts)+1)
	v[len(concepts)] = 0.1
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return r == ' ' || r == '\n' || r == ',' || r == '.' || r == '?' || r == '!'
	}) {
		for i, words := range concepts {
			if slices.Contains(words, w) {
				v[i]++
			}
		}
	}
	return v
}

// EmbedDocuments implements store.Embedder.
func (e ConceptEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.Vector(t)
	}
	return out, nil
}

// EmbedQuery implements store.Embedder.
func (e ConceptEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return e.Vector(text), nil
}

// failingEmbedder fails every call.
type failingEmbedder struct{}

func (failingEmbedder) Name() string { return "down" }
func (failingEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("embeddings server unreachable")
}
func (failingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("embeddings server unreachable")
}

// RunEmbedding runs the semantic-search checks. open must return, for a new
// empty database, a function giving that database's store with an embedder
// (nil: without one); stores of one database share their items.
func RunEmbedding(t *testing.T, open func(t *testing.T) func(store.Embedder) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, with func(store.Embedder) store.Store)
	}{
		{"SemanticRank", testSemanticRank},
		{"SemanticIndexAndFilter", testSemanticIndexFilter},
		{"ModelChange", testModelChange},
		{"EmbedderFailure", testEmbedderFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

var (
	modelA = ConceptEmbedder{Model: "concept-a"}
	modelB = ConceptEmbedder{Model: "concept-b"}
)

func testSemanticRank(t *testing.T, with func(store.Embedder) store.Store) {
	s := with(modelA)
	ns := []string{"memories", "u1"}
	put(t, s, ns, "car", map[string]any{"text": "I drive a sedan to work"})
	put(t, s, ns, "fruit", map[string]any{"text": "bananas and apples from the orchard"})
	put(t, s, ns, "drink", map[string]any{"text": "an espresso every morning"})
	put(t, s, []string{"memories", "u2"}, "other", map[string]any{"text": "my car"})
	put(t, s, []string{"elsewhere"}, "car", map[string]any{"text": "a truck"})

	// Without the embedder the query shares no word with any item.
	if got := search(t, with(nil), ns, store.SearchQuery{Query: "automobile"}); len(got) != 0 {
		t.Fatalf("BM25 search for automobile = %v, want nothing", keysOf(got))
	}
	got := search(t, s, ns, store.SearchQuery{Query: "automobile"})
	if len(got) != 3 || got[0].Key != "car" {
		t.Fatalf("semantic search for automobile = %v, want car first of the 3 items of %v", keysOf(got), ns)
	}
	if got[0].Score < 0.9 || got[0].Score > 1.0001 {
		t.Errorf("score of the near item = %v, want close to 1", got[0].Score)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score || got[i].Score >= got[0].Score/2 {
			t.Errorf("scores %v not decreasing with the far items well below the near one", scoresOf(got))
		}
	}
	if got[0].Value["text"] != "I drive a sedan to work" || got[0].CreatedAt.IsZero() {
		t.Errorf("hit %+v lacks its value or timestamps", got[0])
	}
	// Namespace prefix covers both users; paging applies to the ranking.
	all := search(t, s, []string{"memories"}, store.SearchQuery{Query: "vehicle"})
	if len(all) != 4 || !slices.Equal(sorted(keysOf(all[:2])), []string{"car", "other"}) {
		t.Fatalf("search under [memories] = %v, want car and other first of 4", keysOf(all))
	}
	page := search(t, s, []string{"memories"}, store.SearchQuery{Query: "vehicle", Offset: 1, Limit: 2})
	if !slices.Equal(keysOf(page), keysOf(all[1:3])) {
		t.Errorf("page = %v, want %v", keysOf(page), keysOf(all[1:3]))
	}
	if got := search(t, s, ns, store.SearchQuery{Query: "coffee"}); got[0].Key != "drink" {
		t.Errorf("search for coffee = %v, want drink first", keysOf(got))
	}
	// A listing without a query is unchanged: every item, scores 0.
	if got := search(t, s, ns, store.SearchQuery{}); len(got) != 3 || got[0].Score != 0 {
		t.Errorf("listing = %v scores %v", keysOf(got), scoresOf(got))
	}
	if err := s.Delete(bg, ns, "car"); err != nil {
		t.Fatal(err)
	}
	if got := search(t, s, ns, store.SearchQuery{Query: "automobile"}); slices.Contains(keysOf(got), "car") {
		t.Errorf("deleted item still found: %v", keysOf(got))
	}
}

func testSemanticIndexFilter(t *testing.T, with func(store.Embedder) store.Store) {
	s := with(modelA)
	ns := []string{"docs"}
	put(t, s, ns, "title-truck", map[string]any{"title": "a truck", "body": "apples", "lang": "en"}, store.PutOptions{Index: []string{"title"}})
	put(t, s, ns, "title-apple", map[string]any{"title": "apples", "body": "a truck", "lang": "en"}, store.PutOptions{Index: []string{"title"}})
	put(t, s, ns, "unindexed", map[string]any{"title": "a car", "lang": "en"}, store.PutOptions{Index: []string{}})
	put(t, s, ns, "japanese", map[string]any{"title": "自動車", "lang": "ja"})

	got := search(t, s, ns, store.SearchQuery{Query: "vehicle"})
	if slices.Contains(keysOf(got), "unindexed") {
		t.Errorf("an item put with an empty index was found: %v", keysOf(got))
	}
	if len(got) != 3 || !slices.Equal(sorted(keysOf(got[:2])), []string{"japanese", "title-truck"}) || got[2].Key != "title-apple" {
		t.Fatalf("search for vehicle = %v (scores %v), want the two vehicle titles, then title-apple", keysOf(got), scoresOf(got))
	}
	got = search(t, s, ns, store.SearchQuery{Query: "vehicle", Filter: map[string]any{"lang": "en"}})
	if !slices.Equal(keysOf(got), []string{"title-truck", "title-apple"}) {
		t.Errorf("filtered search = %v, want [title-truck title-apple]", keysOf(got))
	}
	// Re-putting without the embedder drops the vector: it described the old value.
	put(t, with(nil), ns, "title-truck", map[string]any{"title": "a truck", "lang": "en"}, store.PutOptions{Index: []string{"title"}})
	if got := search(t, s, ns, store.SearchQuery{Query: "vehicle", Filter: map[string]any{"lang": "en"}}); !slices.Equal(keysOf(got), []string{"title-apple"}) {
		t.Errorf("after a put without the embedder = %v, want only title-apple", keysOf(got))
	}
}

func testModelChange(t *testing.T, with func(store.Embedder) store.Store) {
	ns := []string{"m"}
	put(t, with(modelA), ns, "car", map[string]any{"text": "my car"})
	if got := search(t, with(modelB), ns, store.SearchQuery{Query: "automobile"}); len(got) != 0 {
		t.Fatalf("model B found %v embedded by model A", keysOf(got))
	}
	if got := search(t, with(nil), ns, store.SearchQuery{Query: "car"}); len(got) != 1 {
		t.Fatalf("text search without embedder = %v, want car", keysOf(got))
	}
	put(t, with(modelB), ns, "car", map[string]any{"text": "my car"})
	if got := search(t, with(modelB), ns, store.SearchQuery{Query: "automobile"}); len(got) != 1 || got[0].Score < 0.9 {
		t.Fatalf("model B after re-embedding = %v scores %v", keysOf(got), scoresOf(got))
	}
	if got := search(t, with(modelA), ns, store.SearchQuery{Query: "automobile"}); len(got) != 0 {
		t.Errorf("model A found %v now embedded by model B", keysOf(got))
	}
}

func testEmbedderFailure(t *testing.T, with func(store.Embedder) store.Store) {
	s := with(failingEmbedder{})
	ns := []string{"f"}
	err := s.Put(bg, ns, "k", map[string]any{"text": "car"}, store.PutOptions{})
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), "down") {
		t.Fatalf("Put with a failing embedder = %v, want its error naming the model", err)
	}
	if ee := (*store.EmbeddingError)(nil); !errors.As(err, &ee) || ee.Model != "down" || ee.Query {
		t.Errorf("Put with a failing embedder = %#v, want an *EmbeddingError of model down for an item", err)
	}
	if _, err := s.Get(bg, ns, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after a failed Put = %v, want ErrNotFound", err)
	}
	// An item that is not indexed needs no embedding.
	put(t, s, ns, "quiet", map[string]any{"text": "car"}, store.PutOptions{Index: []string{}})
	_, err = s.Search(bg, ns, store.SearchQuery{Query: "car"})
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("Search with a failing embedder = %v, want its error", err)
	}
	if ee := (*store.EmbeddingError)(nil); !errors.As(err, &ee) || !ee.Query {
		t.Errorf("Search with a failing embedder = %#v, want an *EmbeddingError for a query", err)
	}
}

func scoresOf(items []store.Item) []float64 {
	out := make([]float64, len(items))
	for i, it := range items {
		out[i] = it.Score
	}
	return out
}
