package badger

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
)

// TestReadsDataDirectoriesOfEarlierVersions opens a data directory written
// by the checkpointer that preceded package checkpoint/core (testdata/v1,
// see runtime/storage/testdata/generate.go) and checks that everything
// reads as it did then, that the field snapshot saved then is used, and
// that the thread goes on from there.
func TestReadsDataDirectoriesOfEarlierVersions(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/v1/data")); err != nil {
		t.Fatal(err)
	}
	db, err := Open(dir, Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := db.Checkpointer()
	checkpointtest.CheckFixture(t, c, "testdata/v1/expected.json")

	// chat's messages have a chain of 40 deltas, and a snapshot at
	// version 40: reading version 41 walks one.
	if n := walkedField(t, db, "chat", "messages", 41); n != 1 {
		t.Errorf("reading chat's messages at 41 walked %d deltas, want 1 (from the snapshot at 40)", n)
	}
	ctx := context.Background()
	latest, err := c.Latest(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	next := latest.Checkpoint
	next.ID, next.ParentID, next.Step, next.Interrupts, next.Next = checkpoint.NewID(), latest.ID, latest.Step+1, nil, nil
	next.CreatedAt = latest.CreatedAt.Add(1)
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
