package checkpointtest

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

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

// ContinueFixture checks that the fixture's thread "chat" goes on: it puts
// a step on its newest checkpoint, appending to its messages, and reads the
// whole list back.
func ContinueFixture(t *testing.T, c checkpoint.Checkpointer) {
	t.Helper()
	ctx := context.Background()
	latest, err := c.Latest(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	next := latest.Checkpoint
	next.ID, next.ParentID, next.Step, next.Interrupts, next.Next = checkpoint.NewID(), latest.ID, latest.Step+1, nil, nil
	next.CreatedAt = latest.CreatedAt.Add(time.Millisecond)
	next.Versions = map[string]int64{"messages": 42, "count": 42, "model": 1}
	blobs := []checkpoint.Blob{
		{Field: "messages", Version: 42, Base: 41, Data: json.RawMessage(`[{"role":"user","content":"the answer"}]`)},
		{Field: "count", Version: 42, Data: json.RawMessage(`42`)},
	}
	if err := c.Put(ctx, next, blobs); err != nil {
		t.Fatalf("Put on a thread of an earlier version: %v", err)
	}
	after, err := c.Latest(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]string
	if err := json.Unmarshal(after.Values["messages"], &msgs); err != nil || len(msgs) != 42 || msgs[0]["content"] != "message 1" || msgs[41]["content"] != "the answer" {
		t.Errorf("messages after a Put = %d items (%v): %s", len(msgs), err, after.Values["messages"])
	}
	if after.ID != next.ID || len(after.Pending) != 0 {
		t.Errorf("Latest after a Put = %s with %d pending writes, want %s with none", after.ID, len(after.Pending), next.ID)
	}
}
