package badger

import (
	"os"
	"syscall"
)

// syncFileData flushes the data of the file at path (fdatasync), written
// through any descriptor or shared mapping of it.
func syncFileData(path string) error {
	return syncFileWith(path, func(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) })
}
