package badger

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

func TestDurabilityModes(t *testing.T) {
	tests := []struct {
		mode       Durability
		inMemory   bool
		syncWrites bool // every commit fsynced
		syncEnds   bool // run-ending checkpoints and Sync fsync
	}{
		{mode: "", syncEnds: true},
		{mode: DurabilityBatch, syncEnds: true},
		{mode: DurabilityFsync, syncWrites: true},
		{mode: DurabilityBatch, inMemory: true},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			dir := t.TempDir()
			if tt.inMemory {
				dir = ""
			}
			d, err := Open(dir, Options{Durability: tt.mode, InMemory: tt.inMemory})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if got := d.db.Opts().SyncWrites; got != tt.syncWrites {
				t.Errorf("SyncWrites = %v, want %v", got, tt.syncWrites)
			}
			if d.syncEnds != tt.syncEnds {
				t.Errorf("syncEnds = %v, want %v", d.syncEnds, tt.syncEnds)
			}
			// A run-ending checkpoint and an explicit Sync work in every mode.
			cp := checkpoint.Checkpoint{ThreadID: "t", ID: checkpoint.NewID(), GraphName: "g", Versions: map[string]int64{"a": 1}, Source: "loop"}
			if err := d.Checkpointer().Put(context.Background(), cp, []checkpoint.Blob{{Field: "a", Version: 1, Data: json.RawMessage(`1`)}}); err != nil {
				t.Fatal(err)
			}
			if err := d.Checkpointer().(checkpoint.Syncer).Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := Open(t.TempDir(), Options{Durability: "sometimes"}); err == nil {
		t.Error("an unknown durability mode was accepted")
	}
	if _, err := ParseDurability("sometimes"); err == nil {
		t.Error("ParseDurability accepted an unknown mode")
	}
}
