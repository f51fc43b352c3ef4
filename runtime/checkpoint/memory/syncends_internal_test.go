package memory

import (
	"context"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/core"
)

// TestSyncEndsAtStops checks that a Put is made durable (SyncEnds) when
// its checkpoint is where the thread stops — the end of a run, interrupts,
// a breakpoint — and not for a step with tasks left.
func TestSyncEndsAtStops(t *testing.T) {
	tests := []struct {
		name string
		cp   checkpoint.Checkpoint
		sync bool
	}{
		{"a step with tasks left", checkpoint.Checkpoint{Next: []checkpoint.Task{{ID: "b", Node: "b"}}}, false},
		{"the end of a run", checkpoint.Checkpoint{}, true},
		{"waiting for an answer", checkpoint.Checkpoint{Next: []checkpoint.Task{{ID: "b", Node: "b"}},
			Interrupts: []checkpoint.Interrupt{{ID: "i", Node: "b", TaskID: "b", Field: "x", When: "during"}}}, true},
		{"a breakpoint", checkpoint.Checkpoint{Next: []checkpoint.Task{{ID: "b", Node: "b"}},
			Metadata: map[string]any{checkpoint.BreakpointKey: map[string]any{"when": "before", "nodes": []any{"b"}}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synced := 0
			c := core.New(&driver{threads: map[string]*thread{}}, core.Options{SyncEnds: func(context.Context) error {
				synced++
				return nil
			}})
			cp := tt.cp
			cp.ThreadID, cp.ID, cp.Versions = "t", checkpoint.NewID(), map[string]int64{}
			if err := c.Put(context.Background(), cp, nil); err != nil {
				t.Fatal(err)
			}
			if got := synced > 0; got != tt.sync || cp.Stops() != tt.sync {
				t.Fatalf("synced %d times, Stops %v; want sync %v", synced, cp.Stops(), tt.sync)
			}
		})
	}
}
