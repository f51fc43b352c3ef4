package checkpoint_test

import (
	"context"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/store"
)

func TestCarry(t *testing.T) {
	put := store.BatchPut{Namespace: []string{"n"}, Key: "k"}
	newCarry := func(builds *int) *checkpoint.Carry {
		return &checkpoint.Carry{Thread: "t", Build: func() []store.BatchPut { *builds++; return []store.BatchPut{put} }}
	}
	for _, tt := range []struct {
		name        string
		steps       func(c *checkpoint.Carry) // before the final Take and Drop
		wantTake    bool                      // a Take of "t" then gets the puts
		wantPending bool                      // Drop then reports them pending
	}{
		{"fresh", func(*checkpoint.Carry) {}, true, true},
		{"written", func(c *checkpoint.Carry) { _, end := c.Take("t"); end(true) }, false, false},
		{"write failed", func(c *checkpoint.Carry) { _, end := c.Take("t"); end(false) }, true, true},
		{"dropped", func(c *checkpoint.Carry) { c.Drop() }, false, false},
		{"another thread's write", func(c *checkpoint.Carry) {
			if puts, _ := c.Take("u"); puts != nil {
				t.Error("a write of another thread took the puts")
			}
		}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var builds int
			c := newCarry(&builds)
			tt.steps(c)
			puts, end := c.Take("t")
			if got := puts != nil; got != tt.wantTake {
				t.Fatalf("Take got puts %v, want %v", got, tt.wantTake)
			}
			if end != nil {
				end(false)
			}
			if got := c.Drop(); got != tt.wantPending {
				t.Errorf("Drop reports pending %v, want %v", got, tt.wantPending)
			}
			if puts, _ := c.Take("t"); puts != nil {
				t.Error("a Take after Drop got puts")
			}
		})
	}
	var nilCarry *checkpoint.Carry
	if puts, _ := nilCarry.Take("t"); puts != nil || nilCarry.Drop() {
		t.Error("a nil Carry carries something")
	}
	if checkpoint.CarryOf(context.Background()) != nil {
		t.Error("a bare context carries a Carry")
	}
	c := newCarry(new(int))
	if checkpoint.CarryOf(checkpoint.WithCarry(context.Background(), c)) != c {
		t.Error("CarryOf does not return the context's Carry")
	}
}
