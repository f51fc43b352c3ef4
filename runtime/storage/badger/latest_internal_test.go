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

// TestLatestFromWhatThePutWrote checks that the newest checkpoint a Put
// wrote is answered from the DB's heads, and only while it is the newest
// stored: after a rollback, a delete and a fork Latest reads the database
// again, and a Latest that runs while Puts of the thread commit never names
// a checkpoint whose values cannot be read, nor an older one than it saw.
func TestLatestFromWhatThePutWrote(t *testing.T) {
	db, err := Open(t.TempDir(), Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	cp := db.Checkpointer()
	parent := ""
	for step := 1; step <= 3; step++ {
		id, err := putStep(ctx, cp, parent, step, map[string]int64{"n": int64(step)}, "n")
		if err != nil {
			t.Fatal(err)
		}
		parent = id
	}
	first, err := cp.History(ctx, "t", checkpoint.ListOptions{})
	if err != nil || len(first) != 3 {
		t.Fatalf("History = %d checkpoints, %v", len(first), err)
	}
	latest := func(want string, known bool) {
		t.Helper()
		e, ok := db.heads.entry("t")
		if got := ok && e.record != nil; got != known {
			t.Errorf("newest record known = %v, want %v", got, known)
		}
		snap, err := cp.Latest(ctx, "t")
		if want == "" {
			if !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("Latest = %v, %v; want ErrNotFound", snap, err)
			}
			return
		}
		if err != nil || snap.ID != want {
			t.Fatalf("Latest = %v, %v; want %s", snap, err, want)
		}
	}
	latest(parent, true)

	oldest := first[len(first)-1].ID
	if err := cp.Rollback(ctx, "t", oldest); err != nil {
		t.Fatal(err)
	}
	latest(oldest, false)

	forked, err := cp.Fork(ctx, "t", oldest, "t2")
	if err != nil {
		t.Fatal(err)
	}
	if snap, err := cp.Latest(ctx, "t2"); err != nil || snap.ID != forked.ID {
		t.Fatalf("Latest of the fork = %v, %v; want %s", snap, err, forked.ID)
	}

	// Puts and Latests of one thread at once.
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(done)
		p := oldest
		for step := 2; step < 200; step++ {
			id, err := putStep(ctx, cp, p, step, map[string]int64{"n": int64(step)}, "n")
			if err != nil {
				errs <- err
				return
			}
			p = id
		}
	}()
	seen := ""
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		snap, err := cp.Latest(ctx, "t")
		if err != nil {
			t.Fatalf("Latest while Puts commit: %v", err)
		}
		if snap.ID < seen {
			t.Fatalf("Latest went back from %s to %s", seen, snap.ID)
		}
		seen = snap.ID
		if _, err := cp.Get(ctx, "t", snap.ID); err != nil {
			t.Fatalf("Get of the checkpoint Latest named: %v", err)
		}
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	latest(seen, true)

	if err := cp.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	latest("", false)
}
