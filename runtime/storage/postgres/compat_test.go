package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
)

// TestReadsSchemasOfEarlierVersions loads the rows written by the
// checkpointer that preceded package checkpoint/core (testdata/v1, see
// runtime/storage/testdata/generate.go) into a new schema and checks that
// everything reads as it did then, that the field snapshot saved then is
// used, and that the thread goes on from there.
func TestReadsSchemasOfEarlierVersions(t *testing.T) {
	url := os.Getenv(TestEnv)
	if url == "" {
		t.Skipf("$%s is not set", TestEnv)
	}
	ctx := context.Background()
	schema := fmt.Sprintf("gctest_compat_%d_%d", os.Getpid(), schemaSeq.Add(1))
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		conn.Close(ctx)
	})
	data, err := os.ReadFile("testdata/v1/tables.json")
	if err != nil {
		t.Fatal(err)
	}
	var tables map[string][]map[string]any
	if err := json.Unmarshal(data, &tables); err != nil {
		t.Fatal(err)
	}
	for table, rows := range tables {
		for _, row := range rows {
			for col, v := range row {
				if b, ok := v.(map[string]any); ok {
					row[col] = `\x` + b["hex"].(string)
				}
			}
			js, _ := json.Marshal(row)
			q := fmt.Sprintf("INSERT INTO %[1]s.%[2]s SELECT * FROM jsonb_populate_record(NULL::%[1]s.%[2]s, $1::jsonb)", schema, table)
			if _, err := conn.Exec(ctx, q, js); err != nil {
				t.Fatalf("load %s row %s: %v", table, js, err)
			}
		}
	}
	c := db.Checkpointer()
	checkpointtest.CheckFixture(t, c, "testdata/v1/expected.json")

	// chat's messages have a chain of 40 deltas and a snapshot at version
	// 40: with a blob below it gone, the newest state still reads.
	if _, err := conn.Exec(ctx, "DELETE FROM "+schema+".blobs WHERE thread_id = 'chat' AND field = 'messages' AND version = 5"); err != nil {
		t.Fatal(err)
	}
	latest, err := c.Latest(ctx, "chat")
	if err != nil {
		t.Fatalf("Latest without a blob below the snapshot saved by the earlier version: %v", err)
	}
	next := latest.Checkpoint
	next.ID, next.ParentID, next.Step, next.Interrupts, next.Next = checkpoint.NewID(), latest.ID, latest.Step+1, nil, nil
	next.CreatedAt = latest.CreatedAt.Add(1000)
	next.Versions = map[string]int64{"messages": 42, "count": 42, "model": 1}
	blobs := []checkpoint.Blob{
		{Field: "messages", Version: 42, Base: 41, Data: json.RawMessage(`[{"role":"user","content":"the answer"}]`)},
		{Field: "count", Version: 42, Data: json.RawMessage(`42`)},
	}
	if err := c.Put(ctx, next, blobs); err != nil {
		t.Fatalf("Put on a thread of an earlier version: %v", err)
	}
	after, err := c.Latest(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]string
	if err := json.Unmarshal(after.Values["messages"], &msgs); err != nil || len(msgs) != 42 || msgs[0]["content"] != "message 1" || msgs[41]["content"] != "the answer" {
		t.Errorf("messages after a Put = %d items (%v): %s", len(msgs), err, after.Values["messages"])
	}
	if after.ID != next.ID || len(after.Pending) != 0 {
		t.Errorf("Latest after a Put = %s with %d pending writes, want %s with none", after.ID, len(after.Pending), next.ID)
	}
}
