package checkpoint_test

import (
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// A Put of a step that writes two fields of seven, one an append delta, is
// prepared in four allocations (the check's set of written fields, the
// PreparedPut, its record and its required blobs), whatever the number of
// fields it leaves as they were.
func TestPreparePutAllocations(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector allocates more")
	}
	versions := map[string]int64{"messages": 5, "model": 2, "part": 1, "symptoms": 3, "goal": 2, "missing": 4, "answer": 6}
	cp := checkpoint.Checkpoint{ThreadID: "t", ID: checkpoint.NewID(), ParentID: checkpoint.NewID(), Step: 3, GraphName: "g",
		Versions: versions, Source: "loop", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	blobs := []checkpoint.Blob{{Field: "messages", Version: 5, Base: 4, Data: []byte(`[1]`)}, {Field: "answer", Version: 6, Data: []byte(`"x"`)}}
	p, err := checkpoint.PreparePut(cp, blobs, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Required) != 6 {
		t.Fatalf("required %v, want the base of messages and the 5 fields not written", p.Required)
	}
	n := testing.AllocsPerRun(100, func() {
		if _, err := checkpoint.PreparePut(cp, blobs, time.Now); err != nil {
			t.Fatal(err)
		}
	})
	if n > 4 {
		t.Errorf("%v allocations per PreparePut, want at most 4", n)
	}
}
