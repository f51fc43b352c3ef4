package badger_test

import (
	"context"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
)

// The puts a context carries are written in the commit of the thread's next
// checkpoint write (Put or PutWrites), into the DB's store, once.
func TestCheckpointCarriesStoreItems(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cp, st := db.Checkpointer(), db.Store()
	ic, ok := cp.(checkpoint.ItemCarrier)
	if !ok || !ic.CarriesItemsOf(st) {
		t.Fatal("the checkpointer does not carry the items of its DB's store")
	}
	other, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ic.CarriesItemsOf(other.Store()) {
		t.Error("the checkpointer claims to carry the items of another DB's store")
	}

	ns := []string{"carried"}
	builds := 0
	carry := &checkpoint.Carry{Thread: "t1", Build: func() []store.BatchPut {
		builds++
		return []store.BatchPut{{Namespace: ns, Key: "k", Value: map[string]any{"n": builds}, Opts: store.PutOptions{Index: []string{}}}}
	}}
	ctx := checkpoint.WithCarry(context.Background(), carry)
	put := func(thread, id, parent string, step int) {
		t.Helper()
		c := checkpoint.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, Step: step, GraphName: "g",
			Versions: map[string]int64{"v": int64(step + 1)}, Source: "loop", CreatedAt: time.Now().UTC()}
		before := db.Stats().Commits
		if err := cp.Put(ctx, c, []checkpoint.Blob{{Field: "v", Version: int64(step + 1), Data: []byte(`1`)}}); err != nil {
			t.Fatal(err)
		}
		if n := db.Stats().Commits - before; n != 1 {
			t.Errorf("put %s/%s: %d commits, want 1", thread, id, n)
		}
	}
	put("t2", checkpoint.NewID(), "", 0) // another thread carries nothing
	if _, err := st.Get(context.Background(), ns, "k"); err == nil {
		t.Fatal("a checkpoint of another thread carried the puts")
	}
	first := checkpoint.NewID()
	put("t1", first, "", 0)
	it, err := st.Get(context.Background(), ns, "k")
	if err != nil {
		t.Fatalf("carried item: %v", err)
	}
	if it.Value["n"] != float64(1) {
		t.Errorf("carried item %v, want n 1", it.Value)
	}
	put("t1", checkpoint.NewID(), first, 1)
	if builds != 1 {
		t.Errorf("the puts were built %d times, want once", builds)
	}
	if carry.Drop() {
		t.Error("Drop reports the written puts pending")
	}
}
