//go:build !linux

package badger

import (
	"errors"
	"os"
)

// flushFileData is not trusted outside Linux to flush pages written through
// another process's or descriptor's mapping: syncs fall back to Badger's.
func flushFileData(*os.File) error {
	return &walDoubt{errors.New("flushing a memory-mapped log through a descriptor is not relied on on this system")}
}

// deleted reports false: outside Linux no log is kept open (see
// flushFileData).
func deleted(*os.File) bool { return false }
