package badger

import (
	"context"

	"github.com/graphctl/graphctl/runtime/checkpoint/core"
	"github.com/graphctl/graphctl/runtime/store"
)

var (
	_ core.ItemDriver = (*driver)(nil)
	_ core.ItemWriter = (*tx)(nil)
)

// HoldsItemsOf implements core.ItemDriver: the items of a Store of the same
// DB that embeds nothing (an embedding is made outside any transaction).
func (d *driver) HoldsItemsOf(s store.Store) bool {
	st, ok := s.(*Store)
	return ok && st.d == d.d && st.emb == nil
}

// PutItems implements core.ItemWriter: the items are written as
// Store.PutBatch writes them, in the checkpoint's transaction, which holds
// their locks until it ends. A second call in one transaction reads every
// item it replaces and has the DB forget them.
func (t *tx) PutItems(items []store.BatchPut) error {
	if !t.room {
		if err := t.d.space.room(); err != nil {
			return err
		}
		t.room = true
	}
	s := &Store{d: t.d}
	now := t.d.now().UTC()
	ps := make([]putItem, len(items))
	for i, it := range items {
		if it.Delete {
			ps[i] = putItem{namespace: it.Namespace, key: it.Key, k: itemKey(it.Namespace, it.Key), delete: true}
			continue
		}
		p, err := s.prepare(context.Background(), it, now)
		if err != nil {
			return err
		}
		ps[i] = p
	}
	keys := itemKeys(ps)
	first := t.itemUnlock == nil
	if first {
		t.itemUnlock = t.d.itemLocks.lock(keys)
	} else {
		for _, k := range keys {
			t.d.items.forget(k)
		}
	}
	facts, err := s.writeItems(t.x(), ps, now, first && !repeats(keys), true, &t.vlog)
	if err != nil {
		return err
	}
	if !first {
		facts = nil // forgotten again once the transaction ends
	}
	t.items = append(t.items, itemWrite{ps, facts})
	return nil
}

// itemWrite is a PutItems of a transaction: its items, and what
// knownItems is to keep of them once the transaction commits (nil: they
// are forgotten).
type itemWrite struct {
	ps    []putItem
	facts []itemFacts
}
