package badger

import (
	"context"
	"encoding/json"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// The presence records never lose an entry whose keys are stored: across a
// transaction that adds while another removes, across a failed commit, and
// across reopening the database.
func TestPresence(t *testing.T) {
	p := newPresence()
	p.add("a", 0)
	ok, seen := p.has([]byte("a"))
	if !ok {
		t.Fatal("entry added but not present")
	}
	p.remove("a", false, seen)
	if ok, _ := p.has([]byte("a")); !ok {
		t.Fatal("entry removed while the transaction that added it is open")
	}
	p.release("a")
	p.add("a", 0) // added again after the deleting transaction looked
	p.release("a")
	p.remove("a", false, seen)
	if ok, _ := p.has([]byte("a")); !ok {
		t.Fatal("entry removed though a key was added after the delete looked")
	}
	_, seen = p.has([]byte("a"))
	p.remove("a", false, seen)
	if ok, _ := p.has([]byte("a")); ok {
		t.Fatal("entry not removed after its keys were deleted")
	}
	p.add("x/1", 0)
	p.add("x/2", 0)
	p.add("y/1", 0)
	for _, e := range []string{"x/1", "x/2", "y/1"} {
		p.release(e)
	}
	p.remove("x/", true, p.now())
	for e, want := range map[string]bool{"x/1": false, "x/2": false, "y/1": true} {
		if ok, _ := p.has([]byte(e)); ok != want {
			t.Errorf("after removing x/: %s present %v, want %v", e, ok, want)
		}
	}
}

// A bound only goes down to a version read while nothing was added, and
// up with every add.
func TestPresenceBound(t *testing.T) {
	p := newPresence()
	p.add("s", 7)
	_, _, seen := p.bound([]byte("s"))
	p.learn("s", 3, seen)
	if b, _, _ := p.bound([]byte("s")); b != 7 {
		t.Fatalf("bound %d lowered while the adding transaction is open", b)
	}
	p.release("s")
	_, _, seen = p.bound([]byte("s"))
	p.add("s", 9) // a snapshot written after the read
	p.release("s")
	p.learn("s", 3, seen)
	if b, _, _ := p.bound([]byte("s")); b != 9 {
		t.Fatalf("bound %d, want 9: raised by the add, not lowered by an older read", b)
	}
	_, _, seen = p.bound([]byte("s"))
	p.learn("s", 4, seen)
	if b, _, _ := p.bound([]byte("s")); b != 4 {
		t.Fatalf("bound %d, want 4 after a read with nothing added", b)
	}
}

// Pending writes and snapshots stored before the database was opened are
// found: a Put after reopening discards the parent's writes, and a Put that
// overwrites a snapshot's version drops the snapshot.
func TestPresenceAfterReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cp := db.Checkpointer()
	first := checkpoint.Checkpoint{ThreadID: "t", ID: checkpoint.NewID(), GraphName: "g", Versions: map[string]int64{"l": 1},
		Next: []checkpoint.Task{{ID: "a", Node: "a"}}}
	if err := cp.Put(ctx, first, []checkpoint.Blob{{Field: "l", Version: 1, Data: json.RawMessage(`[1]`)}}); err != nil {
		t.Fatal(err)
	}
	if err := cp.PutWrites(ctx, "t", first.ID, checkpoint.PendingWrite{TaskID: "a", Node: "a", Update: json.RawMessage(`{}`), Kind: "update"}); err != nil {
		t.Fatal(err)
	}
	err = db.updateOnce(func(txn *bdg.Txn) error {
		return txn.Set(snapshotKey("t", "l"), append([]byte{1, 0, 0, 0, 0}, 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	if db, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cp = db.Checkpointer()
	second := checkpoint.Checkpoint{ThreadID: "t", ID: checkpoint.NewID(), ParentID: first.ID, Step: 1, GraphName: "g", Versions: map[string]int64{"l": 1}}
	// A blob at the snapshot's version: the Put must drop the snapshot.
	if err := cp.Put(ctx, second, []checkpoint.Blob{{Field: "l", Version: 1, Data: json.RawMessage(`[2]`)}}); err != nil {
		t.Fatal(err)
	}
	snap, err := cp.Get(ctx, "t", first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Pending) != 0 {
		t.Errorf("the parent's pending writes survived its child's Put after reopening: %+v", snap.Pending)
	}
	err = db.view(func(txn *bdg.Txn) error {
		_, err := txn.Get(snapshotKey("t", "l"))
		if err == nil {
			t.Error("the snapshot at the overwritten version survived the Put after reopening")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
