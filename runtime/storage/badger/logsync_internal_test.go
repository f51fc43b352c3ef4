package badger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/graphctl/graphctl/runtime/store"
)

// syncRecorder records what a DB's Sync flushes.
type syncRecorder struct {
	mu    sync.Mutex
	files []string // base names of the files flushed one by one
	full  int      // Badger Syncs (memtable log and value log)
}

func recordSyncs(t *testing.T, d *DB) *syncRecorder {
	t.Helper()
	r := &syncRecorder{}
	flush, full := d.logs.flush, d.logs.full
	d.logs.flush = func(f *os.File) error {
		r.mu.Lock()
		r.files = append(r.files, filepath.Base(f.Name()))
		r.mu.Unlock()
		return flush(f)
	}
	d.logs.full = func() error {
		r.mu.Lock()
		r.full++
		r.mu.Unlock()
		return full()
	}
	return r
}

// take returns what was flushed since the last take.
func (r *syncRecorder) take() (files []string, full int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	files, full = r.files, r.full
	r.files, r.full = nil, 0
	return files, full
}

// filesNamed lists the files of dir with the given extension.
func filesNamed(t *testing.T, dir, ext string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ext) {
			out = append(out, e.Name())
		}
	}
	return out
}

// filesHolding lists the files of dir with the given extension whose first
// 2*MemTableSize bytes (a memtable log's whole preallocated size) contain b.
func filesHolding(t *testing.T, dir, ext string, b []byte) []string {
	t.Helper()
	var out []string
	for _, name := range filesNamed(t, dir, ext) {
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(io.LimitReader(f, 2*MemTableSize))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, b) {
			out = append(out, name)
		}
	}
	return out
}

// openSynced opens a DB in a temporary directory whose syncs are recorded,
// with put, which commits a key, and sync, which syncs and returns the logs
// flushed one by one and how often Badger's Sync ran.
func openSynced(t *testing.T) (d *DB, dir string, put func(key string, val []byte), sync func() ([]string, int)) {
	t.Helper()
	dir = t.TempDir()
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	rec := recordSyncs(t, d)
	put = func(key string, val []byte) {
		t.Helper()
		if err := d.update(context.Background(), func(txn *bdg.Txn) error { return txn.Set([]byte(key), val) }); err != nil {
			t.Fatal(err)
		}
	}
	sync = func() ([]string, int) {
		t.Helper()
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		return rec.take()
	}
	return d, dir, put, sync
}

// fillMemtable commits until the memtable whose log is named log has been
// replaced by a new one.
func fillMemtable(t *testing.T, dir string, put func(key string, val []byte), log string) {
	t.Helper()
	filler := bytes.Repeat([]byte{'x'}, 160<<10)
	for i := 0; slices.Max(filesNamed(t, dir, memFileExt)) == log; i++ {
		put(fmt.Sprintf("fill/%d", i), filler)
		if i > 2*MemTableSize/len(filler) {
			t.Fatal("the memtable was never replaced")
		}
	}
}

