package core

import (
	"context"
	"errors"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/store"
)

// ItemDriver is implemented by a driver whose database also holds a store's
// items, written by its transactions (ItemWriter): the Checkpointer is then a
// checkpoint.ItemCarrier.
type ItemDriver interface {
	// HoldsItemsOf reports whether s keeps its items in the driver's
	// database, where ItemWriter writes them.
	HoldsItemsOf(s store.Store) bool
}

// ItemWriter is implemented by the read-write transactions of an
// ItemDriver.
type ItemWriter interface {
	// PutItems writes store items (or deletes them) as the store's
	// PutBatch does, in the transaction.
	PutItems(items []store.BatchPut) error
}

var _ checkpoint.ItemCarrier = (*Checkpointer)(nil)

// CarriesItemsOf implements checkpoint.ItemCarrier.
func (c *Checkpointer) CarriesItemsOf(s store.Store) bool {
	d, ok := c.d.(ItemDriver)
	return ok && d.HoldsItemsOf(s)
}

// carried returns the puts that ctx's Carry has for a write of threadID and
// the function that ends the carrying write; a write that carries nothing
// gets a no-op end.
func (c *Checkpointer) carried(ctx context.Context, threadID string) ([]store.BatchPut, func(committed bool)) {
	if _, ok := c.d.(ItemDriver); !ok {
		return nil, func(bool) {}
	}
	puts, end := checkpoint.CarryOf(ctx).Take(threadID)
	if puts == nil {
		return nil, func(bool) {}
	}
	return puts, end
}

// errNoItemWriter fails a write whose driver holds items but whose
// transaction cannot write them.
var errNoItemWriter = errors.New("the driver's transaction cannot write store items")

// putCarried writes carried puts in tx.
func putCarried(tx Txn, puts []store.BatchPut) error {
	if len(puts) == 0 {
		return nil
	}
	w, ok := tx.(ItemWriter)
	if !ok {
		return errNoItemWriter
	}
	return w.PutItems(puts)
}
