package server

import (
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
)

// TestThreadTTL: LangGraph's ttl on threads.create and update is recorded on
// the thread, and the sweeper deletes the thread (record, checkpoints and
// runs) once it has passed, on Badger and on PostgreSQL; threads without a
// TTL, or with one not yet passed, stay. Bad TTLs are 422.
func TestThreadTTL(t *testing.T) {
	for _, backend := range []string{"badger", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, func(c *Config) {
				c.ThreadSweepInterval = 20 * time.Millisecond
				if backend == "postgres" {
					db := pgtest.Open(t, postgres.Options{})
					c.Checkpointer, c.Store = db.Checkpointer(), db.Store()
				}
			})
			create := func(body map[string]any) string {
				t.Helper()
				code, th := f.do("POST", "/threads", body)
				if code != 200 {
					t.Fatalf("create thread %v: %d %v", body, code, th)
				}
				return field(th, "thread_id").(string)
			}
			// ran gets checkpoints and a run (the graphs run on Badger)
			// before its ttl is shortened by an update; created expires by
			// the ttl it was created with.
			ran := create(map[string]any{"ttl": 60})
			if backend == "badger" {
				if code, out := f.do("POST", "/threads/"+ran+"/runs/wait", map[string]any{"assistant_id": "echo",
					"input": map[string]any{"messages": []any{map[string]any{"role": "human", "content": "hi"}}}}); code != 200 {
					t.Fatalf("run: %d %v", code, out)
				}
			}
			long := create(map[string]any{"ttl": 60})
			none := create(map[string]any{})
			if _, th := f.do("GET", "/threads/"+long, nil); field(th, "ttl", "ttl") != float64(60) || field(th, "ttl", "expires_at") == nil {
				t.Errorf("the ttl is not recorded on the thread: %v", th)
			}
			if code, th := f.do("PATCH", "/threads/"+ran, map[string]any{"ttl": map[string]any{"ttl": 0.002}}); code != 200 || field(th, "ttl", "strategy") != "delete" {
				t.Fatalf("patch ttl: %d %v", code, th)
			}
			created := create(map[string]any{"ttl": map[string]any{"strategy": "delete", "ttl": 0.002}})
			deadline := time.Now().Add(30 * time.Second)
			for _, id := range []string{ran, created} {
				for {
					code, _ := f.do("GET", "/threads/"+id, nil)
					if code == 404 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("thread %s with a passed ttl is still there (%d)", id, code)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			if code, _ := f.do("POST", "/threads/"+ran+"/history", map[string]any{}); code != 404 {
				t.Errorf("history of the expired thread: %d, want 404", code)
			}
			if code, _ := f.do("GET", "/threads/"+ran+"/runs", nil); code != 404 {
				t.Errorf("runs of the expired thread: %d, want 404", code)
			}
			for _, id := range []string{long, none} {
				if code, _ := f.do("GET", "/threads/"+id, nil); code != 200 {
					t.Errorf("thread %s should stay: %d", id, code)
				}
			}
		})
	}
}

// TestThreadTTLRefused: a ttl that is not LangGraph's is 422 naming it.
func TestThreadTTLRefused(t *testing.T) {
	f := newFixture(t, nil)
	for _, ttl := range []any{map[string]any{"strategy": "keep", "ttl": 5}, map[string]any{"ttl": -1}, map[string]any{"ttl": "soon"}, 0, "5"} {
		code, body := f.do("POST", "/threads", map[string]any{"ttl": ttl})
		if code != 422 || !strings.Contains(asString(field(body, "detail")), "ttl") {
			t.Errorf("ttl %v: %d %v, want 422 naming ttl", ttl, code, body)
		}
	}
}

// TestThreadTTLWithTheJSClient runs .ci/langgraph-sdk/ttl.mjs: ttl on
// threads.create and threads.update through the official client.
func TestThreadTTLWithTheJSClient(t *testing.T) {
	sdk := requireJSClient(t)
	f := newFixture(t, func(c *Config) { c.ThreadSweepInterval = 20 * time.Millisecond })
	sdk.run(t, "ttl.mjs", f.http.URL)
}
