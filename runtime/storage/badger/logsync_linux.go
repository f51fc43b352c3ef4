package badger

import (
	"os"
	"syscall"
)

// flushFileData flushes the data of an open file (fdatasync), written
// through any descriptor or shared mapping of it.
func flushFileData(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// deleted reports whether an open file has no name left (its last link
// removed); false when that cannot be told.
func deleted(f *os.File) bool {
	var st syscall.Stat_t
	return syscall.Fstat(int(f.Fd()), &st) == nil && st.Nlink == 0
}
