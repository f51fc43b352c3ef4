//go:build !linux

package badger

import "errors"

// syncFileData is not trusted outside Linux to flush pages written through
// another process's or descriptor's mapping: syncs fall back to Badger's.
func syncFileData(string) error {
	return &walDoubt{errors.New("flushing a memory-mapped log through a descriptor is not relied on on this system")}
}
