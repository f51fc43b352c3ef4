package badger

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// ErrDiskFull is returned by writes (and Open) when the data directory's
// filesystem has less free space than Options.MinFree. Badger writes its
// logs through memory-mapped, preallocated files: on a full disk it does not
// fail a write, the process dies (SIGBUS). Refusing writes while some space
// is left turns that crash into this error; nothing written before is lost,
// and writes work again once space is freed.
var ErrDiskFull = fmt.Errorf("the data directory's disk is nearly full (%w)", checkpoint.ErrStorageFull)

// DefaultMinFree is the free space kept on the data directory's filesystem
// when Options.MinFree is 0: Badger's memtable log alone is preallocated at
// 128 MiB.
const DefaultMinFree = 256 << 20

// space watches the free space of the data directory's filesystem.
type space struct {
	dir     string
	min     int64
	checked atomic.Int64 // unix nanoseconds of the last look
	free    atomic.Int64 // bytes free at the last look; -1 when unknown
}

// spaceCheckInterval bounds how often the free space is read.
const spaceCheckInterval = 100 * time.Millisecond

// room returns ErrDiskFull (wrapped, with the figures) when the filesystem
// has less than the minimum free; it reads the free space at most once per
// spaceCheckInterval.
func (s *space) room() error {
	if s == nil || s.min <= 0 {
		return nil
	}
	now := time.Now().UnixNano()
	if now-s.checked.Load() > int64(spaceCheckInterval) {
		free, err := freeBytes(s.dir)
		if err != nil {
			free = -1
		}
		s.free.Store(free)
		s.checked.Store(now)
	}
	free := s.free.Load()
	if free >= 0 && free < s.min {
		return fmt.Errorf("%w: %s has %s free, less than the %s kept free for its logs; free some space (GRAPHCTL_MIN_FREE_MB sets the reserve)",
			ErrDiskFull, s.dir, mib(free), mib(s.min))
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
