package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/core"
)

// TestLatestSavesSnapshotsOfLongChains checks that a read of the newest
// state that walked a long chain saves the field's snapshot, and that later
// reads walk only the deltas written since.
func TestLatestSavesSnapshotsOfLongChains(t *testing.T) {
	d := &driver{threads: map[string]*thread{}}
	c := core.New(d, core.Options{})
	ctx := context.Background()
	put := func(v int64) {
		t.Helper()
		b := checkpoint.Blob{Field: "msgs", Version: v, Data: json.RawMessage(fmt.Sprintf(`["m%d"]`, v))}
		if v > 1 {
			b.Base = v - 1
		}
		cp := checkpoint.Checkpoint{ThreadID: "t", ID: fmt.Sprintf("%08d", v), Step: int(v), Versions: map[string]int64{"msgs": v}}
		if err := c.Put(ctx, cp, []checkpoint.Blob{b}); err != nil {
			t.Fatal(err)
		}
	}
	walked := func(v int64) int {
		t.Helper()
		chains, err := tx{d}.Chains("t", map[string]int64{"msgs": v})
		if err != nil {
			t.Fatal(err)
		}
		return len(chains["msgs"]) - 1
	}
	for v := int64(1); v <= 100; v++ {
		put(v)
	}
	if n := walked(100); n != 99 {
		t.Fatalf("before any Latest, a read walked %d deltas, want 99", n)
	}
	if _, err := c.Latest(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	for v := int64(101); v <= 110; v++ {
		put(v)
	}
	if n := walked(110); n != 10 {
		t.Errorf("after a Latest at version 100 and 10 appends, a read walked %d deltas, want 10", n)
	}
	if n := walked(60); n != 59 {
		t.Errorf("a read of version 60 walked %d deltas, want 59", n)
	}
}
