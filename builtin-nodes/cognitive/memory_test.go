package cognitive_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/cognitive"
	"github.com/graphctl/graphctl/builtin-nodes/internal/nodetest"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

func openStore(t testing.TB) store.Store {
	t.Helper()
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db.Store()
}

// run runs n with services, like nodetest.Run does with none.
func run(t testing.TB, g *graph.Graph, n node.Node, state map[string]any, services *node.Services) (node.Update, []event.Event, error) {
	t.Helper()
	rec := &nodetest.Recorder{}
	scope := nodetest.Scope(g, state)
	in := &node.Input{
		Node: "n", ThreadID: "t1", RunID: "r1", Step: 1, Attempt: 1,
		State: scope["state"].(map[string]any), Scope: scope, Emit: rec.Sink(), Services: services,
	}
	up, err := n.Run(context.Background(), in)
	return up, rec.Events(), err
}

func memoryGraph(t testing.TB) *graph.Graph {
	t.Helper()
	g, err := nodetest.Graph(nil, "messages: messages", "user_id: string", "retrieved_memories: list<object>",
		"working_memory: object", "memory_update: any", "topic: string")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func memories() []any {
	return []any{
		map[string]any{"key": "favorite_color", "value": "The user's favorite color is blue", "category": "preference", "confidence": 0.9},
		map[string]any{"key": "pet", "value": "The user has a dog named Max, a golden retriever", "category": "fact"},
		map[string]any{"key": "job", "value": "The user works as a nurse at the city hospital", "category": "fact"},
		map[string]any{"key": "trip", "value": "周末去杭州西湖旅行", "category": "plan"},
	}
}

func storeMemories(t testing.TB, g *graph.Graph, services *node.Services, cfg map[string]any, list []any) []event.Event {
	t.Helper()
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg["namespace"] = []any{"memories", "${user_id}"}
	cfg["from"] = "memory_update"
	n := buildNode(t, g, "memory_store", cfg)
	up, events, err := run(t, g, n, map[string]any{"user_id": "u1", "memory_update": list}, services)
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	if len(up) != 0 {
		t.Errorf("memory_store update = %v, want none", up)
	}
	return events
}

func refKeys(t testing.TB, v any) []string {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("retrieved memories = %#v, want a list", v)
	}
	keys := []string{}
	for _, r := range list {
		keys = append(keys, r.(map[string]any)["key"].(string))
	}
	return keys
}

func TestMemoryRetrieveBM25(t *testing.T) {
	g := memoryGraph(t)
	services := &node.Services{Store: openStore(t)}
	events := storeMemories(t, g, services, nil, memories())
	if len(events) != 1 || events[0].Type != "memory_stored" || events[0].Payload["count"] != 4 ||
		!reflect.DeepEqual(events[0].Payload["keys"], []any{"favorite_color", "pet", "job", "trip"}) {
		t.Fatalf("events = %#v, want one memory_stored with the 4 keys", events)
	}
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"memories", "${user_id}"}, "limit": 2})
	checkRecall(t, g, retrieve, services, []recallCase{
		{"What is my favorite color?", []string{"favorite_color"}},
		{"How is my dog Max doing?", []string{"pet"}},
		{"I had a long shift at the hospital", []string{"job"}},
		{"这个周末去杭州好吗", []string{"trip"}},
		{"What's the capital of Peru?", []string{}},
		{"", []string{}},
	})
	t.Run("another user's namespace is empty", func(t *testing.T) {
		up, _, err := run(t, g, retrieve, map[string]any{"user_id": "u2", "messages": []any{map[string]any{"role": "user", "content": "favorite color"}}}, services)
		if err != nil {
			t.Fatal(err)
		}
		if got := refKeys(t, up["retrieved_memories"]); len(got) != 0 {
			t.Errorf("keys = %v, want none", got)
		}
	})
}

