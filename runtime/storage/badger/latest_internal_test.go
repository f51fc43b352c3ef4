package badger

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// TestLatestFollowsTheSummaryAndFallsBack checks both ways Latest finds a
// thread's newest checkpoint: through the thread summary, and by scanning
// when the summary names a checkpoint that is not there.
func TestLatestFollowsTheSummaryAndFallsBack(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	cp := db.Checkpointer()
	put := func(id string, step int) {
		t.Helper()
		err := cp.Put(ctx, checkpoint.Checkpoint{ThreadID: "t", ID: id, Step: step, Versions: map[string]int64{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	put("00000001-a", 1)
	put("00000002-b", 2)
	tests := []struct {
		name, summary, want string
	}{
		{"summary", "", "00000002-b"},
		{"summary names a missing checkpoint", "00000009-z", "00000002-b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.summary != "" {
				data, _ := json.Marshal(checkpoint.ThreadInfo{ThreadID: "t", Latest: tt.summary})
				if err := db.updateOnce(func(txn *bdg.Txn) error { return txn.Set(threadPrefix(kindThread, "t"), data) }); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := cp.Latest(ctx, "t")
			if err != nil || snap.ID != tt.want {
				t.Fatalf("Latest = %v, %v; want %s", snap, err, tt.want)
			}
		})
	}
	if _, err := cp.Latest(ctx, "other"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Latest of an unknown thread: %v", err)
	}
}
