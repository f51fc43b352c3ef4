package ephemeral_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/server/ephemeral"
)

// With no temporary thread, the checkpointer is its durable one.
func TestConformanceDurable(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Checkpointer { return ephemeral.New(memory.New()) })
}

// put writes a checkpoint with one field value on a thread.
func put(t *testing.T, c checkpoint.Checkpointer, thread, id, parent string, value string) {
	t.Helper()
	cp := checkpoint.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, GraphName: "g", Versions: map[string]int64{"x": 1}, Source: checkpoint.SourceLoop}
	if parent != "" {
		cp.Versions["x"] = 2
	}
	blob := checkpoint.Blob{Field: "x", Version: cp.Versions["x"], Data: json.RawMessage(value)}
	if err := c.Put(context.Background(), cp, []checkpoint.Blob{blob}); err != nil {
		t.Fatalf("put %s/%s: %v", thread, id, err)
	}
}

func TestTemporaryThreadsStayInMemory(t *testing.T) {
	ctx := context.Background()
	durable := memory.New()
	c := ephemeral.New(durable)
	c.Temporary("tmp")
	child := checkpoint.ChildThreadID("tmp", "sub:1")
	id1, id2 := checkpoint.NewID(), checkpoint.NewID()
	put(t, c, "tmp", id1, "", `"a"`)
	put(t, c, "tmp", id2, id1, `"b"`)
	put(t, c, child, checkpoint.NewID(), "", `"c"`)
	put(t, c, "kept", checkpoint.NewID(), "", `"d"`)

	for _, tt := range []struct {
		thread  string
		durable bool
		want    string
	}{
		{"tmp", false, `"b"`},
		{child, false, `"c"`},
		{"kept", true, `"d"`},
	} {
		if got := c.IsTemporary(tt.thread); got == tt.durable {
			t.Errorf("IsTemporary(%q) = %v", tt.thread, got)
		}
		snap, err := c.Latest(ctx, tt.thread)
		if err != nil {
			t.Fatalf("latest of %q: %v", tt.thread, err)
		}
		if string(snap.Values["x"]) != tt.want {
			t.Errorf("%q: x = %s, want %s", tt.thread, snap.Values["x"], tt.want)
		}
		head, err := c.Head(ctx, tt.thread)
		if err != nil || head.ID != snap.ID {
			t.Errorf("head of %q: %v, %v; want checkpoint %s", tt.thread, head, err, snap.ID)
		}
		_, err = durable.Latest(ctx, tt.thread)
		if tt.durable != (err == nil) {
			t.Errorf("%q in the durable checkpointer: %v, want it there: %v", tt.thread, err, tt.durable)
		}
	}
	hist, err := c.History(ctx, "tmp", checkpoint.ListOptions{})
	if err != nil || len(hist) != 2 {
		t.Fatalf("history of the temporary thread: %d checkpoints, %v; want 2", len(hist), err)
	}
	threads, err := c.Threads(ctx)
	if err != nil || len(threads) != 1 || threads[0].ThreadID != "kept" {
		t.Fatalf("threads = %+v, %v; want only the durable thread", threads, err)
	}

	if _, err := c.Fork(ctx, "tmp", id2, "copy"); err == nil || !strings.Contains(err.Error(), "temporary thread of a stateless run") {
		t.Errorf("fork out of a temporary thread: %v, want a refusal", err)
	}
	if err := c.Rollback(ctx, "tmp", id1); err != nil {
		t.Fatalf("rollback of the temporary thread: %v", err)
	}
	if snap, err := c.Latest(ctx, "tmp"); err != nil || string(snap.Values["x"]) != `"a"` {
		t.Fatalf("after rollback: %v, %v; want x = \"a\"", snap, err)
	}

	if err := c.DeleteThread(ctx, "tmp"); err != nil {
		t.Fatal(err)
	}
	for _, th := range []string{"tmp", child} {
		if c.IsTemporary(th) {
			t.Errorf("%q is still temporary after the thread's delete", th)
		}
		if _, err := c.Latest(ctx, th); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("latest of %q after delete: %v, want ErrNotFound", th, err)
		}
	}
	if _, err := c.Latest(ctx, "kept"); err != nil {
		t.Errorf("the durable thread after deleting the temporary one: %v", err)
	}
}

// A syncing durable checkpointer is synced through the router.
type syncCounter struct {
	checkpoint.Checkpointer
	n int
}

func (s *syncCounter) Sync(context.Context) error { s.n++; return nil }

func TestSyncReachesTheDurableCheckpointer(t *testing.T) {
	d := &syncCounter{Checkpointer: memory.New()}
	c := ephemeral.New(d)
	if err := c.Sync(context.Background()); err != nil || d.n != 1 {
		t.Fatalf("sync: %v, durable synced %d times; want once", err, d.n)
	}
	if err := ephemeral.New(memory.New()).Sync(context.Background()); err != nil {
		t.Fatalf("sync without a durable Sync: %v", err)
	}
}
