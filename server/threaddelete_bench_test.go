package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/runs/pgqueue"
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
	b.Setenv(gateEnv, b.TempDir())
	queue, err := pgqueue.New(db.Pool(), pgqueue.Options{Schema: db.Schema()})
	if err != nil {
		b.Fatal(err)
	}
	cp := db.Checkpointer()
	reg, diags, err := graphs.Open("testdata/graphs", func(g *compile.Graph) (*engine.Engine, error) {
		return engine.New(g, cp, engine.Options{Store: db.Store()}), nil
	}, nil)
	if err != nil || reg == nil {
		b.Fatalf("open graphs: %v %v", err, diags)
	}
	srv, err := New(Config{Graphs: reg, Checkpointer: cp, Store: db.Store(), RunQueue: queue, CronClaim: queue.FireCron})
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	srv.Start(ctx)
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(func() {
		stop()
		srv.Wait()
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.runs.Shutdown(ctx)
		queue.Close()
		reg.Close()
	})
	return &fixture{t: b, srv: srv, http: hs, gate: b.TempDir()}
}
