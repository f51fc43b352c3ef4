// Package storetest is the conformance suite every store.Store backend runs:
// put/get/delete, namespace isolation and prefix search, namespace listing,
// filters, TTL, BM25 text search in English and Japanese, the Index option and
// paging. Run needs only the Store interface; RunClock adds the checks that
// need a controllable clock (exact expiry, timestamps, newest-first order);
// RunEmbedding checks semantic search with a store's embedder.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/store"
)

// Run runs the suite. open must return a new, empty store for each call and
// register its own cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"PutGetDelete", testPutGetDelete},
		{"InvalidPut", testInvalidPut},
		{"NamespaceIsolation", testNamespaces},
		{"ListNamespaces", testListNamespaces},
		{"Filters", testFilters},
		{"TTLExpires", testTTLPolling},
		{"RankEnglish", testRankEnglish},
		{"RankJapanese", testRankJapanese},
		{"WordForms", testWordForms},
		{"IndexOption", testIndexOption},
		{"Paging", testPaging},
		{"CancelledContext", testCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// Clock is a manual clock for RunClock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// RunClock runs the checks that need time under control. open must return a
// new, empty store that reads time from clock.Now.
func RunClock(t *testing.T, open func(t *testing.T, clock *Clock) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store, c *Clock)
	}{
		{"TTLExactExpiry", testTTLClock},
		{"TTLRefresh", testTTLRefresh},
		{"Timestamps", testTimestamps},
		{"NewestFirst", testNewestFirst},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClock(time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC))
			tt.fn(t, open(t, c), c)
		})
	}
}

var bg = context.Background()

func put(t *testing.T, s store.Store, ns []string, key string, v map[string]any, opts ...store.PutOptions) {
	t.Helper()
	var o store.PutOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if err := s.Put(bg, ns, key, v, o); err != nil {
		t.Fatalf("Put %v/%s: %v", ns, key, err)
	}
}

func search(t *testing.T, s store.Store, prefix []string, q store.SearchQuery) []store.Item {
	t.Helper()
	items, err := s.Search(bg, prefix, q)
	if err != nil {
		t.Fatalf("Search %v %+v: %v", prefix, q, err)
	}
	return items
}

func keysOf(items []store.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// sameJSON compares values as JSON would see them.
func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y any
	_ = json.Unmarshal(ja, &x)
	_ = json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

func testPutGetDelete(t *testing.T, s store.Store) {
	ns := []string{"memories", "user-1"}
	v1 := map[string]any{"text": "likes tea", "n": 3, "nested": map[string]any{"a": []any{1, "x"}}}
	put(t, s, ns, "k1", v1)
	got, err := s.Get(bg, ns, "k1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !slices.Equal(got.Namespace, ns) || got.Key != "k1" || !sameJSON(got.Value, v1) {
		t.Errorf("Get = %+v, want %v/k1 %v", got, ns, v1)
	}
	if got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() || !got.ExpiresAt.IsZero() {
		t.Errorf("timestamps = created %v updated %v expires %v", got.CreatedAt, got.UpdatedAt, got.ExpiresAt)
	}
	v2 := map[string]any{"text": "likes coffee"}
	put(t, s, ns, "k1", v2)
	if got, err = s.Get(bg, ns, "k1"); err != nil || !sameJSON(got.Value, v2) {
		t.Errorf("Get after overwrite = %+v, %v; want %v", got, err, v2)
	}
	if err := s.Delete(bg, ns, "k1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(bg, ns, "k1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after Delete: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(bg, ns, "k1"); err != nil {
		t.Errorf("Delete of a missing item: %v", err)
	}
	if _, err := s.Get(bg, []string{"nowhere"}, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get missing: err = %v, want ErrNotFound", err)
	}
	if items := search(t, s, ns, store.SearchQuery{}); len(items) != 0 {
		t.Errorf("Search after delete = %v", keysOf(items))
	}
}

func testInvalidPut(t *testing.T, s store.Store) {
	tests := []struct {
		name string
		ns   []string
		key  string
		opts store.PutOptions
	}{
		{"nil namespace", nil, "k", store.PutOptions{}},
		{"empty element", []string{"a", ""}, "k", store.PutOptions{}},
		{"empty key", []string{"a"}, "", store.PutOptions{}},
		{"negative TTL", []string{"a"}, "k", store.PutOptions{TTL: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Put(bg, tt.ns, tt.key, map[string]any{"x": 1}, tt.opts); err == nil {
				t.Error("Put succeeded")
			}
		})
	}
}

func testNamespaces(t *testing.T, s store.Store) {
	spaces := [][]string{{"a"}, {"a", "b"}, {"a", "bc"}, {"a", "b", "c"}, {"ab"}, {"b", "a"}}
	for i, ns := range spaces {
		put(t, s, ns, "same", map[string]any{"i": i})
	}
	for i, ns := range spaces {
		got, err := s.Get(bg, ns, "same")
		if err != nil {
			t.Fatalf("Get %v: %v", ns, err)
		}
		if !sameJSON(got.Value["i"], i) {
			t.Errorf("Get %v = %v, want i=%d", ns, got.Value, i)
		}
	}
	tests := []struct {
		prefix []string
		want   []int // indexes into spaces
	}{
		{nil, []int{0, 1, 2, 3, 4, 5}},
		{[]string{"a"}, []int{0, 1, 2, 3}},
		{[]string{"a", "b"}, []int{1, 3}},
		{[]string{"a", "b", "c"}, []int{3}},
		{[]string{"ab"}, []int{4}},
		{[]string{"b"}, []int{5}},
		{[]string{"c"}, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.prefix), func(t *testing.T) {
			items := search(t, s, tt.prefix, store.SearchQuery{})
			var got []int
			for _, it := range items {
				got = append(got, slices.IndexFunc(spaces, func(ns []string) bool { return slices.Equal(ns, it.Namespace) }))
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%v) namespaces %v, want %v", tt.prefix, got, tt.want)
			}
		})
	}
}

