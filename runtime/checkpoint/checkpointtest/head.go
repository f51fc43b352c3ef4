package checkpointtest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// testHead checks checkpoint.HeadReader, for backends that implement it: the
// newest checkpoint and its pending writes as Latest returns them, without
// values, following the thread as it moves on, is rolled back and deleted.
func testHead(t *testing.T, c checkpoint.Checkpointer) {
	hr, ok := c.(checkpoint.HeadReader)
	if !ok {
		t.Skip("the backend does not implement checkpoint.HeadReader")
	}
	ctx := context.Background()
	if _, err := hr.Head(ctx, "nobody"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Head of an unknown thread: %v, want ErrNotFound", err)
	}
	th := newThread("h")
	first := th.put(t, c, change{field: "a", full: 1}, change{field: "msgs", append: []any{"x"}})
	th.put(t, c, change{field: "msgs", append: []any{"y"}})
	w := checkpoint.PendingWrite{TaskID: "n", Node: "n", Kind: "update", Update: json.RawMessage(`{"a":2}`)}
	if err := c.PutWrites(ctx, "h", th.last, w); err != nil {
		t.Fatal(err)
	}
	same := func(when string) {
		t.Helper()
		head, err := hr.Head(ctx, "h")
		if err != nil {
			t.Fatalf("%s: Head: %v", when, err)
		}
		latest, err := c.Latest(ctx, "h")
		if err != nil {
			t.Fatalf("%s: Latest: %v", when, err)
		}
		if len(head.Values) != 0 {
			t.Errorf("%s: Head has values %v", when, keys(head.Values))
		}
		if !reflect.DeepEqual(normalize(t, head.Checkpoint), normalize(t, latest.Checkpoint)) {
			t.Errorf("%s: Head checkpoint =\n%+v\nLatest =\n%+v", when, head.Checkpoint, latest.Checkpoint)
		}
		if len(head.Pending) != len(latest.Pending) {
			t.Fatalf("%s: Head pending = %+v, Latest pending = %+v", when, head.Pending, latest.Pending)
		}
		for i := range head.Pending {
			h, l := head.Pending[i], latest.Pending[i]
			if h.TaskID != l.TaskID || h.Kind != l.Kind || !jsonEqual(h.Update, l.Update) {
				t.Errorf("%s: Head pending %d = %+v, Latest's = %+v", when, i, h, l)
			}
		}
	}
	same("with a pending write")
	if head, _ := hr.Head(ctx, "h"); head == nil || head.ID != th.last || len(head.Pending) != 1 {
		t.Fatalf("Head = %+v, want checkpoint %s with 1 pending write", head, th.last)
	}
	next := th.put(t, c, change{field: "a", full: 3})
	if head, _ := hr.Head(ctx, "h"); head == nil || head.ID != next.ID || head.Versions["a"] != 2 {
		t.Errorf("Head after a Put = %+v, want checkpoint %s with a@2", head, next.ID)
	}
	same("after a Put")
	if err := c.Rollback(ctx, "h", first.ID); err != nil {
		t.Fatal(err)
	}
	if head, _ := hr.Head(ctx, "h"); head == nil || head.ID != first.ID {
		t.Errorf("Head after Rollback = %+v, want checkpoint %s", head, first.ID)
	}
	same("after Rollback")
	if err := c.DeleteThread(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := hr.Head(ctx, "h"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Head of a deleted thread: %v, want ErrNotFound", err)
	}
}
