package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
)

// TestReadsSchemasOfEarlierVersions loads the rows written by the
// checkpointer that preceded package checkpoint/core (testdata/v1, see
// runtime/storage/testdata/generate.go) into a new schema and checks that
// everything reads as it did then, that the field snapshot saved then is
// used, and that the thread goes on from there.
func TestReadsSchemasOfEarlierVersions(t *testing.T) {
	ctx := context.Background()
	db, conn, schema := openWithConn(t)
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
	if _, err := c.Latest(ctx, "chat"); err != nil {
		t.Fatalf("Latest without a blob below the snapshot saved by the earlier version: %v", err)
	}
	checkpointtest.ContinueFixture(t, c)
}
