package badger_test

import (
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
)

// BenchmarkChildren lists a thread's subgraph threads among 100, 2,000
// and 20,000 stored threads, by key range and by the listing of every
// thread.
func BenchmarkChildren(b *testing.B) {
	for _, be := range backends() {
		for _, stored := range []int{100, 2000, 20000} {
			b.Run(fmt.Sprintf("%s/threads=%d", be.name, stored), func(b *testing.B) {
				checkpointtest.BenchChildren(b, be.open(b).Checkpointer(), stored)
			})
		}
	}
}