// TestSyncFlushesTheLogsHoldingCommits checks that Sync flushes the memtable
// log that holds a commit, also after the memtable was replaced by a new
// one, and flushes the value log (Badger's Sync) only when a value that went
// there was committed since the last Sync.
func TestSyncFlushesTheLogsHoldingCommits(t *testing.T) {
	ctx := context.Background()
	d, dir, put, sync := openSynced(t)
	// mustHold checks that every memtable log holding marker was flushed.
	mustHold := func(step string, marker []byte, synced []string) {
		t.Helper()
		holding := filesHolding(t, dir, memFileExt, marker)
		for _, f := range holding {
			if !slices.Contains(synced, f) {
				t.Errorf("%s: %s holds the commit, Sync flushed %v", step, f, synced)
			}
		}
	}

	marker := []byte("first-commit-marker-0123456789")
	put("k1", marker)
	synced, full := sync()
	if holding := filesHolding(t, dir, memFileExt, marker); len(holding) != 1 {
		t.Fatalf("the commit is in memtable logs %v, want one", holding)
	}
	mustHold("one commit", marker, synced)
	if full != 0 {
		t.Errorf("Sync flushed the value log %d times with nothing written there", full)
	}

	// Fill the memtable until it is replaced; the marker's log then belongs
	// to a memtable waiting to be written to a table (or is gone, written).
	marker2 := []byte("second-commit-marker-0123456789")
	put("k2", marker2)
	first := filesHolding(t, dir, memFileExt, marker2)
	if len(first) != 1 {
		t.Fatalf("the commit is in memtable logs %v, want one", first)
	}
	fillMemtable(t, dir, put, first[0])
	synced, full = sync()
	mustHold("after the memtable was replaced", marker2, synced)
	mustHold("after the memtable was replaced", []byte("fill/0"), synced)
	if full != 0 {
		t.Errorf("Sync flushed the value log %d times with nothing written there", full)
	}

	// A value past the value threshold goes to the value log: the next
	// Sync flushes it, the one after does not.
	big := bytes.Repeat([]byte("value-log-entry-"), int(d.db.Opts().ValueThreshold)/16+1)
	tests := []struct {
		name  string
		write func()
	}{
		{"transaction", func() {
			blobTx(t, d, func(tx *tx) error { return tx.set([]byte("big/tx"), big) })
		}},
		{"written ahead", func() {
			if err := d.writeAhead([]byte("big/ahead"), big); err != nil {
				t.Fatal(err)
			}
		}},
		{"store item", func() {
			if err := d.Store().Put(ctx, []string{"ns"}, "big", map[string]any{"v": string(big)}, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		tt.write()
		if holding := filesHolding(t, dir, ".vlog", big[:64]); len(holding) == 0 {
			t.Fatalf("%s: the large value is in no value log file", tt.name)
		}
		if _, full := sync(); full != 1 {
			t.Errorf("%s: Sync after a value-log write flushed the value log %d times, want 1", tt.name, full)
		}
		if _, full := sync(); full != 0 {
			t.Errorf("%s: a second Sync flushed the value log %d times, want 0", tt.name, full)
		}
	}
}

// blobTx runs fn in one of the checkpointer's transactions and commits it.
func blobTx(t *testing.T, d *DB, fn func(*tx) error) {
	t.Helper()
	ct, err := (&driver{d: d}).Begin(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	tx := ct.(*tx)
	defer tx.Discard()
	if err := fn(tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestSyncFallsBack checks that a Sync that cannot find or open the
// memtable logs uses Badger's, and that one that fails to flush them says
// so.
func TestSyncFallsBack(t *testing.T) {
	opened := func(path string) (*os.File, error) { return os.Open(path) }
	flushed := func(*os.File) error { return nil }
	tests := []struct {
		name     string
		list     func(string) ([]string, error)
		open     func(string) (*os.File, error)
		flush    func(*os.File) error
		wantFull int
		wantErr  bool
	}{
		{"log opened", listNames, opened, flushed, 0, false},
		{"directory not listed", func(string) ([]string, error) { return nil, errors.New("permission denied") }, opened, flushed, 1, false},
		{"log not a number", func(string) ([]string, error) { return []string{"00001.mem", "x.mem"}, nil }, opened, flushed, 1, false},
		{"log not opened", listNames, func(string) (*os.File, error) { return nil, &walDoubt{errors.New("permission denied")} }, flushed, 1, false},
		{"log gone", listNames, func(string) (*os.File, error) { return nil, os.ErrNotExist }, flushed, 1, false},
		{"flush not trusted", listNames, opened, func(*os.File) error { return &walDoubt{errors.New("not on this system")} }, 1, false},
		{"flush failed", listNames, opened, func(*os.File) error { return errors.New("input/output error") }, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := openTemp(t, Options{})
			full := 0
			d.logs.full = func() error { full++; return nil }
			d.logs.list, d.logs.open, d.logs.flush = tt.list, tt.open, tt.flush
			err := d.Sync()
			if (err != nil) != tt.wantErr {
				t.Errorf("Sync() = %v, want an error: %v", err, tt.wantErr)
			}
			if full != tt.wantFull {
				t.Errorf("Badger's Sync ran %d times, want %d", full, tt.wantFull)
			}
			if tt.wantFull > 0 && (d.logs.listed || len(d.logs.logs) > 0) {
				t.Errorf("after a fallback the logs are still known: %d open", len(d.logs.logs))
			}
		})
	}
}

// TestSyncKeepsTheLogsOpen checks that only the first Sync lists the
// directory: later ones find the log of a new memtable by its number, and
// close the log of a memtable written to a table and deleted.
func TestSyncKeepsTheLogsOpen(t *testing.T) {
	d, dir, put, sync := openSynced(t)
	lists := 0
	list := d.logs.list
	d.logs.list = func(dir string) ([]string, error) { lists++; return list(dir) }
	put("k1", []byte("v"))
	first, _ := sync()
	if len(first) != 1 {
		t.Fatalf("the first Sync flushed %v, want one log", first)
	}
	fillMemtable(t, dir, put, first[0])
	marker := []byte("after-the-rotation-0123456789")
	put("k2", marker)
	synced, _ := sync()
	newest := slices.Max(filesNamed(t, dir, memFileExt))
	if !slices.Contains(synced, newest) || !slices.Equal(filesHolding(t, dir, memFileExt, marker), []string{newest}) {
		t.Errorf("after the rotation Sync flushed %v; the commit is in %s", synced, newest)
	}
	// Badger writes the full memtable to a table, then deletes its log.
	for deadline := time.Now().Add(10 * time.Second); slices.Contains(filesNamed(t, dir, memFileExt), first[0]); {
		if time.Now().After(deadline) {
			t.Fatalf("the log %s of the full memtable was never deleted", first[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if synced, _ := sync(); !slices.Equal(synced, []string{newest}) {
		t.Errorf("after the old log was deleted Sync flushed %v, want [%s]", synced, newest)
	}
	if len(d.logs.logs) != 1 {
		t.Errorf("%d logs kept open, want 1", len(d.logs.logs))
	}
	if lists != 1 {
		t.Errorf("the directory was listed %d times, want once", lists)
	}
}
