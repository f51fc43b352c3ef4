package ephemeral_test

import (
	"context"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/server/ephemeral"
)

// headCounter counts the heads its durable checkpointer reads.
type headCounter struct {
	*memory.Checkpointer
	heads int
}

func (h *headCounter) Head(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	h.heads++
	return h.Checkpointer.Head(ctx, threadID)
}

// A head handed over with the context answers the first read of its thread
// only, and never once the thread has been written through the context.
func TestWithHead(t *testing.T) {
	first := checkpoint.NewID()
	for _, tt := range []struct {
		name string
		// before runs through the context before the head is read.
		before    func(ctx context.Context, c *ephemeral.Checkpointer)
		thread    string
		wantReads int // reads of the durable checkpointer by two Heads
		wantFirst string
	}{
		{"first read answered", nil, "t", 1, first},
		{"other thread read", nil, "other", 2, ""},
		{"forgotten after a put", func(ctx context.Context, c *ephemeral.Checkpointer) {
			cp := checkpoint.Checkpoint{ThreadID: "t", ID: checkpoint.NewID(), ParentID: first, GraphName: "g", Versions: map[string]int64{"x": 1}, Source: checkpoint.SourceLoop}
			if err := c.Put(ctx, cp, nil); err != nil {
				t.Fatal(err)
			}
		}, "t", 2, ""},
		{"forgotten after a latest", func(ctx context.Context, c *ephemeral.Checkpointer) {
			if _, err := c.Latest(ctx, "t"); err != nil {
				t.Fatal(err)
			}
		}, "t", 2, first},
	} {
		t.Run(tt.name, func(t *testing.T) {
			durable := &headCounter{Checkpointer: memory.New()}
			c := ephemeral.New(durable)
			put(t, c, "t", first, "", `"a"`)
			put(t, c, "other", checkpoint.NewID(), "", `"b"`)
			head, err := c.Head(context.Background(), "t")
			if err != nil {
				t.Fatal(err)
			}
			durable.heads = 0
			ctx := ephemeral.WithHead(context.Background(), "t", head)
			if tt.before != nil {
				tt.before(ctx, c)
			}
			var ids []string
			for range 2 {
				snap, err := c.Head(ctx, tt.thread)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, snap.ID)
			}
			if durable.heads != tt.wantReads {
				t.Errorf("two heads read the durable checkpointer %d times, want %d", durable.heads, tt.wantReads)
			}
			if tt.wantFirst != "" && ids[0] != tt.wantFirst {
				t.Errorf("first head %s, want %s", ids[0], tt.wantFirst)
			}
			if tt.wantFirst == "" && ids[0] == first {
				t.Errorf("first head of %q is the one handed over for %q", tt.thread, "t")
			}
		})
	}
}
