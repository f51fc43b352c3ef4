package cognitive_test

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// TestMemoryRetrieveMatchesWordForms: without an embedder, memories are
// recalled by the other inflections of their words ("cat" for "cats",
// "hike" for "hiking") and, in Japanese and Chinese, by the characters they
// share with the question ("猫について" for "猫を二匹飼っています"), while
// questions sharing only grammar with them ("…ています") recall nothing.
// The store is Badger on disk.
func TestMemoryRetrieveMatchesWordForms(t *testing.T) {
	db, err := badger.Open(t.TempDir(), badger.Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := memoryGraph(t)
	services := &node.Services{Store: db.Store()}
	storeMemories(t, g, services, nil, []any{
		map[string]any{"key": "cats", "value": "The user has two cats", "category": "fact"},
		map[string]any{"key": "hobby", "value": "The user loves hiking in the mountains", "category": "preference"},
		map[string]any{"key": "neko", "value": "猫を二匹飼っています", "category": "fact"},
		map[string]any{"key": "ramen", "value": "札幌の味噌ラーメンが好き", "category": "preference"},
		map[string]any{"key": "kyoto", "value": "来月京都へhikingに行きたい", "category": "plan"},
		map[string]any{"key": "kana", "value": "ねこがすき", "category": "preference"},
	})
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"memories", "${user_id}"}, "limit": 3})
	checkRecall(t, g, retrieve, services, []recallCase{
		{"Tell me about my cat", []string{"cats"}},
		{"How are the cats?", []string{"cats"}},
		{"Do I like to hike?", []string{"hobby", "kyoto"}},
		{"Which mountain did I hike?", []string{"hobby", "kyoto"}},
		{"I loved that", []string{"hobby"}},
		{"猫について教えて", []string{"neko"}},
		{"ペットの猫は何匹？", []string{"neko"}},
		{"ラーメンは好きですか", []string{"ramen"}},
		{"京都に行く予定は？", []string{"kyoto"}},
		{"我的猫叫什么名字", []string{"neko"}},
		{"ねこ", []string{"kana"}},
		{"明日は雨が降っています", []string{}},
		{"What's the capital of Peru?", []string{}},
	})
}

// TestMemoryRetrieveReadsSurfaceTermData: memories in a data directory
// written when the store indexed the surface terms of text only
// (testdata/surfaceterms, see its generate.go) are recalled by the other
// forms of their words and by single Han characters, as memories stored
// now are; recalled, they are rewritten with the terms of today.
func TestMemoryRetrieveReadsSurfaceTermData(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/surfaceterms/data")); err != nil {
		t.Fatal(err)
	}
	db, err := badger.Open(dir, badger.Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := memoryGraph(t)
	services := &node.Services{Store: db.Store()}
	retrieve := buildNode(t, g, "memory_retrieve", map[string]any{"namespace": []any{"memories", "${user_id}"}, "limit": 3})
	checkRecall(t, g, retrieve, services, []recallCase{
		{"Tell me about my cat", []string{"about_me"}},
		{"Do I like to hike?", []string{"about_me"}},
		{"I have cats", []string{"about_me"}},
		{"猫について教えて", []string{"neko"}},
		{"東京の病院", []string{"job"}},
		{"nursing", []string{"job"}},
		{"What's the capital of Peru?", []string{}},
		// Recalled once, about_me was rewritten; it is found the same way.
		{"tell me about my cat again", []string{"about_me"}},
	})
	item, err := db.Store().Get(context.Background(), []string{"memories", "u1"}, "about_me")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := item.Value["access_count"].(float64); n != 4 {
		t.Errorf("about_me access_count = %v, want 4", item.Value["access_count"])
	}
}

// recallCase is a user message and the keys of the memories it recalls, in
// order.
type recallCase struct {
	query string
	want  []string
}

// checkRecall runs retrieve for user u1 on each case's message.
func checkRecall(t *testing.T, g *graph.Graph, retrieve node.Node, services *node.Services, cases []recallCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.query, func(t *testing.T) {
			up, _, err := run(t, g, retrieve, map[string]any{"user_id": "u1", "messages": []any{map[string]any{"role": "user", "content": tt.query}}}, services)
			if err != nil {
				t.Fatal(err)
			}
			if got := refKeys(t, up["retrieved_memories"]); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keys = %v, want %v", got, tt.want)
			}
		})
	}
}
