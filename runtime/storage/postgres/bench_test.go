package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
)

// BenchmarkPut measures one checkpoint write (one changed field) and one
// pending write, what a super-step of one node costs in storage.
func BenchmarkPut(b *testing.B) {
	db := openDB(b, postgres.Options{})
	cp := db.Checkpointer()
	ctx := context.Background()
	parent := ""
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := checkpoint.NewID()
		c := checkpoint.Checkpoint{ThreadID: "bench", ID: id, ParentID: parent, Step: i, GraphName: "g", Versions: map[string]int64{"count": int64(i + 1)}, Source: "loop"}
		if err := cp.Put(ctx, c, []checkpoint.Blob{{Field: "count", Version: int64(i + 1), Data: json.RawMessage(fmt.Sprint(i))}}); err != nil {
			b.Fatal(err)
		}
		if err := cp.PutWrites(ctx, "bench", id, checkpoint.PendingWrite{TaskID: "inc", Node: "inc", Kind: "update", Update: json.RawMessage(`{"count":1}`)}); err != nil {
			b.Fatal(err)
		}
		parent = id
	}
}
