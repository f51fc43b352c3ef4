package badger_test

import (
	"testing"

	"github.com/graphctl/graphctl/runtime/storage/badger"
	"github.com/graphctl/graphctl/runtime/store"
	"github.com/graphctl/graphctl/runtime/store/storetest"
)

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openDB(t, "", badger.Options{InMemory: true}).Store()
	})
	storetest.RunClock(t, func(t *testing.T, c *storetest.Clock) store.Store {
		return openDB(t, "", badger.Options{InMemory: true, Now: c.Now}).Store()
	})
}

func TestStoreOnDisk(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openDB(t, t.TempDir(), badger.Options{}).Store()
	})
}

func TestStoreEmbeddings(t *testing.T) {
	storetest.RunEmbedding(t, func(t *testing.T) func(store.Embedder) store.Store {
		db := openDB(t, t.TempDir(), badger.Options{})
		return func(e store.Embedder) store.Store {
			if e == nil {
				return db.Store()
			}
			return db.StoreWith(e)
		}
	})
}
