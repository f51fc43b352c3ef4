package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/runtime/store/storetest"
)

// TestEnv names the variable holding the URL of a PostgreSQL server the tests
// may create and drop schemas in.
const TestEnv = "GRAPHCTL_TEST_POSTGRES"

var schemaSeq atomic.Int64

// openDB opens a database in a schema of its own, dropped when the test ends.
func openDB(t testing.TB, opts postgres.Options) *postgres.DB {
	t.Helper()
	url := os.Getenv(TestEnv)
	if url == "" {
		t.Skipf("$%s is not set: the PostgreSQL tests need a server (e.g. postgres://postgres@127.0.0.1:5432/test)", TestEnv)
	}
	ctx := context.Background()
	opts.Schema = fmt.Sprintf("gctest_%d_%d", os.Getpid(), schemaSeq.Add(1))
	db, err := postgres.Open(ctx, url, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+opts.Schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return db
}

func TestCheckpointerConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Checkpointer {
		return openDB(t, postgres.Options{}).Checkpointer()
	})
}

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openDB(t, postgres.Options{}).Store()
	})
	storetest.RunClock(t, func(t *testing.T, c *storetest.Clock) store.Store {
		return openDB(t, postgres.Options{Now: c.Now}).Store()
	})
}

func TestStoreEmbeddings(t *testing.T) {
	storetest.RunEmbedding(t, func(t *testing.T) func(store.Embedder) store.Store {
		db := openDB(t, postgres.Options{})
		return func(e store.Embedder) store.Store {
			if e == nil {
				return db.Store()
			}
			return db.StoreWith(e)
		}
	})
}

func TestMigrationsAreVersioned(t *testing.T) {
	db := openDB(t, postgres.Options{})
	v, err := db.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v < 1 {
		t.Fatalf("schema version = %d, want the newest migration applied", v)
	}
}

func TestBadSchemaName(t *testing.T) {
	if _, err := postgres.Open(context.Background(), "postgres://127.0.0.1:1/x", postgres.Options{Schema: "Robert'); DROP"}); err == nil {
		t.Fatal("Open accepted a schema name that is not an identifier")
	}
}

func TestUnreachableServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:1/test?connect_timeout=2", postgres.Options{})
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
}

func TestLockIsExclusiveAcrossConnections(t *testing.T) {
	db := openDB(t, postgres.Options{})
	ctx := context.Background()
	release, err := db.Lock(ctx, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Lock(ctx, "serve"); !errors.Is(err, postgres.ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	other, err := db.Lock(ctx, "other")
	if err != nil {
		t.Fatalf("a lock of another name: %v", err)
	}
	other()
	release()
	again, err := db.Lock(ctx, "serve")
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	again()
}

// A rejected Put leaves nothing behind, not even the thread summary it
// updates before the check that fails: the batch is one transaction.
func TestRejectedPutIsAtomic(t *testing.T) {
	c := openDB(t, postgres.Options{}).Checkpointer()
	ctx := context.Background()
	first := checkpoint.Checkpoint{ThreadID: "t", ID: checkpoint.NewID(), Step: 1, GraphName: "g", Versions: map[string]int64{"a": 1}}
	if err := c.Put(ctx, first, []checkpoint.Blob{{Field: "a", Version: 1, Data: json.RawMessage(`1`)}}); err != nil {
		t.Fatal(err)
	}
	bad := checkpoint.Checkpoint{ThreadID: "t", ID: checkpoint.NewID(), ParentID: first.ID, Step: 2, GraphName: "g2", Versions: map[string]int64{"a": 7}}
	err := c.Put(ctx, bad, nil)
	if err == nil || !strings.Contains(err.Error(), "no blob for field version a@7") {
		t.Fatalf("Put with a missing blob: %v", err)
	}
	threads, err := c.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) != 1 || threads[0].Latest != first.ID || threads[0].GraphName != "g" {
		t.Fatalf("thread summary after a rejected Put: %+v", threads)
	}
}