func testListNamespaces(t *testing.T, s store.Store) {
	for _, ns := range [][]string{
		{"users", "u1", "memories"}, {"users", "u1", "prefs"}, {"users", "u2", "memories"},
		{"users", "u2", "memories"}, {"docs", "manuals"}, {"docs"}, {"usersx", "z"},
	} {
		put(t, s, ns, fmt.Sprint(len(ns), ns), map[string]any{"x": 1})
	}
	tests := []struct {
		name string
		q    store.NamespaceQuery
		want [][]string
	}{
		{"all sorted without duplicates", store.NamespaceQuery{}, [][]string{
			{"docs"}, {"docs", "manuals"}, {"users", "u1", "memories"}, {"users", "u1", "prefs"}, {"users", "u2", "memories"}, {"usersx", "z"}}},
		{"prefix", store.NamespaceQuery{Prefix: []string{"users"}}, [][]string{
			{"users", "u1", "memories"}, {"users", "u1", "prefs"}, {"users", "u2", "memories"}}},
		{"prefix with wildcard", store.NamespaceQuery{Prefix: []string{"users", "*", "prefs"}}, [][]string{{"users", "u1", "prefs"}}},
		{"suffix", store.NamespaceQuery{Suffix: []string{"memories"}}, [][]string{{"users", "u1", "memories"}, {"users", "u2", "memories"}}},
		{"prefix and suffix", store.NamespaceQuery{Prefix: []string{"users", "u2"}, Suffix: []string{"memories"}}, [][]string{{"users", "u2", "memories"}}},
		{"max depth", store.NamespaceQuery{MaxDepth: 1}, [][]string{{"docs"}, {"users"}, {"usersx"}}},
		{"max depth 2 under prefix", store.NamespaceQuery{Prefix: []string{"users"}, MaxDepth: 2}, [][]string{{"users", "u1"}, {"users", "u2"}}},
		{"limit", store.NamespaceQuery{Limit: 2}, [][]string{{"docs"}, {"docs", "manuals"}}},
		{"offset and limit", store.NamespaceQuery{Offset: 2, Limit: 2}, [][]string{{"users", "u1", "memories"}, {"users", "u1", "prefs"}}},
		{"offset past end", store.NamespaceQuery{Offset: 10}, nil},
		{"no match", store.NamespaceQuery{Prefix: []string{"nope"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ListNamespaces(bg, tt.q)
			if err != nil {
				t.Fatalf("ListNamespaces: %v", err)
			}
			if len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("ListNamespaces(%+v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func testFilters(t *testing.T, s store.Store) {
	ns := []string{"f"}
	docs := map[string]map[string]any{
		"a": {"kind": "note", "n": 1, "at": "2024-01-01T00:00:00Z", "meta": map[string]any{"lang": "en"}},
		"b": {"kind": "note", "n": 5, "at": "2024-06-01T00:00:00Z", "meta": map[string]any{"lang": "ja"}},
		"c": {"kind": "fact", "n": 10, "at": "2025-01-01T09:00:00+10:00", "meta": map[string]any{"lang": "ja"}},
		"d": {"kind": "fact", "n": 2.5},
	}
	for k, v := range docs {
		put(t, s, ns, k, v)
	}
	tests := []struct {
		name   string
		filter map[string]any
		want   []string
	}{
		{"equality", map[string]any{"kind": "note"}, []string{"a", "b"}},
		{"dotted path", map[string]any{"meta.lang": "ja"}, []string{"b", "c"}},
		{"two conditions", map[string]any{"kind": "fact", "meta.lang": "ja"}, []string{"c"}},
		{"$eq", map[string]any{"n": map[string]any{"$eq": 5}}, []string{"b"}},
		{"$ne", map[string]any{"kind": map[string]any{"$ne": "note"}}, []string{"c", "d"}},
		{"$gt", map[string]any{"n": map[string]any{"$gt": 2.5}}, []string{"b", "c"}},
		{"$gte", map[string]any{"n": map[string]any{"$gte": 2.5}}, []string{"b", "c", "d"}},
		{"$lt", map[string]any{"n": map[string]any{"$lt": 5}}, []string{"a", "d"}},
		{"$lte", map[string]any{"n": map[string]any{"$lte": 5}}, []string{"a", "b", "d"}},
		{"range", map[string]any{"n": map[string]any{"$gt": 1, "$lt": 10}}, []string{"b", "d"}},
		{"time $gte", map[string]any{"at": map[string]any{"$gte": "2024-06-01T00:00:00Z"}}, []string{"b", "c"}},
		{"time $lt with offset", map[string]any{"at": map[string]any{"$lt": "2025-01-01T00:00:00Z"}}, []string{"a", "b", "c"}},
		{"string $lt", map[string]any{"kind": map[string]any{"$lt": "g"}}, []string{"c", "d"}},
		{"no match", map[string]any{"kind": "other"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sorted(keysOf(search(t, s, ns, store.SearchQuery{Filter: tt.filter})))
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("filter %v = %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
	if _, err := s.Search(bg, ns, store.SearchQuery{Filter: map[string]any{"n": map[string]any{"$near": 1}}}); err == nil {
		t.Error("unknown operator $near accepted")
	}
}

func testTTLPolling(t *testing.T, s store.Store) {
	ns := []string{"ttl", "short"}
	put(t, s, []string{"ttl", "long"}, "stay", map[string]any{"x": "kept"}, store.PutOptions{TTL: time.Hour})
	put(t, s, ns, "go", map[string]any{"x": "gone"}, store.PutOptions{TTL: 20 * time.Millisecond})
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.Get(bg, ns, "go")
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("item with a 20ms TTL never expired")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if items := search(t, s, []string{"ttl"}, store.SearchQuery{}); !slices.Equal(keysOf(items), []string{"stay"}) {
		t.Errorf("Search after expiry = %v, want [stay]", keysOf(items))
	}
	if items := search(t, s, []string{"ttl"}, store.SearchQuery{Query: "gone kept"}); !slices.Equal(keysOf(items), []string{"stay"}) {
		t.Errorf("text search after expiry = %v, want [stay]", keysOf(items))
	}
	got, err := s.ListNamespaces(bg, store.NamespaceQuery{Prefix: []string{"ttl"}})
	if err != nil || !reflect.DeepEqual(got, [][]string{{"ttl", "long"}}) {
		t.Errorf("ListNamespaces after expiry = %v, %v", got, err)
	}
	item, err := s.Get(bg, []string{"ttl", "long"}, "stay")
	if err != nil {
		t.Fatalf("long-lived item: %v", err)
	}
	if item.ExpiresAt.IsZero() || item.ExpiresAt.Before(item.UpdatedAt.Add(59*time.Minute)) {
		t.Errorf("ExpiresAt = %v, want about an hour after %v", item.ExpiresAt, item.UpdatedAt)
	}
}

var englishCorpus = map[string]string{
	"badger":  "Badger is an embedded key-value storage engine written in Go; Badger keeps keys in an LSM tree.",
	"raft":    "Raft is a consensus algorithm for replicated logs across servers.",
	"cooking": "Slow-cooked tomato sauce needs garlic, olive oil and patience.",
	"go":      "Go is a programming language with goroutines and channels.",
	"storage": "Cloud storage pricing depends on region and access tier.",
}

func testRankEnglish(t *testing.T, s store.Store) {
	ns := []string{"kb", "en"}
	for k, text := range englishCorpus {
		put(t, s, ns, k, map[string]any{"text": text})
	}
	tests := []struct {
		query string
		top   string
	}{
		{"badger storage engine", "badger"},
		{"consensus for replicated logs", "raft"},
		{"TOMATO Garlic", "cooking"},
		{"goroutines channels", "go"},
		{"storage pricing", "storage"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			items := search(t, s, []string{"kb"}, store.SearchQuery{Query: tt.query})
			if len(items) == 0 || items[0].Key != tt.top {
				t.Fatalf("Search(%q) = %v, want %q first", tt.query, keysOf(items), tt.top)
			}
			for i, it := range items {
				if it.Score <= 0 {
					t.Errorf("hit %s has score %v", it.Key, it.Score)
				}
				if i > 0 && it.Score > items[i-1].Score {
					t.Errorf("hits not ordered by score: %v", items)
				}
			}
		})
	}
	if items := search(t, s, ns, store.SearchQuery{Query: "quantum chromodynamics"}); len(items) != 0 {
		t.Errorf("query sharing no term matched %v", keysOf(items))
	}
}

var japaneseCorpus = map[string]string{
	"weather": "東京の今日の天気は晴れ、最高気温は二十度です。",
	"ramen":   "札幌の味噌ラーメンは寒い冬に人気があります。",
	"train":   "新幹線で東京から大阪まで約二時間半かかります。",
	"bot":     "Telegramのボットで社内文書を検索できます。",
}

func testRankJapanese(t *testing.T, s store.Store) {
	ns := []string{"kb", "ja"}
	for k, text := range japaneseCorpus {
		put(t, s, ns, k, map[string]any{"body": text})
	}
	tests := []struct {
		query string
		top   string
	}{
		{"東京の天気", "weather"},
		{"味噌ラーメン", "ramen"},
		{"大阪までの新幹線", "train"},
		{"文書検索", "bot"},
		{"telegram", "bot"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			items := search(t, s, ns, store.SearchQuery{Query: tt.query})
			if len(items) == 0 || items[0].Key != tt.top {
				t.Errorf("Search(%q) = %v, want %q first", tt.query, keysOf(items), tt.top)
			}
		})
	}
}

// testWordForms: a query matches the other inflections of its words and,
// in Chinese and Japanese, the single characters it shares with an item;
// the exact form ranks first.
func testWordForms(t *testing.T, s store.Store) {
	ns := []string{"forms"}
	put(t, s, ns, "cats", map[string]any{"text": "I have two cats and I love hiking"})
	put(t, s, ns, "cat", map[string]any{"text": "The cat sleeps all day"})
	put(t, s, ns, "neko", map[string]any{"text": "猫を二匹飼っています"})
	put(t, s, ns, "boxes", map[string]any{"text": "Boxes of studies"})
	tests := []struct {
		query string
		want  []string
	}{
		{"cat", []string{"cat", "cats"}},
		{"cats", []string{"cats", "cat"}},
		{"hikes", []string{"cats"}},
		{"a box for my study", []string{"boxes"}},
		{"猫について", []string{"neko"}},
		{"sleeping", []string{"cat"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if got := keysOf(search(t, s, ns, store.SearchQuery{Query: tt.query})); !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

func testIndexOption(t *testing.T, s store.Store) {
	ns := []string{"idx"}
	put(t, s, ns, "default", map[string]any{"title": "penguin facts", "body": "penguins swim"})
	put(t, s, ns, "off", map[string]any{"title": "penguin secrets", "body": "penguins dive"}, store.PutOptions{Index: []string{}})
	put(t, s, ns, "title-only", map[string]any{"title": "penguin diet", "body": "krill everywhere"}, store.PutOptions{Index: []string{"title"}})
	tests := []struct {
		query string
		want  []string
	}{
		{"penguin", []string{"default", "title-only"}},
		{"krill", nil},
		{"swim", []string{"default"}},
		{"secrets", nil},
		{"", []string{"default", "off", "title-only"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := sorted(keysOf(search(t, s, ns, store.SearchQuery{Query: tt.query})))
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
	// Filters and text search combine.
	got := keysOf(search(t, s, ns, store.SearchQuery{Query: "penguin", Filter: map[string]any{"body": "krill everywhere"}}))
	if !slices.Equal(got, []string{"title-only"}) {
		t.Errorf("query with filter = %v, want [title-only]", got)
	}
}

func testPaging(t *testing.T, s store.Store) {
	ns := []string{"page"}
	var all []string
	for i := range 10 {
		k := fmt.Sprintf("item-%02d", i)
		all = append(all, k)
		put(t, s, ns, k, map[string]any{"text": "shared words", "i": i})
	}
	for _, query := range []string{"", "shared"} {
		t.Run("query="+query, func(t *testing.T) {
			full := keysOf(search(t, s, ns, store.SearchQuery{Query: query}))
			if !slices.Equal(sorted(full), all) {
				t.Fatalf("unpaged search = %v, want all 10", full)
			}
			tests := []struct {
				offset, limit int
				want          []string
			}{
				{0, 3, full[:3]},
				{3, 3, full[3:6]},
				{9, 3, full[9:]},
				{10, 3, nil},
				{20, 0, nil},
				{4, 0, full[4:]},
			}
			for _, tt := range tests {
				got := keysOf(search(t, s, ns, store.SearchQuery{Query: query, Offset: tt.offset, Limit: tt.limit}))
				if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
					t.Errorf("offset %d limit %d = %v, want %v", tt.offset, tt.limit, got, tt.want)
				}
			}
		})
	}
}

func testCancelled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := s.Put(ctx, []string{"c"}, "k", map[string]any{}, store.PutOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Put: err = %v, want context.Canceled", err)
	}
	if _, err := s.Search(ctx, nil, store.SearchQuery{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search: err = %v, want context.Canceled", err)
	}
}

func testTTLClock(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"ttl"}
	start := c.Now()
	put(t, s, ns, "short", map[string]any{"text": "ephemeral"}, store.PutOptions{TTL: 10 * time.Minute})
	put(t, s, ns, "forever", map[string]any{"text": "ephemeral too"})
	put(t, s, []string{"ttl-only"}, "x", map[string]any{}, store.PutOptions{TTL: 10 * time.Minute})
	item, err := s.Get(bg, ns, "short")
	if err != nil {
		t.Fatal(err)
	}
	if !item.ExpiresAt.Equal(start.Add(10 * time.Minute)) {
		t.Errorf("ExpiresAt = %v, want %v", item.ExpiresAt, start.Add(10*time.Minute))
	}
	c.Advance(10*time.Minute - time.Nanosecond)
	if _, err := s.Get(bg, ns, "short"); err != nil {
		t.Errorf("Get just before expiry: %v", err)
	}
	if got := sorted(keysOf(search(t, s, ns, store.SearchQuery{Query: "ephemeral"}))); !slices.Equal(got, []string{"forever", "short"}) {
		t.Errorf("search before expiry = %v", got)
	}
	c.Advance(time.Nanosecond)
	if _, err := s.Get(bg, ns, "short"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get at expiry: err = %v, want ErrNotFound", err)
	}
	for _, query := range []string{"", "ephemeral"} {
		if got := keysOf(search(t, s, ns, store.SearchQuery{Query: query})); !slices.Equal(got, []string{"forever"}) {
			t.Errorf("Search(%q) after expiry = %v, want [forever]", query, got)
		}
	}
	spaces, err := s.ListNamespaces(bg, store.NamespaceQuery{})
	if err != nil || !reflect.DeepEqual(spaces, [][]string{{"ttl"}}) {
		t.Errorf("ListNamespaces after expiry = %v, %v; want [[ttl]]", spaces, err)
	}
	// Putting again without a TTL makes the item permanent.
	put(t, s, ns, "short", map[string]any{"text": "back"})
	c.Advance(24 * time.Hour)
	if item, err := s.Get(bg, ns, "short"); err != nil || !item.ExpiresAt.IsZero() {
		t.Errorf("re-put item = %+v, %v; want present without expiry", item, err)
	}
}

func testTimestamps(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"ts"}
	t0 := c.Now()
	put(t, s, ns, "k", map[string]any{"v": 1})
	c.Advance(time.Minute)
	put(t, s, ns, "k", map[string]any{"v": 2})
	item, err := s.Get(bg, ns, "k")
	if err != nil {
		t.Fatal(err)
	}
	if !item.CreatedAt.Equal(t0) || !item.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("created %v updated %v, want %v and %v", item.CreatedAt, item.UpdatedAt, t0, t0.Add(time.Minute))
	}
	if err := s.Delete(bg, ns, "k"); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	put(t, s, ns, "k", map[string]any{"v": 3})
	if item, err = s.Get(bg, ns, "k"); err != nil || !item.CreatedAt.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("after delete and put, created = %v (%v), want %v", item.CreatedAt, err, t0.Add(2*time.Minute))
	}
}

func testNewestFirst(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"order"}
	for _, k := range []string{"a", "b", "c"} {
		put(t, s, ns, k, map[string]any{"k": k})
		c.Advance(time.Second)
	}
	put(t, s, ns, "a", map[string]any{"k": "a2"})
	got := keysOf(search(t, s, ns, store.SearchQuery{}))
	if want := []string{"a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("listing = %v, want newest first %v", got, want)
	}
}

// testTTLRefresh checks store.TTLRefresher: a refreshed item expires its
// TTL after the refresh, every time (the TTL it was stored with, not the
// time left), keeps its value, times and terms; items without a TTL, expired
// and missing items are left as they are.
func testTTLRefresh(t *testing.T, s store.Store, c *Clock) {
	r, ok := s.(store.TTLRefresher)
	if !ok {
		t.Fatalf("%T does not refresh TTLs (store.TTLRefresher)", s)
	}
	ns := []string{"refresh"}
	start := c.Now()
	put(t, s, ns, "short", map[string]any{"text": "renewable lease"}, store.PutOptions{TTL: 10 * time.Minute})
	put(t, s, ns, "gone", map[string]any{"text": "lapsed"}, store.PutOptions{TTL: time.Minute})
	put(t, s, ns, "forever", map[string]any{"text": "permanent"})
	refresh := func(keys ...string) {
		t.Helper()
		refs := make([]store.ItemRef, len(keys))
		for i, k := range keys {
			refs[i] = store.ItemRef{Namespace: ns, Key: k}
		}
		if err := r.RefreshTTL(bg, refs); err != nil {
			t.Fatal(err)
		}
	}
	expiry := func(key string) time.Time {
		t.Helper()
		it, err := s.Get(bg, ns, key)
		if err != nil {
			t.Fatalf("Get %s: %v", key, err)
		}
		return it.ExpiresAt
	}
	for round := 1; round <= 3; round++ {
		c.Advance(8 * time.Minute)
		refresh("short", "gone", "forever", "missing", "short")
		if got, want := expiry("short"), c.Now().Add(10*time.Minute); !got.Equal(want) {
			t.Fatalf("refresh %d: ExpiresAt = %v, want %v (10 minutes after the refresh)", round, got, want)
		}
	}
	if _, err := s.Get(bg, ns, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an expired item came back after a refresh: %v", err)
	}
	if got := expiry("forever"); !got.IsZero() {
		t.Errorf("an item without a TTL expires at %v after a refresh", got)
	}
	it, err := s.Get(bg, ns, "short")
	if err != nil {
		t.Fatal(err)
	}
	if it.Value["text"] != "renewable lease" || !it.CreatedAt.Equal(start) || !it.UpdatedAt.Equal(start) {
		t.Errorf("refreshed item = %+v; want its value and its times as put at %v", it, start)
	}
	if got := keysOf(search(t, s, ns, store.SearchQuery{Query: "lease"})); !slices.Equal(got, []string{"short"}) {
		t.Errorf("search of a refreshed item's text = %v, want [short]", got)
	}
	// Put again with another TTL: refreshes restart that one.
	put(t, s, ns, "short", map[string]any{"text": "renewable lease"}, store.PutOptions{TTL: 2 * time.Minute})
	c.Advance(time.Minute)
	refresh("short")
	c.Advance(2*time.Minute - time.Nanosecond)
	if _, err := s.Get(bg, ns, "short"); err != nil {
		t.Errorf("Get just before the refreshed expiry: %v", err)
	}
	c.Advance(time.Nanosecond)
	if _, err := s.Get(bg, ns, "short"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get at the refreshed expiry: err = %v, want ErrNotFound", err)
	}
}