func TestMemoryAccessStatistics(t *testing.T) {
	g := memoryGraph(t)
	st := openStore(t)
	services := &node.Services{Store: st}
	storeMemories(t, g, services, map[string]any{"ttl": "30d"}, memories())
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{
		"namespace": []any{"memories", "${user_id}"}, "query": "topic", "field": "working_memory.retrieved_memories",
	})
	for i := 1; i <= 3; i++ {
		up, _, err := run(t, g, retrieve, map[string]any{"user_id": "u1", "topic": "dog named Max"}, services)
		if err != nil {
			t.Fatal(err)
		}
		refs := up["working_memory"].(map[string]any)["retrieved_memories"].([]any)
		if len(refs) != 1 {
			t.Fatalf("refs = %v, want the pet memory", refs)
		}
		ref := refs[0].(map[string]any)
		if ref["access_count"] != int64(i) || ref["category"] != "fact" || ref["value"] != "The user has a dog named Max, a golden retriever" {
			t.Errorf("retrieval %d: ref = %#v", i, ref)
		}
		if s, _ := ref["score"].(float64); s <= 0 {
			t.Errorf("score = %v, want > 0", ref["score"])
		}
		if _, err := time.Parse(time.RFC3339Nano, ref["last_accessed"].(string)); err != nil {
			t.Errorf("last_accessed: %v", err)
		}
	}
	item, err := st.Get(context.Background(), []string{"memories", "u1"}, "pet")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := item.Value["access_count"].(float64); c != 3 {
		t.Errorf("stored access_count = %v, want 3", item.Value["access_count"])
	}
	if item.ExpiresAt.IsZero() {
		t.Error("updating access statistics dropped the TTL")
	}
	other, err := st.Get(context.Background(), []string{"memories", "u1"}, "job")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := other.Value["access_count"].(float64); c != 0 {
		t.Errorf("a memory not retrieved has access_count %v", other.Value["access_count"])
	}
	// The rewritten item is still found by its text.
	hits, err := st.Search(context.Background(), []string{"memories", "u1"}, store.SearchQuery{Query: "retriever"})
	if err != nil || len(hits) != 1 || hits[0].Key != "pet" {
		t.Errorf("search after access update = %v, %v", hits, err)
	}
}

func TestMemoryStoreUpsert(t *testing.T) {
	g := memoryGraph(t)
	st := openStore(t)
	services := &node.Services{Store: st}
	storeMemories(t, g, services, nil, memories()[:1])
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"memories", "${user_id}"}, "query": "topic"})
	if _, _, err := run(t, g, retrieve, map[string]any{"user_id": "u1", "topic": "favorite color"}, services); err != nil {
		t.Fatal(err)
	}
	// One object (not a list) updates the same key.
	events := storeMemories(t, g, services, nil, nil)
	if len(events) != 0 {
		t.Errorf("storing nothing emitted %v", events)
	}
	n := buildNode(t, g, "memory_store", map[string]any{"namespace": []any{"memories", "${user_id}"}, "from": "memory_update"})
	_, events, err := run(t, g, n, map[string]any{"user_id": "u1", "memory_update": map[string]any{
		"key": "favorite_color", "value": "The user's favorite color is now green", "category": "preference"}}, services)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Payload["count"] != 1 {
		t.Errorf("events = %v", events)
	}
	items, err := st.Search(context.Background(), []string{"memories", "u1"}, store.SearchQuery{})
	if err != nil || len(items) != 1 {
		t.Fatalf("items = %v, %v; want the one upserted memory", items, err)
	}
	v := items[0].Value
	if v["value"] != "The user's favorite color is now green" || v["access_count"] != float64(1) {
		t.Errorf("upserted value = %#v, want the new text and the kept access count 1", v)
	}
}

func TestMemoryStoreIndex(t *testing.T) {
	g := memoryGraph(t)
	services := &node.Services{Store: openStore(t)}
	storeMemories(t, g, services, map[string]any{"index": []any{"value"}}, memories())
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"memories", "${user_id}"}, "query": "topic"})
	tests := []struct {
		topic string
		want  []string
	}{
		{"golden retriever", []string{"pet"}},
		{"preference", []string{}}, // a category, which this index leaves out
		{"favorite_color", []string{"favorite_color"}},
	}
	for _, tt := range tests {
		for round := 0; round < 2; round++ { // the access update keeps the index
			up, _, err := run(t, g, retrieve, map[string]any{"user_id": "u1", "topic": tt.topic}, services)
			if err != nil {
				t.Fatal(err)
			}
			if got := refKeys(t, up["retrieved_memories"]); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%q (round %d): keys = %v, want %v", tt.topic, round, got, tt.want)
			}
		}
	}
}

