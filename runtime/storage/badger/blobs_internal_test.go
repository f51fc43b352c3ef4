package badger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// putStep puts a checkpoint of thread "t" with the given versions and the
// blobs of fields written, and returns its id.
func putStep(ctx context.Context, cp checkpoint.Checkpointer, parent string, step int, versions map[string]int64, written ...string) (string, error) {
	c := checkpoint.Checkpoint{ThreadID: "t", ID: checkpoint.NewID(), ParentID: parent, Step: step, GraphName: "g",
		Versions: versions, Source: checkpoint.SourceLoop, Next: []checkpoint.Task{{ID: "n", Node: "n"}}}
	var blobs []checkpoint.Blob
	for _, f := range written {
		blobs = append(blobs, checkpoint.Blob{Field: f, Version: versions[f], Data: json.RawMessage(fmt.Sprint(versions[f]))})
	}
	return c.ID, cp.Put(ctx, c, blobs)
}

// TestPutTrustsOnlyStoredBlobs checks that a Put does not read the blobs it
// requires when the DB wrote them, and that after a delete, a rollback or a
// prune removed a blob, a Put that requires it still fails.
func TestPutTrustsOnlyStoredBlobs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// The first checkpoint has versions first and writes the blobs of
		// firstBlobs; the second has a@2 and b@1 and writes a@2 and the
		// blobs of secondBlobs.
		first       map[string]int64
		firstBlobs  []string
		secondBlobs []string
		// remove deletes blob b@1.
		remove func(cp checkpoint.Checkpointer, first, second string) error
	}{
		{"delete thread", map[string]int64{"a": 1, "b": 1}, []string{"a", "b"}, []string{"a"},
			func(cp checkpoint.Checkpointer, _, _ string) error { return cp.DeleteThread(ctx, "t") }},
		{"rollback", map[string]int64{"a": 1}, []string{"a"}, []string{"a", "b"},
			func(cp checkpoint.Checkpointer, first, _ string) error { return cp.Rollback(ctx, "t", first) }},
		{"prune", map[string]int64{"a": 1, "b": 1}, []string{"a", "b"}, []string{"a"},
			func(cp checkpoint.Checkpointer, _, second string) error {
				// A third checkpoint rewrites b; keeping it alone drops b@1.
				if _, err := putStep(ctx, cp, second, 3, map[string]int64{"a": 3, "b": 3}, "a", "b"); err != nil {
					return err
				}
				return cp.Prune(ctx, "t", 1)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := openTemp(t, Options{})
			cp := d.Checkpointer()
			first, err := putStep(ctx, cp, "", 1, tt.first, tt.firstBlobs...)
			if err != nil {
				t.Fatal(err)
			}
			second, err := putStep(ctx, cp, first, 2, map[string]int64{"a": 2, "b": 1}, tt.secondBlobs...)
			if err != nil {
				t.Fatal(err)
			}

			// The DB knows b@1 is stored: requiring it reads nothing.
			requireWithoutRead(t, d, "b", 1)

			if err := tt.remove(cp, first, second); err != nil {
				t.Fatal(err)
			}
			_, err = putStep(ctx, cp, first, 4, map[string]int64{"a": 4, "b": 1}, "a")
			if err == nil || !strings.Contains(err.Error(), "no blob") {
				t.Fatalf("a Put requiring the removed blob b@1: err = %v, want \"no blob\"", err)
			}
		})
	}
}

// requireWithoutRead checks that requiring thread t's blob of field at
// version v, under the thread's lock, begins no Badger transaction.
func requireWithoutRead(t *testing.T, d *DB, field string, v int64) {
	t.Helper()
	ct, err := (&driver{d: d}).Begin(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	tx := ct.(*tx)
	defer tx.Discard()
	if err := tx.Lock("t", false); err != nil {
		t.Fatal(err)
	}
	if err := tx.RequireBlobs("t", []checkpoint.BlobRef{{Field: field, Version: v}}); err != nil {
		t.Fatal(err)
	}
	if tx.txn != nil {
		t.Errorf("requiring %s@%d, which the DB wrote, read it", field, v)
	}
}

// TestDeleteThreadUnderPuts checks that a thread deleted while Puts go on
// never keeps a checkpoint whose blobs are gone.
func TestDeleteThreadUnderPuts(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t, Options{})
	cp := d.Checkpointer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			if err := cp.DeleteThread(ctx, "t"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	parent := ""
	for step := 1; ; step++ {
		select {
		case <-done:
			if _, err := cp.Latest(ctx, "t"); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("after the deletes: %v", err)
			}
			return
		default:
		}
		versions, written := map[string]int64{"a": int64(step), "b": 1}, []string{"a"}
		if parent == "" {
			written = append(written, "b")
		}
		id, err := putStep(ctx, cp, parent, step, versions, written...)
		switch {
		case err == nil:
			parent = id
		case strings.Contains(err.Error(), "no blob"):
			parent = "" // deleted: start again
		default:
			t.Fatal(err)
		}
		if _, err := cp.Latest(ctx, "t"); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("step %d: %v", step, err)
		}
	}
}

// openTemp opens a DB in a temporary directory, closed when the test ends.
func openTemp(t *testing.T, opts Options) *DB {
	t.Helper()
	d, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
