package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// BenchmarkChatTurn measures one turn of a chat (a user message in, an
// assistant message and a counter out) on a thread that already has 10 or
// 1,000 turns. With the decoded state cached and reducers that append in
// place, the two cost the same: compare ns/op, B/op and allocs/op across the
// sub-benchmarks.
func BenchmarkChatTurn(b *testing.B) {
	g := compileGraph(b, chatGraph)
	backends := []struct {
		name string
		open func(b *testing.B) checkpoint.Checkpointer
	}{
		{"memory", func(*testing.B) checkpoint.Checkpointer { return memory.New() }},
		{"badger", func(b *testing.B) checkpoint.Checkpointer {
			db, err := badger.Open(b.TempDir(), badger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db.Checkpointer()
		}},
	}
	for _, be := range backends {
		for _, turns := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/after-%d-turns", be.name, turns), func(b *testing.B) {
				eng := engine.New(g, be.open(b), engine.Options{})
				ctx := context.Background()
				turn := func(i int) {
					input, err := engine.TextInput(g, fmt.Sprintf("Message %d: one more detail about the order and its delivery.", i))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := eng.Run(ctx, engine.Request{ThreadID: "chat", Input: input}, nil); err != nil {
						b.Fatal(err)
					}
				}
				for i := range turns {
					turn(i)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu := meterCPU(b)
				for i := 0; i < b.N; i++ {
					turn(turns + i)
				}
				cpu(1, "cpu-ns/op")
			})
		}
	}
}
