package badger

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"
)

// TestOracle checks the guarantees of the DB's timestamps: a transaction
// sees every commit that returned before it began, even while commits of
// other writers are still being written; two transactions that read and
// write the same key conflict whichever of them got the lower commit
// timestamp; and the discard timestamp stays at or below every open read.
func TestOracle(t *testing.T) {
	db, err := Open(t.TempDir(), Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	t.Run("sees what committed before it began", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					key := []byte(fmt.Sprintf("x/%d", w))
					val := []byte(fmt.Sprint(i))
					if err := db.updateOnce(func(txn *bdg.Txn) error { return txn.Set(key, val) }); err != nil {
						errs <- err
						return
					}
					err := db.view(func(txn *bdg.Txn) error {
						item, err := txn.Get(key)
						if err != nil {
							return err
						}
						got, err := item.ValueCopy(nil)
						if err == nil && string(got) != string(val) {
							err = fmt.Errorf("writer %d read %s after committing %s", w, got, val)
						}
						return err
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})

	t.Run("read-write conflicts", func(t *testing.T) {
		for _, firstLower := range []bool{true, false} {
			key := []byte("x/conflict")
			a, b := db.begin(true), db.begin(true)
			for _, txn := range []*bdg.Txn{a, b} {
				if _, err := txn.Get(key); err != nil && !errors.Is(err, bdg.ErrKeyNotFound) {
					t.Fatal(err)
				}
				if err := txn.Set(key, []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			// The transaction that commits first gets the higher timestamp
			// when firstLower is false.
			tsA, tsB := db.orc.commitTs(), db.orc.commitTs()
			if !firstLower {
				tsA, tsB = tsB, tsA
			}
			errA := a.CommitAt(tsA, nil)
			db.orc.done(tsA)
			errB := b.CommitAt(tsB, nil)
			db.orc.done(tsB)
			db.discard(a)
			db.discard(b)
			if errA != nil || !errors.Is(errB, bdg.ErrConflict) {
				t.Errorf("first commit at the lower timestamp %v: errors %v and %v, want nil and a conflict", firstLower, errA, errB)
			}
		}
	})

	t.Run("discard stays below open reads", func(t *testing.T) {
		open := db.begin(false)
		for i := range 10 {
			if err := db.updateOnce(func(txn *bdg.Txn) error { return txn.Set([]byte("x/d"), []byte(fmt.Sprint(i))) }); err != nil {
				t.Fatal(err)
			}
		}
		db.orc.mu.Lock()
		discard := db.orc.discard
		db.orc.mu.Unlock()
		if discard > open.ReadTs() {
			t.Errorf("discard timestamp %d above the open read at %d", discard, open.ReadTs())
		}
		db.discard(open)
		db.orc.mu.Lock()
		discard, applied := db.orc.discard, db.orc.applied
		db.orc.mu.Unlock()
		if discard != applied {
			t.Errorf("with nothing open, discard timestamp %d, want %d (everything applied)", discard, applied)
		}
	})
}
