//go:build unix

package load

import (
	"os"
	"syscall"
)

// openFlags opens a file without blocking: opening a named pipe for reading
// otherwise waits for a writer, forever.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
