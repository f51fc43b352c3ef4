package badger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/badger"
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
