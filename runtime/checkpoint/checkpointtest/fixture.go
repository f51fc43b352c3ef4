package checkpointtest

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Fixture is what a checkpointer read back from the data it had written,
// saved beside a copy of that data so that later versions can check they
// still read it the same (see runtime/storage/testdata/generate.go).
type Fixture struct {
	Threads []checkpoint.ThreadInfo                    `json:"threads"`
	Latest  map[string]*checkpoint.Snapshot            `json:"latest"`
	History map[string][]checkpoint.Checkpoint         `json:"history"`
	Get     map[string]map[string]*checkpoint.Snapshot `json:"get"`
}

// CheckFixture reads, with c, everything the fixture at path (a JSON
// Fixture) records and fails the test where c reads it differently.
func CheckFixture(t *testing.T, c checkpoint.Checkpointer, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want Fixture
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	ctx := context.Background()
	same := func(what string, got, want any) {
		t.Helper()
		g, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		w, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(g, w) {
			t.Errorf("%s reads\n%s\nwant (as written)\n%s", what, g, w)
		}
	}
	threads, err := c.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	same("Threads", threads, want.Threads)
	if len(want.Threads) == 0 {
		t.Fatalf("%s records no threads", path)
	}
	for _, th := range want.Threads {
		latest, err := c.Latest(ctx, th.ThreadID)
		if err != nil {
			t.Fatalf("Latest %s: %v", th.ThreadID, err)
		}
		same("Latest "+th.ThreadID, latest, want.Latest[th.ThreadID])
		history, err := c.History(ctx, th.ThreadID, checkpoint.ListOptions{})
		if err != nil {
			t.Fatalf("History %s: %v", th.ThreadID, err)
		}
		same("History "+th.ThreadID, history, want.History[th.ThreadID])
		for id, snap := range want.Get[th.ThreadID] {
			got, err := c.Get(ctx, th.ThreadID, id)
			if err != nil {
				t.Fatalf("Get %s/%s: %v", th.ThreadID, id, err)
			}
			same("Get "+th.ThreadID+"/"+id, got, snap)
		}
	}
}
