package badger

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/store"
)

func TestNearlyFullDiskRefusesWritesNotReadsOrDeletes(t *testing.T) {
	if _, err := freeBytes(t.TempDir()); err != nil {
		t.Skipf("free space unknown here: %v", err)
	}
	// A reserve larger than any disk: opening is refused with a clear error.
	if _, err := Open(t.TempDir(), Options{MinFree: 1 << 62}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("open with a reserve above the free space: %v, want ErrDiskFull", err)
	}
	d, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	cp := d.Checkpointer()
	put := func(id string, step int) error {
		c := checkpoint.Checkpoint{ThreadID: "t", ID: id, Step: step, GraphName: "g", Versions: map[string]int64{"a": int64(step + 1)}, Source: "loop"}
		return cp.Put(ctx, c, []checkpoint.Blob{{Field: "a", Version: int64(step + 1), Data: json.RawMessage(`1`)}})
	}
	if err := put(checkpoint.NewID(), 0); err != nil {
		t.Fatal(err)
	}
	// The disk fills up.
	d.space.min = 1 << 62
	d.space.checked.Store(0)
	if err := put(checkpoint.NewID(), 1); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("checkpoint write on a full disk: %v, want ErrDiskFull", err)
	}
	if err := d.Store().Put(ctx, []string{"ns"}, "k", map[string]any{"v": 1}, store.PutOptions{}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("store write on a full disk: %v, want ErrDiskFull", err)
	}
	if _, err := cp.Latest(ctx, "t"); err != nil {
		t.Fatalf("read on a full disk: %v", err)
	}
	if err := cp.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("delete on a full disk (it frees space): %v", err)
	}
	// Space is freed: writes work again.
	d.space.min = DefaultMinFree
	d.space.checked.Store(0)
	if err := put(checkpoint.NewID(), 0); err != nil {
		t.Fatalf("write once space is back: %v", err)
	}
}
