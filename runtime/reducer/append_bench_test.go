package reducer

import (
	"fmt"
	"testing"
)

// BenchmarkAppend appends one item to lists of 10 and of 10,000 items with
// each list reducer, the way a thread's state grows turn after turn: ns/op,
// B/op and allocs/op are the same for both lengths (appending is O(1)
// amortised, the id index kept beside the list).
func BenchmarkAppend(b *testing.B) {
	for _, name := range []string{"append", "union", "merge_by_id", "messages"} {
		r, ok := Lookup(name)
		if !ok {
			b.Fatalf("no reducer %s", name)
		}
		item := func(i int) any {
			if name == "append" || name == "union" {
				return fmt.Sprint("item ", i)
			}
			return map[string]any{"id": fmt.Sprint("i", i), "role": "user", "content": fmt.Sprint("item ", i)}
		}
		for _, n := range []int{10, 10000} {
			b.Run(fmt.Sprintf("%s/%d-items", name, n), func(b *testing.B) {
				var list any = []any{}
				grow := func(i int) {
					res, err := r.Reduce(list, []any{item(i)})
					if err != nil {
						b.Fatal(err)
					}
					list = res.Value
				}
				for i := range n {
					grow(i)
				}
				updates := make([][]any, b.N)
				for i := range updates {
					updates[i] = []any{item(n + i)}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					res, err := r.Reduce(list, updates[i])
					if err != nil {
						b.Fatal(err)
					}
					list = res.Value
				}
			})
		}
	}
}
