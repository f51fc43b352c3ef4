package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// snapshotRecorder records the snapshots an engine asks for.
type snapshotRecorder struct {
	checkpoint.Checkpointer
	mu    sync.Mutex
	asked []map[string]int64
}

func (s *snapshotRecorder) Head(ctx context.Context, thread string) (*checkpoint.Snapshot, error) {
	return s.Checkpointer.(checkpoint.HeadReader).Head(ctx, thread)
}

func (s *snapshotRecorder) SaveSnapshots(ctx context.Context, thread string, versions map[string]int64) error {
	s.mu.Lock()
	s.asked = append(s.asked, versions)
	s.mu.Unlock()
	return s.Checkpointer.(checkpoint.SnapshotSaver).SaveSnapshots(ctx, thread, versions)
}

// A thread run from the state cache, which nothing reads cold, still gets a
// snapshot of each growing list every SnapshotEvery deltas (so a cold read
// walks a bounded chain), and what the cold read then returns is the state
// the runs left.
func TestSnapshotsEveryDeltas(t *testing.T) {
	g := compileGraph(t, chatGraph)
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := &snapshotRecorder{Checkpointer: db.Checkpointer()}
	eng := engine.New(g, rec, engine.Options{SnapshotEvery: 4})
	var last *engine.Result
	for i := range 12 {
		last = say(t, eng, "c", fmt.Sprint("hello ", i))
	}
	// Each turn appends its input (stored with its start checkpoint) and
	// its reply to messages, a delta each, and a line to log, one delta: a
	// snapshot is due once SnapshotEvery deltas hold enough of the list
	// (snapshotGrowth), which makes four of messages and two of log.
	var messages, logs int
	for _, a := range rec.asked {
		if _, ok := a["messages"]; ok {
			messages++
		}
		if _, ok := a["log"]; ok {
			logs++
		}
		if _, ok := a["turns"]; ok {
			t.Errorf("snapshot of turns asked (%v): it is stored in full every time", a)
		}
	}
	if messages != 4 || logs != 2 {
		t.Errorf("snapshots asked for: %v; want four of messages and two of log", rec.asked)
	}
	cold, err := db.Checkpointer().Latest(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(last.State["messages"])
	var got, exp []any
	if err := json.Unmarshal(cold.Values["messages"], &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(want, &exp)
	if fmt.Sprint(got) != fmt.Sprint(exp) || len(got) != 24 {
		t.Errorf("cold read of messages after snapshots:\n got %d %v\nwant %d %v", len(got), got, len(exp), exp)
	}
}
