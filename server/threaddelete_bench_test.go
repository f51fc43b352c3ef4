package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
)

// BenchmarkDeleteThread measures DELETE /threads/{id} of a thread with one
// subgraph namespace, among 100 or 2,000 other stored threads (a quarter
// of them with a subgraph namespace of their own), on Badger and on
// PostgreSQL (GRAPHCTL_TEST_POSTGRES).
func BenchmarkDeleteThread(b *testing.B) {
	for _, backend := range []string{"badger", "postgres"} {
		for _, stored := range []int{100, 2000} {
			b.Run(fmt.Sprintf("%s/threads=%d", backend, stored), func(b *testing.B) {
				f := benchFixture(b, backend)
				for i := range stored {
					seedThread(b, f, fmt.Sprintf("seed-%05d", i), i%4 == 0)
				}
				b.ResetTimer()
				for i := range b.N {
					b.StopTimer()
					id := fmt.Sprintf("gone-%07d", i)
					seedThread(b, f, id, true)
					req, _ := http.NewRequest(http.MethodDelete, f.http.URL+"/threads/"+id, nil)
					b.StartTimer()
					resp, err := f.http.Client().Do(req)
					if err != nil {
						b.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusNoContent {
						b.Fatalf("DELETE /threads/%s: status %d", id, resp.StatusCode)
					}
				}
			})
		}
	}
}

// seedThread creates a thread with one checkpoint, and one in a subgraph
// namespace below it when withChild.
func seedThread(b *testing.B, f *fixture, id string, withChild bool) {
	b.Helper()
	if code, body := f.do("POST", "/threads", map[string]any{"thread_id": id}); code != http.StatusOK {
		b.Fatalf("create thread %s: %d %v", id, code, body)
	}
	ids := []string{id}
	if withChild {
		ids = append(ids, checkpoint.ChildThreadID(id, "sub:"+id))
	}
	for _, thread := range ids {
		cp := checkpoint.Checkpoint{ThreadID: thread, ID: checkpoint.NewID(), GraphName: "bench",
			Versions: map[string]int64{"v": 1}, Source: "loop", CreatedAt: time.Now()}
		if err := f.srv.cp.Put(context.Background(), cp, []checkpoint.Blob{{Field: "v", Version: 1, Data: []byte(`"x"`)}}); err != nil {
			b.Fatalf("put checkpoint of %s: %v", thread, err)
		}
	}
}

// benchFixture serves the test graphs on Badger, or on PostgreSQL with the
// shared run queue as graphctl serve --postgres does.
func benchFixture(b *testing.B, backend string) *fixture {
	if backend == "badger" {
		return newFixture(b, nil)
	}
	db := pgtest.Open(b, postgres.Options{})
	gate := b.TempDir()
	b.Setenv(gateEnv, gate)
	return postgresFixture(b, db, "testdata/graphs", gate)
}
