package checkpointtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// testChildren checks that a thread's subgraph threads are listed at every
// depth and no other thread's: among neighbours whose ids sort next to the
// child range (one byte below and above the separator, longer and shorter
// ids, ids of 127 and 128 bytes and more whose lengths encode differently).
func testChildren(t *testing.T, c checkpoint.Checkpointer) {
	ctx := context.Background()
	mid, long := strings.Repeat("M", 120), strings.Repeat("L", 130)
	roots := []string{"a", "a\x1e", "a ", "a!", "aa", "b", mid, mid + "x", long, long + "x"}
	var stored []string
	for _, root := range roots {
		stored = append(stored, root,
			checkpoint.ChildThreadID(root, "n:1"),
			checkpoint.ChildThreadID(checkpoint.ChildThreadID(root, "n:1"), "m:2"),
			checkpoint.ChildThreadID(root, "p:3"))
	}
	// Children of mid whose ids are 127, 128 and 300 bytes long: one length
	// takes one byte of a uvarint, the others two.
	for _, size := range []int{127, 128, 300} {
		ns := "n:" + strings.Repeat("t", size-len(mid)-3)
		stored = append(stored, checkpoint.ChildThreadID(mid, ns))
	}
	for _, id := range stored {
		newThread(id).put(t, c, change{field: "v", full: id})
	}
	all, err := c.Threads(ctx)
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	if len(all) != len(stored) {
		t.Fatalf("Threads lists %d threads, want %d", len(all), len(stored))
	}
	for _, parent := range append(slices.Clone(stored), "unknown", "a\x1fn:1\x1fm:2", "a\x1fn") {
		var want []string
		for _, ti := range all {
			if strings.HasPrefix(ti.ThreadID, parent+checkpoint.NamespaceSep) {
				want = append(want, ti.ThreadID)
			}
		}
		slices.Sort(want)
		got, err := checkpoint.ChildThreads(ctx, c, parent)
		if err != nil {
			t.Fatalf("ChildThreads(%q): %v", parent, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("ChildThreads(%q) = %q, want %q", parent, got, want)
		}
		if cl, ok := c.(checkpoint.ChildLister); ok {
			got, err := cl.Children(ctx, parent)
			if err != nil {
				t.Fatalf("Children(%q): %v", parent, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("Children(%q) = %q, want %q (ascending)", parent, got, want)
			}
		}
	}
	if got, _ := checkpoint.ChildThreads(ctx, c, "a"); len(got) != 3 {
		t.Errorf("thread a has %d subgraph threads, want 3: %q", len(got), got)
	}
	if got, _ := checkpoint.ChildThreads(ctx, c, mid); len(got) != 6 {
		t.Errorf("thread %s has %d subgraph threads, want 6: %q", mid, len(got), got)
	}

	// Deleting a tree leaves its neighbours alone.
	if err := checkpoint.DeleteThreadTree(ctx, c, "a"); err != nil {
		t.Fatalf("DeleteThreadTree(a): %v", err)
	}
	left, err := c.Threads(ctx)
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	if len(left) != len(stored)-4 {
		t.Errorf("after deleting a's tree %d threads are left, want %d", len(left), len(stored)-4)
	}
	for _, ti := range left {
		if root, _ := checkpoint.SplitThreadID(ti.ThreadID); root == "a" {
			t.Errorf("thread %q of a's tree is left", ti.ThreadID)
		}
	}
	if got, _ := checkpoint.ChildThreads(ctx, c, "a"); len(got) != 0 {
		t.Errorf("thread a has subgraph threads after its deletion: %q", got)
	}
	if got, _ := checkpoint.ChildThreads(ctx, c, "aa"); len(got) != 3 {
		t.Errorf("thread aa has %d subgraph threads after a's deletion, want 3", len(got))
	}
}

// BenchChildren measures listing one thread's subgraph threads among
// stored threads (a quarter of them with a subgraph thread of their own):
// "children" with checkpoint.ChildThreads (by key range when c is a
// ChildLister), "listing" by filtering the listing of every thread, as
// ChildThreads does for a checkpointer that is not one. c must be empty.
func BenchChildren(b *testing.B, c checkpoint.Checkpointer, stored int) {
	ctx := context.Background()
	for i := range stored {
		id := fmt.Sprintf("%08x-seed", i)
		ids := []string{id}
		if i%4 == 0 {
			ids = append(ids, checkpoint.ChildThreadID(id, "sub:"+id))
		}
		for _, thread := range ids {
			cp := checkpoint.Checkpoint{ThreadID: thread, ID: cpID(0, 0), GraphName: "g", Versions: map[string]int64{"v": 1}, Source: "loop", CreatedAt: epoch}
			if err := c.Put(ctx, cp, []checkpoint.Blob{{Field: "v", Version: 1, Data: []byte(`1`)}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	parent := fmt.Sprintf("%08x-seed", stored/2&^3)
	want := []string{checkpoint.ChildThreadID(parent, "sub:"+parent)}
	b.Run("children", func(b *testing.B) {
		for b.Loop() {
			got, err := checkpoint.ChildThreads(ctx, c, parent)
			if err != nil || !slices.Equal(got, want) {
				b.Fatalf("ChildThreads = %q, %v; want %q", got, err, want)
			}
		}
	})
	b.Run("listing", func(b *testing.B) {
		for b.Loop() {
			all, err := c.Threads(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var got []string
			for _, t := range all {
				if checkpoint.IsChildOf(t.ThreadID, parent) {
					got = append(got, t.ThreadID)
				}
			}
			if !slices.Equal(got, want) {
				b.Fatalf("listing = %q, want %q", got, want)
			}
		}
	})
}
