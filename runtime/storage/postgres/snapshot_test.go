package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
)

// TestLatestSavesSnapshotsOfLongChains checks that a cold read of a long
// chain saves the field's snapshot and that later reads of the newest state
// stop there: with a blob below the snapshot deleted behind the
// checkpointer's back, the newest state still reads (and an old version that
// needs the blob does not).
func TestLatestSavesSnapshotsOfLongChains(t *testing.T) {
	ctx := context.Background()
	db, conn, schema := openWithConn(t)
	cp := db.Checkpointer()
	put := func(v int64) {
		t.Helper()
		b := checkpoint.Blob{Field: "msgs", Version: v, Data: json.RawMessage(fmt.Sprintf(`["m%d"]`, v))}
		if v > 1 {
			b.Base = v - 1
		}
		c := checkpoint.Checkpoint{ThreadID: "t", ID: fmt.Sprintf("%08d", v), Step: int(v), Versions: map[string]int64{"msgs": v}}
		if err := cp.Put(ctx, c, []checkpoint.Blob{b}); err != nil {
			t.Fatal(err)
		}
	}
	for v := int64(1); v <= 100; v++ {
		put(v)
	}
	if _, err := cp.Latest(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	var version int64
	if err := conn.QueryRow(ctx, "SELECT version FROM "+schema+".snapshots WHERE thread_id = 't' AND field = 'msgs'").Scan(&version); err != nil || version != 100 {
		t.Fatalf("snapshot of msgs: version %d, %v; want 100", version, err)
	}
	for v := int64(101); v <= 110; v++ {
		put(v)
	}
	if _, err := conn.Exec(ctx, "DELETE FROM "+schema+".blobs WHERE thread_id = 't' AND field = 'msgs' AND version = 10"); err != nil {
		t.Fatal(err)
	}
	l, err := cp.Latest(ctx, "t")
	if err != nil {
		t.Fatalf("Latest with a blob below the snapshot gone: %v", err)
	}
	var items []string
	if err := json.Unmarshal(l.Values["msgs"], &items); err != nil || len(items) != 110 || items[0] != "m1" || items[109] != "m110" {
		t.Errorf("Latest msgs = %v (%v)", items, err)
	}
	if _, err := cp.Get(ctx, "t", fmt.Sprintf("%08d", 50)); err == nil {
		t.Errorf("Get of version 50 succeeded without blob 10: the test does not show what it means to")
	}
}

// openWithConn opens a database in a schema of its own, dropped when the
// test ends, and a connection of the test's own to look behind the
// checkpointer's back; it returns them with the schema's name.
func openWithConn(t *testing.T) (*postgres.DB, *pgx.Conn, string) {
	t.Helper()
	url := os.Getenv(TestEnv)
	if url == "" {
		t.Skipf("$%s is not set", TestEnv)
	}
	ctx := context.Background()
	schema := fmt.Sprintf("gctest_conn_%d_%d", os.Getpid(), schemaSeq.Add(1))
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		conn.Close(ctx)
	})
	return db, conn, schema
}
