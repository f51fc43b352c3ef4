package badger

import (
	"context"
	"fmt"

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
// Store.PutBatch writes them, in the checkpoint's transaction.
func (t *tx) PutItems(items []store.BatchPut) error {
	if !t.room {
		if err := t.d.space.room(); err != nil {
			return err
		}
		t.room = true
	}
	s := &Store{d: t.d}
	now := t.d.now().UTC()
	for _, it := range items {
		k := itemKey(it.Namespace, it.Key)
		if it.Delete {
			if err := deleteItem(t.x(), k); err != nil {
				return fmt.Errorf("store delete %q/%s: %w", it.Namespace, it.Key, err)
			}
			continue
		}
		p, err := s.prepare(context.Background(), it, now)
		if err != nil {
			return err
		}
		if err := s.put(t.x(), p, now, &t.vlog); err != nil {
			return fmt.Errorf("store put %q/%s: %w", it.Namespace, it.Key, err)
		}
	}
	return nil
}
