package badger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
// flushes every memtable log, and the value log only when a value that may
// have gone there was committed since the last flush.
//
// Every memtable log is flushed, not only the active memtable's: after a
// rotation, a commit may be in an older memtable's log until that memtable
// is written to a table. A log that is gone (deleted, or deleted while being
// flushed) belonged to a memtable already written to a table, which Badger
// syncs, with the manifest that lists it, before it deletes the log. An
// fdatasync of a file flushes the pages written through any mapping of it,
// as the msync of Badger's Sync does.
//
// The logs are kept open between syncs. The first sync lists the directory;
// later ones look only for the log Badger creates next: Badger numbers the
// logs of new memtables one after the other (NNNNN.mem), and creates a log
// before any commit is written to it, so a commit that returned before a
// sync is in a log that is open or that the sync finds. An older log found
// deleted is closed. Where any of that cannot be checked (the directory
// cannot be listed, a log's name is not a number, a log cannot be opened,
// no log is found, another system than Linux), logSync forgets the logs it
// knew and falls back to Badger's Sync; the next sync lists the directory
// again.
//
// A logSync is used by one sync at a time (DB.Sync holds syncMu).
type logSync struct {
	dir string
	// vlogFrom is the size from which a value may be stored in the value
	// log; 0 when every value may be.
	vlogFrom int64
	// vlogWritten is set after a commit that may have written the value log
	// commits (or fails), and cleared by the flush that covers it.
	vlogWritten atomic.Bool
	// full is Badger's Sync; list lists the directory's names, open opens
	// a log for flushing (an error that is a walDoubt when it cannot, not
	// fs.ErrNotExist), flush flushes an open log's data (a walDoubt when it
	// cannot) and gone reports whether an open log has been deleted. Tests
	// replace them to see what is flushed.
	full  func() error
	list  func(dir string) ([]string, error)
	open  func(path string) (*os.File, error)
	flush func(f *os.File) error
	gone  func(f *os.File) bool
	// logs are the memtable logs kept open, oldest first; next is the
	// number of the log Badger creates next. listed is false until the
	// directory has been listed, and again after a doubt.
	logs   []*os.File
	next   int64
	listed bool
}

// newLogSync returns the log flusher of db, open in dir.
func newLogSync(db *bdg.DB, dir string) *logSync {
	o := db.Opts()
	s := &logSync{dir: dir, full: db.Sync, list: listNames, open: openForSync, flush: flushFileData, gone: deleted, vlogFrom: o.ValueThreshold}
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
	if errors.As(err, &doubt) {
		s.close()
		if !vlog {
			// Badger's Sync then, which flushes at least the active
			// memtable's log and the value log.
			return s.full()
		}
		return nil // the full sync above covered what it can
	}
	return err
}

// walDoubt is a failure to find or open the memtable logs (not to flush
// them), after which a sync falls back to Badger's.
type walDoubt struct{ err error }

func (e *walDoubt) Error() string { return e.err.Error() }
func (e *walDoubt) Unwrap() error { return e.err }

// syncWALs flushes every memtable log.
func (s *logSync) syncWALs() error {
	if err := s.find(); err != nil {
		return err
	}
	for i := 0; i < len(s.logs); {
		f := s.logs[i]
		if i < len(s.logs)-1 && s.gone(f) {
			// Its memtable is in a table; the newest log never is
			// before a newer one exists.
			f.Close()
			s.logs = slices.Delete(s.logs, i, i+1)
			continue
		}
		if err := s.flush(f); err != nil {
			return fmt.Errorf("flush %s: %w", f.Name(), err)
		}
		i++
	}
	return nil
}

// find opens the memtable logs not yet open: every log in the directory at
// the first sync, the logs Badger created since at the next ones.
func (s *logSync) find() error {
	if s.listed {
		for {
			f, err := s.open(s.logPath(s.next))
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			s.logs = append(s.logs, f)
			s.next++
		}
	}
	names, err := s.list(s.dir)
	if err != nil {
		return &walDoubt{err}
	}
	var fids []int64
	for _, name := range names {
		num, ok := strings.CutSuffix(name, memFileExt)
		if !ok {
			continue
		}
		fid, err := strconv.ParseInt(num, 10, 64)
		if err != nil || fid < 0 {
			return &walDoubt{fmt.Errorf("memtable log %s: not a number", name)}
		}
		fids = append(fids, fid)
	}
	slices.Sort(fids)
	for _, fid := range fids {
		f, err := s.open(s.logPath(fid))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Written to a table and deleted since the listing.
		case err != nil:
			return err
		default:
			s.logs = append(s.logs, f)
		}
	}
	if len(s.logs) == 0 {
		return &walDoubt{errNoLog}
	}
	s.next, s.listed = fids[len(fids)-1]+1, true
	return nil
}

// logPath is the path of the memtable log numbered fid, as Badger names
// it.
func (s *logSync) logPath(fid int64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%05d%s", fid, memFileExt))
}

// close closes the logs kept open; the next sync lists the directory.
func (s *logSync) close() {
	for _, f := range s.logs {
		f.Close() // read-only
	}
	s.logs, s.listed = nil, false
}

// memFileExt ends the names of Badger's memtable logs.
const memFileExt = ".mem"

// listNames returns the names in directory dir.
func listNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	return names, err
}

// openForSync opens a file to flush it; an error that is not fs.ErrNotExist
// is a walDoubt.
func openForSync(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &walDoubt{err}
	}
	return f, err
}
