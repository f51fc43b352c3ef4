package badger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

// BenchmarkStepPut measures the Put of one super-step inside a run: one
// small field changed, a next task (so no fsync), the parent named.
func BenchmarkStepPut(b *testing.B) {
	ctx := context.Background()
	cp := openDB(b, b.TempDir(), badger.Options{}).Checkpointer()
	parent := ""
	step := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		step++
		c := checkpoint.Checkpoint{ThreadID: "bench", ID: checkpoint.NewID(), ParentID: parent, Step: int(step), GraphName: "bench_loop",
			GraphHash: "0123456789abcdef", Versions: map[string]int64{"count": step}, Source: checkpoint.SourceLoop,
			Writers: []string{"inc"}, Next: []checkpoint.Task{{ID: "inc", Node: "inc"}},
			Metadata: map[string]any{"run_id": "run-0123456789abcdef"}}
		blobs := []checkpoint.Blob{{Field: "count", Version: step, Data: json.RawMessage(fmt.Sprint(step))}}
		if err := cp.Put(ctx, c, blobs); err != nil {
			b.Fatal(err)
		}
		parent = c.ID
	}
}

// BenchmarkStepPutRequired measures the Put of a super-step that rewrites
// one field of six: the checkpoint requires the other five's blobs, which
// the first step wrote.
func BenchmarkStepPutRequired(b *testing.B) {
	ctx := context.Background()
	cp := openDB(b, b.TempDir(), badger.Options{}).Checkpointer()
	versions := map[string]int64{"count": 0}
	var blobs []checkpoint.Blob
	for i := range 5 {
		f := fmt.Sprintf("slot_%d", i)
		versions[f] = 1
		blobs = append(blobs, checkpoint.Blob{Field: f, Version: 1, Data: json.RawMessage(`"filled"`)})
	}
	parent := ""
	step := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		step++
		versions["count"] = step
		c := checkpoint.Checkpoint{ThreadID: "bench", ID: checkpoint.NewID(), ParentID: parent, Step: int(step), GraphName: "bench_loop",
			Versions: versions, Source: checkpoint.SourceLoop, Next: []checkpoint.Task{{ID: "inc", Node: "inc"}}}
		if err := cp.Put(ctx, c, append(blobs, checkpoint.Blob{Field: "count", Version: step, Data: json.RawMessage(fmt.Sprint(step))})); err != nil {
			b.Fatal(err)
		}
		blobs = nil
		parent = c.ID
	}
}

// BenchmarkStoreOverwrite measures a store Put that replaces an item.
func BenchmarkStoreOverwrite(b *testing.B) {
	ctx := context.Background()
	s := openDB(b, b.TempDir(), badger.Options{}).Store()
	ns := []string{"users", "u1", "profile"}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		if err := s.Put(ctx, ns, "slots", map[string]any{"model": "WDT780SAEM1", "turn": i}, store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
