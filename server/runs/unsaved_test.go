package runs_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/server/runs"
)

// failingStore refuses every Put while full is set, as a full disk does.
type failingStore struct {
	store.Store
	full atomic.Bool
}

var errDiskFull = errors.New("disk is nearly full")

func (s *failingStore) Put(ctx context.Context, ns []string, key string, value map[string]any, opts store.PutOptions) error {
	if s.full.Load() {
		return errDiskFull
	}
	return s.Store.Put(ctx, ns, key, value, opts)
}

// TestRecordWrittenOnceTheStoreTakesWritesAgain: a run that ends while its
// record cannot be written is not left "running" on record. Reads show its
// final status at once, and the record is stored once writes succeed again,
// so a restart does not take the run up again.
func TestRecordWrittenOnceTheStoreTakesWritesAgain(t *testing.T) {
	db := openDB(t)
	st := &failingStore{Store: db.Store()}
	h := newHarness(t, db, runs.Options{Store: st})
	a := h.submit("t", "")
	c := h.next()
	st.full.Store(true)
	c.release <- completed()
	rec := waitDone(t, a)
	if rec.Status != runs.StatusSuccess {
		t.Fatalf("run ended %q, want success", rec.Status)
	}
	if got := storedStatus(t, h.m, "t", rec.RunID); got != runs.StatusSuccess {
		t.Fatalf("listed while the store refuses writes: %q, want success", got)
	}
	if got, err := h.m.Load(context.Background(), "t", rec.RunID); err != nil || got.Status != runs.StatusSuccess {
		t.Fatalf("loaded while the store refuses writes: %q %v, want success", got.Status, err)
	}
	if it, err := db.Store().Get(context.Background(), append(append([]string(nil), runs.Namespace...), "t"), rec.RunID); err != nil || it.Value["status"] == runs.StatusSuccess {
		t.Fatalf("the store already holds the final record (%v, %v): the write was meant to fail", it, err)
	}
	st.full.Store(false)
	deadline := time.Now().Add(deadlock)
	for {
		it, err := db.Store().Get(context.Background(), append(append([]string(nil), runs.Namespace...), "t"), rec.RunID)
		if err == nil && it.Value["status"] == runs.StatusSuccess {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the final record was never stored: %v %v", it, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A restart finds nothing to take up.
	h2 := newHarness(t, db, runs.Options{})
	if n, err := h2.m.Recover(context.Background(), false); err != nil || n != 0 {
		t.Fatalf("recover after the record was stored: %d runs, %v; want 0", n, err)
	}
}
