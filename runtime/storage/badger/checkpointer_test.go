package badger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/checkpointtest"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

func openDB(t testing.TB, dir string, opts badger.Options) *badger.DB {
	t.Helper()
	db, err := badger.Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestCheckpointerConformance(t *testing.T) {
	tests := []struct {
		name string
		open func(t *testing.T) *badger.DB
	}{
		{"in-memory", func(t *testing.T) *badger.DB { return openDB(t, "", badger.Options{InMemory: true}) }},
		{"on disk", func(t *testing.T) *badger.DB { return openDB(t, t.TempDir(), badger.Options{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkpointtest.Run(t, func(t *testing.T) checkpoint.Checkpointer { return tt.open(t).Checkpointer() })
		})
	}
}

func TestCheckpointsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := badger.Open(dir, badger.Options{SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	cp := db.Checkpointer()
	var want []any
	for i := 1; i <= 30; i++ {
		blob := checkpoint.Blob{Field: "msgs", Version: int64(i), Data: json.RawMessage(`["m` + string(rune('a'+i%26)) + `"]`)}
		if i > 1 {
			blob.Base = int64(i - 1)
		}
		want = append(want, "m"+string(rune('a'+i%26)))
		c := checkpoint.Checkpoint{ThreadID: "th", ID: checkpoint.NewID(), Step: i, GraphName: "g", Versions: map[string]int64{"msgs": int64(i)}}
		if err := cp.Put(ctx, c, []checkpoint.Blob{blob}); err != nil {
			t.Fatal(err)
		}
	}
	latestBefore, err := cp.Latest(ctx, "th")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, dir, badger.Options{})
	latest, err := db.Checkpointer().Latest(ctx, "th")
	if err != nil {
		t.Fatalf("Latest after reopen: %v", err)
	}
	if latest.ID != latestBefore.ID || latest.Step != 30 {
		t.Errorf("after reopen latest = %s step %d, want %s step 30", latest.ID, latest.Step, latestBefore.ID)
	}
	var got []any
	if err := json.Unmarshal(latest.Values["msgs"], &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("msgs after reopen has %d items, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("msgs[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	threads, err := db.Checkpointer().Threads(ctx)
	if err != nil || len(threads) != 1 || threads[0].Latest != latest.ID {
		t.Errorf("Threads after reopen = %+v, %v", threads, err)
	}
}

func TestThreadBytesAfterDelete(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "", badger.Options{InMemory: true})
	cp := db.Checkpointer()
	for _, th := range []string{"a", "b"} {
		c := checkpoint.Checkpoint{ThreadID: th, ID: checkpoint.NewID(), GraphName: "g", Versions: map[string]int64{"x": 1}}
		if err := cp.Put(ctx, c, []checkpoint.Blob{{Field: "x", Version: 1, Data: json.RawMessage(`"some value"`)}}); err != nil {
			t.Fatal(err)
		}
		if err := cp.PutWrites(ctx, th, c.ID, checkpoint.PendingWrite{TaskID: "t", Node: "t", Kind: "update", Update: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := db.ThreadBytes(ctx, "a")
	if err != nil || before == 0 {
		t.Fatalf("ThreadBytes(a) = %d, %v; want > 0", before, err)
	}
	other, _ := db.ThreadBytes(ctx, "b")
	if err := cp.DeleteThread(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ThreadBytes(ctx, "a"); err != nil || n != 0 {
		t.Errorf("ThreadBytes(a) after delete = %d, %v; want 0", n, err)
	}
	if n, _ := db.ThreadBytes(ctx, "b"); n != other {
		t.Errorf("ThreadBytes(b) changed from %d to %d", other, n)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		opts badger.Options
	}{
		{"in-memory with directory", "/tmp/x", badger.Options{InMemory: true}},
		{"no directory", "", badger.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := badger.Open(tt.dir, tt.opts)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}

// TestConcurrentPutsOnOneThread puts checkpoints on one thread from several
// goroutines at once: each Put reads and writes the thread's summary, so
// Badger transactions conflict, and the checkpointer runs the losers again.
// Every Put succeeds and the summary names the highest id.
func TestConcurrentPutsOnOneThread(t *testing.T) {
	db := openDB(t, "", badger.Options{InMemory: true})
	c := db.Checkpointer()
	ctx := context.Background()
	const workers, puts = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*puts)
	for w := range workers {
		wg.Go(func() {
			for i := range puts {
				id := fmt.Sprintf("%04d-%02d", i, w)
				v := int64(i*workers + w + 1)
				cp := checkpoint.Checkpoint{ThreadID: "t", ID: id, Step: i, GraphName: "g", Versions: map[string]int64{"f": v}}
				if err := c.Put(ctx, cp, []checkpoint.Blob{{Field: "f", Version: v, Data: json.RawMessage(fmt.Sprint(v))}}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	threads, err := c.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%04d-%02d", puts-1, workers-1)
	if len(threads) != 1 || threads[0].Latest != want {
		t.Fatalf("threads = %+v, want one naming %s", threads, want)
	}
	t.Logf("%d puts took %d commits (the difference is conflicts run again)", workers*puts, db.Stats().Commits)
	if h, err := c.History(ctx, "t", checkpoint.ListOptions{}); err != nil || len(h) != workers*puts {
		t.Fatalf("history has %d checkpoints (%v), want %d", len(h), err, workers*puts)
	}
}

// TestPutLargeValues writes checkpoints whose values add up to more than
// one Badger transaction holds (a fraction of badger.MemTableSize): large
// values, and smaller ones once the transaction is full, are written ahead
// of the checkpoint's transaction.
func TestPutLargeValues(t *testing.T) {
	ctx := context.Background()
	cp := openDB(t, t.TempDir(), badger.Options{}).Checkpointer()
	for i, size := range []struct{ fields, bytes int }{{3, 700 << 10}, {4, 3 << 20}, {6, 900 << 10}, {40, 200 << 10}, {400, 30 << 10}} {
		c := checkpoint.Checkpoint{ThreadID: "large", ID: checkpoint.NewID(), Step: i, GraphName: "g", Versions: map[string]int64{},
			Source: checkpoint.SourceLoop}
		var blobs []checkpoint.Blob
		for f := range size.fields {
			field := fmt.Sprint("f", f)
			c.Versions[field] = int64(i + 1)
			data, _ := json.Marshal(strings.Repeat(string(rune('a'+f)), size.bytes))
			blobs = append(blobs, checkpoint.Blob{Field: field, Version: int64(i + 1), Data: data})
		}
		if err := cp.Put(ctx, c, blobs); err != nil {
			t.Fatalf("put %d fields of %d bytes: %v", size.fields, size.bytes, err)
		}
		got, err := cp.Latest(ctx, "large")
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blobs {
			if string(got.Values[b.Field]) != string(b.Data) {
				t.Errorf("field %s: read %d bytes, wrote %d", b.Field, len(got.Values[b.Field]), len(b.Data))
			}
		}
	}
}

// TestSummaryAfterDeleteAndRollback checks the thread summary a Put writes
// when the thread was deleted or rolled back since its last Put: the
// checkpointer remembers the newest checkpoint of the threads it wrote
// (instead of reading the summary in every Put), and must not remember one
// that a delete or a rollback replaced.
func TestSummaryAfterDeleteAndRollback(t *testing.T) {
	ctx := context.Background()
	cp := openDB(t, t.TempDir(), badger.Options{}).Checkpointer()
	put := func(thread, id, parent string, step int) {
		t.Helper()
		c := checkpoint.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, Step: step, GraphName: "g",
			Versions: map[string]int64{"n": int64(step + 1)}, Source: checkpoint.SourceLoop, Next: []checkpoint.Task{{ID: "a", Node: "a"}}}
		if err := cp.Put(ctx, c, []checkpoint.Blob{{Field: "n", Version: int64(step + 1), Data: json.RawMessage(fmt.Sprint(step))}}); err != nil {
			t.Fatal(err)
		}
	}
	latest := func(thread, want string) {
		t.Helper()
		snap, err := cp.Latest(ctx, thread)
		if err != nil {
			t.Fatalf("latest of %s: %v", thread, err)
		}
		if snap.ID != want {
			t.Errorf("latest of %s is %s, want %s", thread, snap.ID, want)
		}
	}
	older, newer := checkpoint.NewID(), checkpoint.NewID()

	// Deleted: a Put of an older checkpoint starts the thread again.
	put("deleted", newer, "", 0)
	if err := cp.DeleteThread(ctx, "deleted"); err != nil {
		t.Fatal(err)
	}
	put("deleted", older, "", 0)
	latest("deleted", older)

	// Rolled back: the summary names the older checkpoint, and a Put of a
	// checkpoint between the two becomes the newest.
	first := checkpoint.NewID()
	put("rolled", first, "", 0)
	second := checkpoint.NewID()
	put("rolled", second, first, 1)
	third := checkpoint.NewID()
	put("rolled", third, second, 2)
	if err := cp.Rollback(ctx, "rolled", first); err != nil {
		t.Fatal(err)
	}
	latest("rolled", first)
	again := checkpoint.NewID()
	put("rolled", again, first, 1)
	latest("rolled", again)
}
