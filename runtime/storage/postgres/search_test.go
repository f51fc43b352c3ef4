package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/store"
)

// A text query without a filter reads only the items sharing a term with it
// through the GIN index, yet ranks them exactly as a full scan does (the
// scan path is taken with a filter every item passes); quotes and
// backslashes in the query are plain text.
func TestTextSearchThroughTheIndex(t *testing.T) {
	db := openDB(t, postgres.Options{})
	st := db.Store()
	ctx := context.Background()
	words := []string{"leaking dishwasher pump", "dishwasher door seal", "oven light", "pump it's broken", `back\slash pump pump`, "東京都 dishwasher"}
	for i := 0; i < 60; i++ {
		text := words[i%len(words)] + fmt.Sprintf(" filler%d", i%7)
		if err := st.Put(ctx, []string{"docs", fmt.Sprint(i % 3)}, fmt.Sprintf("k%02d", i), map[string]any{"text": text, "all": true}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, query := range []string{"dishwasher pump", "it's", `back\slash`, "京都 oven", "nothing matches"} {
		for _, prefix := range [][]string{{"docs"}, {"docs", "1"}} {
			indexed, err := st.Search(ctx, prefix, store.SearchQuery{Query: query, Limit: 100})
			if err != nil {
				t.Fatalf("search %q: %v", query, err)
			}
			scanned, err := st.Search(ctx, prefix, store.SearchQuery{Query: query, Limit: 100, Filter: map[string]any{"all": true}})
			if err != nil {
				t.Fatalf("search %q with a filter: %v", query, err)
			}
			if got, want := summary(indexed), summary(scanned); got != want {
				t.Errorf("search %q under %v: through the index\n%s\nwant (full scan)\n%s", query, prefix, got, want)
			}
			if query != "nothing matches" && len(prefix) == 1 && len(indexed) == 0 {
				t.Errorf("search %q under %v found nothing", query, prefix)
			}
		}
	}
	// With a few rows the planner may prefer a scan; with scans off, a text
	// query must be able to use the index.
	conn, err := db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "RESET enable_seqscan")
	rows, err := conn.Query(ctx, "EXPLAIN SELECT key FROM store_items WHERE tsv @@ 'pump'::tsquery")
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	rows.Close()
	if !strings.Contains(plan.String(), "store_items_tsv") {
		t.Errorf("a text query cannot use the GIN index:\n%s", plan.String())
	}
}

func summary(items []store.Item) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%v/%s %.6f\n", it.Namespace, it.Key, it.Score)
	}
	return b.String()
}