func TestMemoryStoreInvalidEntries(t *testing.T) {
	g := memoryGraph(t)
	services := &node.Services{Store: openStore(t)}
	n := buildNode(t, g, "memory_store", map[string]any{"namespace": []any{"memories", "${user_id}"}, "from": "memory_update"})
	tests := []struct {
		name   string
		update any
		want   string
	}{
		{"no key", []any{map[string]any{"value": "x"}}, "entry 0: key must be a non-empty string"},
		{"no value", []any{map[string]any{"key": "k"}}, `entry 0 ("k"): value is missing`},
		{"confidence out of range", []any{map[string]any{"key": "k", "value": "v", "confidence": 3}}, "confidence must be a number from 0 to 1"},
		{"not an object", []any{"remember this"}, "entry 0: want an object"},
		{"a string", "remember this", "want a list of {key, value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, g, n, map[string]any{"user_id": "u1", "memory_update": tt.update}, services)
			if err == nil || !strings.Contains(err.Error(), tt.want) || node.CodeOf(err) != "invalid_memory" {
				t.Errorf("err = %v, want invalid_memory containing %q", err, tt.want)
			}
		})
	}
	t.Run("empty namespace element", func(t *testing.T) {
		_, _, err := run(t, g, n, map[string]any{"user_id": "", "memory_update": memories()}, services)
		if node.CodeOf(err) != "invalid_namespace" {
			t.Errorf("err = %v, want invalid_namespace", err)
		}
	})
}

func TestMemoryConfigErrors(t *testing.T) {
	g := memoryGraph(t)
	tests := []struct {
		typ  string
		cfg  map[string]any
		path string
		code string
	}{
		{"memory_retrieve", map[string]any{"namespace": []any{}}, "", nodetest.CodeSchema},
		{"memory_retrieve", map[string]any{"namespace": []any{"m", "${user}"}}, "namespace.1", nodetest.CodeTemplate},
		{"memory_retrieve", map[string]any{"namespace": []any{"m"}, "field": "memories"}, "field", "unknown-field"},
		{"memory_retrieve", map[string]any{"namespace": []any{"m"}, "field": "topic"}, "field", "invalid-config"},
		{"memory_retrieve", map[string]any{"namespace": []any{"m"}, "limit": 0}, "", nodetest.CodeSchema},
		{"memory_store", map[string]any{"namespace": []any{"m"}, "from": "memory_updates"}, "from", nodetest.CodeExpression},
		{"memory_store", map[string]any{"namespace": []any{"m"}, "from": "memory_update", "ttl": "soon"}, "ttl", "invalid-config"},
		{"memory_store", map[string]any{"namespace": []any{"m"}, "from": "memory_update", "index": []any{"_embedding"}}, "index.0", "invalid-config"},
		{"memory_store", map[string]any{"namespace": []any{"m"}}, "", nodetest.CodeSchema},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.path+" "+tt.code, func(t *testing.T) {
			n, b, err := nodetest.Build(g, tt.typ, tt.typ, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n != nil || !b.Has(tt.path, tt.code) {
				t.Errorf("problems = %v, want %s at %q", b.Problems(), tt.code, tt.path)
			}
		})
	}
}

func TestMemoryPrepare(t *testing.T) {
	g := memoryGraph(t)
	tests := []struct {
		typ string
		cfg map[string]any
	}{
		{"memory_retrieve", map[string]any{"namespace": []any{"m"}}},
		{"memory_store", map[string]any{"namespace": []any{"m"}, "from": "memory_update"}},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			n := buildNode(t, g, tt.typ, tt.cfg)
			p, ok := n.(node.Preparer)
			if !ok {
				t.Fatalf("%s does not implement node.Preparer", tt.typ)
			}
			err := p.Prepare(context.Background(), &node.Services{})
			if err == nil || !strings.Contains(err.Error(), "store") {
				t.Errorf("Prepare without a store = %v, want an error about the store", err)
			}
			if err := p.Prepare(context.Background(), &node.Services{Store: openStore(t)}); err != nil {
				t.Errorf("Prepare with a store: %v", err)
			}
			_, _, err = run(t, g, n, map[string]any{"memory_update": memories()}, &node.Services{})
			if node.CodeOf(err) != "no_store" {
				t.Errorf("Run without a store = %v, want no_store", err)
			}
		})
	}
}

func TestParseTTL(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"12h", 12 * time.Hour, false},
		{"30d", 30 * 24 * time.Hour, false},
		{"1.5d", 36 * time.Hour, false},
		{"0d", 0, true},
		{"-1h", 0, true},
		{"tomorrow", 0, true},
	}
	for _, tt := range tests {
		got, err := cognitive.ParseTTL(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
