package store_test

import (
	"context"
	"testing"

	"github.com/graphctl/graphctl/runtime/store"
)

// Puts handed over before Take are taken once; after Take, Add refuses
// them so that their writer writes them itself.
func TestDeferredHandsOverUntilTaken(t *testing.T) {
	d := &store.Deferred{Thread: "t"}
	ctx := store.WithDeferred(context.Background(), d)
	if store.DeferredOf(ctx) != d || store.DeferredOf(context.Background()) != nil {
		t.Fatal("DeferredOf does not return what the context carries")
	}
	a := store.BatchPut{Namespace: []string{"ns"}, Key: "a"}
	b := store.BatchPut{Namespace: []string{"ns"}, Key: "b"}
	if !d.Add(a) || !d.Add(b) {
		t.Fatal("Add refused before Take")
	}
	if got := d.Take(); len(got) != 2 || got[0].Key != "a" || got[1].Key != "b" {
		t.Fatalf("Take = %v, want a and b", got)
	}
	if d.Add(a) {
		t.Error("Add accepted a put after Take")
	}
	if got := d.Take(); len(got) != 0 {
		t.Errorf("second Take = %v, want nothing", got)
	}
}
