package badger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

func backends() []struct {
	name string
	open func(b testing.TB) *badger.DB
} {
	return []struct {
		name string
		open func(b testing.TB) *badger.DB
	}{
		{"in-memory", func(b testing.TB) *badger.DB { return openDB(b, "", badger.Options{InMemory: true}) }},
		{"on-disk", func(b testing.TB) *badger.DB { return openDB(b, b.TempDir(), badger.Options{}) }},
	}
}

// fiveFields returns the blobs of a step that changes five small fields.
func fiveFields(step int64) ([]checkpoint.Blob, map[string]int64) {
	blobs := make([]checkpoint.Blob, 5)
	versions := make(map[string]int64, 5)
	for i := range blobs {
		f := fmt.Sprintf("field_%d", i)
		blobs[i] = checkpoint.Blob{Field: f, Version: step, Data: json.RawMessage(fmt.Sprintf(`{"step":%d,"text":"value of %s"}`, step, f))}
		versions[f] = step
	}
	return blobs, versions
}

func BenchmarkPut(b *testing.B) {
	ctx := context.Background()
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			cp := be.open(b).Checkpointer()
			step := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				step++
				blobs, versions := fiveFields(step)
				c := checkpoint.Checkpoint{ThreadID: "bench", ID: fmt.Sprintf("%08d", step), Step: int(step), GraphName: "g", Versions: versions}
				if err := cp.Put(ctx, c, blobs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// turn writes one conversation turn: two appended messages of about 200
// bytes and three rewritten scalar fields.
func turn(ctx context.Context, cp checkpoint.Checkpointer, thread string, i int64) error {
	msg := func(j int) map[string]any {
		return map[string]any{"id": fmt.Sprintf("m-%d-%d", i, j), "role": []string{"user", "assistant"}[j],
			"content": fmt.Sprintf("turn %d: %s", i, strings.Repeat("lorem ipsum dolor sit amet ", 6))}
	}
	items, err := json.Marshal([]any{msg(0), msg(1)})
	if err != nil {
		return err
	}
	blobs := []checkpoint.Blob{
		{Field: "messages", Version: i, Data: items},
		{Field: "turn", Version: i, Data: json.RawMessage(fmt.Sprint(i))},
		{Field: "emotion", Version: i, Data: json.RawMessage(`"calm"`)},
		{Field: "goal", Version: i, Data: json.RawMessage(fmt.Sprintf(`"goal-%d"`, i%7))},
	}
	if i > 1 {
		blobs[0].Base = i - 1
	}
	versions := map[string]int64{"messages": i, "turn": i, "emotion": i, "goal": i}
	c := checkpoint.Checkpoint{ThreadID: thread, ID: checkpoint.NewID(), Step: int(i), GraphName: "cognitive",
		GraphHash: "sha256:0123456789abcdef", Versions: versions, Source: "loop", Writers: []string{"respond"},
		Next: []checkpoint.Task{{ID: "listen", Node: "listen"}}}
	return cp.Put(ctx, c, blobs)
}

func BenchmarkLatest(b *testing.B) {
	ctx := context.Background()
	for _, be := range backends() {
		for _, turns := range []int64{1, 100, 1000} {
			b.Run(fmt.Sprintf("%s/messages-chain-%d", be.name, turns), func(b *testing.B) {
				cp := be.open(b).Checkpointer()
				for i := int64(1); i <= turns; i++ {
					if err := turn(ctx, cp, "t", i); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := cp.Latest(ctx, "t"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestThousandTurnStorage checks that a 1,000-turn conversation stores at
// most three times the size of its final state.
func TestThousandTurnStorage(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "", badger.Options{InMemory: true})
	cp := db.Checkpointer()
	const turns = 1000
	for i := int64(1); i <= turns; i++ {
		if err := turn(ctx, cp, "long", i); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	latest, err := cp.Latest(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []any
	if err := json.Unmarshal(latest.Values["messages"], &msgs); err != nil || len(msgs) != 2*turns {
		t.Fatalf("final messages: %d items, %v; want %d", len(msgs), err, 2*turns)
	}
	state, err := json.Marshal(latest.Values)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.ThreadBytes(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(stored) / float64(len(state))
	t.Logf("1,000 turns: stored %d bytes, final state %d bytes, ratio %.2f", stored, len(state), ratio)
	if ratio > 3 {
		t.Errorf("stored/final state = %.2f, want ≤ 3", ratio)
	}
}

func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	words := strings.Fields("badger raft storage engine cache index query memory thread graph node route token vector " +
		"search filter namespace checkpoint delta blob value log tree compaction replica leader follower")
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			st := be.open(b).Store()
			for i := range 1000 {
				var text []string
				for j := range 30 {
					text = append(text, words[(i*7+j*j)%len(words)])
				}
				v := map[string]any{"text": strings.Join(text, " "), "n": i, "kind": []string{"note", "fact"}[i%2]}
				if err := st.Put(ctx, []string{"bench", fmt.Sprint(i % 10)}, fmt.Sprint(i), v, store.PutOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			for _, q := range []store.SearchQuery{
				{Query: "badger compaction", Limit: 10},
				{Query: "leader election replica", Filter: map[string]any{"kind": "fact"}, Limit: 10},
				{Filter: map[string]any{"n": map[string]any{"$gte": 500}}, Limit: 10},
			} {
				name := "query"
				if q.Query == "" {
					name = "filter-only"
				} else if q.Filter != nil {
					name = "query+filter"
				}
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						items, err := st.Search(ctx, []string{"bench"}, q)
						if err != nil || len(items) == 0 {
							b.Fatalf("Search: %d items, %v", len(items), err)
						}
					}
				})
			}
		})
	}
}
