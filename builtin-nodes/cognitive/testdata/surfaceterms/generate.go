//go:build ignore

// generate writes the fixture data directory of
// TestMemoryRetrieveReadsSurfaceTermData: a Badger data directory with
// memories as memory_store stores them (the document and its index paths),
// written by a store that indexed the surface terms of text only (words
// and CJK bigrams; written at commit b42656f):
//
//	go run ./builtin-nodes/cognitive/testdata/surfaceterms/generate.go OUTDIR
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: generate OUTDIR")
		os.Exit(2)
	}
	db, err := badger.Open(os.Args[1], badger.Options{MinFree: -1})
	if err != nil {
		panic(err)
	}
	memories := []struct{ key, value, category string }{
		{"about_me", "I have two cats and I love hiking", "fact"},
		{"neko", "猫を二匹飼っています", "fact"},
		{"job", "Works as a nurse in 東京都", "fact"},
	}
	ns := []string{"memories", "u1"}
	for _, m := range memories {
		doc := map[string]any{"key": m.key, "value": m.value, "category": m.category, "access_count": 0}
		if err := db.Store().Put(context.Background(), ns, m.key, doc, store.PutOptions{Index: []string{"key", "value", "category"}}); err != nil {
			panic(err)
		}
	}
	if err := db.Close(); err != nil {
		panic(err)
	}
}
