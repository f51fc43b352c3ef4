package badger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	bdg "github.com/dgraph-io/badger/v4"
)

// logSync makes Badger's logs durable for (*DB).Sync with as few device
// flushes as it can.
//
// Badger writes every commit to the memtable's log (a .mem file, written
// through a shared memory mapping) and values of at least ValueThreshold
// bytes to the value log as well. Badger's own Sync flushes both logs of the
// active memtable each time: two device flushes even when nothing went to
// the value log, which is almost always (the threshold is 1 MiB). logSync
// flushes every .mem file in the directory, and the value log only when a
// value that may have gone there was committed since the last flush.
//
// Every .mem file present is flushed, not only the active memtable's: after
// a rotation, a commit may be in an older memtable's log until that memtable
// is written to a table. A .mem file that is gone (or empties while being
// flushed) belonged to a memtable already written to a table, which Badger
// syncs, with the manifest that lists it, before it deletes the log. An
// fdatasync of a file flushes the pages written through any mapping of it,
// as the msync of Badger's Sync does. Where any of that cannot be checked
// (the directory cannot be listed, a log cannot be opened, no log is found,
// another system than Linux), logSync falls back to Badger's Sync.
type logSync struct {
	dir string
	// vlogFrom is the size from which a value may be stored in the value
	// log; 0 when every value may be.
	vlogFrom int64
	// vlogWritten is set after a commit that may have written the value log
	// commits (or fails), and cleared by the flush that covers it.
	vlogWritten atomic.Bool
	// full is Badger's Sync; file flushes one file's data (an error that
	// is a walDoubt when it cannot). Tests replace them to see what is
	// flushed.
	full func() error
	file func(path string) error
}

// newLogSync returns the log flusher of db, open in dir.
func newLogSync(db *bdg.DB, dir string) *logSync {
	o := db.Opts()
	s := &logSync{dir: dir, full: db.Sync, file: syncFileData, vlogFrom: o.ValueThreshold}
	if o.VLogPercentile > 0 {
		// Badger moves the threshold itself: any value may go to the log.
		s.vlogFrom = 0
	}
	return s
}

// inValueLog reports whether a value of n bytes may be stored in the value
// log; a commit that wrote one calls wroteValueLog once it returns.
func (s *logSync) inValueLog(n int) bool { return int64(n) >= s.vlogFrom }

// wroteValueLog records that a commit that returned may have written the
// value log, which the next sync then flushes.
func (s *logSync) wroteValueLog() { s.vlogWritten.Store(true) }

// errNoLog is a sync that found no memtable log to flush.
var errNoLog = errors.New("no memtable log found")

// sync flushes what every commit that returned before it wrote to the
// logs.
func (s *logSync) sync() error {
	vlog := s.vlogWritten.Swap(false)
	if vlog {
		// Badger's Sync flushes the value log and the active memtable's
		// log; the older memtables' logs are flushed below.
		if err := s.full(); err != nil {
			s.vlogWritten.Store(true)
			return err
		}
	}
	err := s.syncWALs()
	var doubt *walDoubt
	if errors.As(err, &doubt) && !vlog {
		// Badger's Sync then, which flushes at least the active memtable's
		// log and the value log.
		return s.full()
	}
	if doubt != nil {
		return nil // the full sync above covered what it can
	}
	return err
}

// walDoubt is a failure to find or open the memtable logs (not to flush
// them), after which a sync falls back to Badger's.
type walDoubt struct{ err error }

func (e *walDoubt) Error() string { return e.err.Error() }
func (e *walDoubt) Unwrap() error { return e.err }

// syncWALs flushes every memtable log in the directory.
func (s *logSync) syncWALs() error {
	dir, err := os.Open(s.dir)
	if err != nil {
		return &walDoubt{err}
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return &walDoubt{err}
	}
	n := 0
	for _, name := range names {
		if !strings.HasSuffix(name, memFileExt) {
			continue
		}
		err := s.file(filepath.Join(s.dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Written to a table and deleted since the listing.
		case err != nil:
			return err
		default:
			n++
		}
	}
	if n == 0 {
		return &walDoubt{errNoLog}
	}
	return nil
}

// memFileExt ends the names of Badger's memtable logs.
const memFileExt = ".mem"

// openForSync opens a file to flush it; an error that is not fs.ErrNotExist
// is a walDoubt.
func openForSync(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &walDoubt{err}
	}
	return f, err
}

// syncFileWith opens the file at path and flushes its data with flush.
func syncFileWith(path string, flush func(*os.File) error) error {
	f, err := openForSync(path)
	if err != nil {
		return err
	}
	err = flush(f)
	f.Close() // read-only: the flush's error is the one that matters
	if err != nil {
		return fmt.Errorf("flush %s: %w", path, err)
	}
	return nil
}
