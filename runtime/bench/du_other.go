//go:build !unix

package bench

import "io/fs"

// diskUsage is the space a file takes on disk (its size, where blocks are unknown).
func diskUsage(info fs.FileInfo) int64 { return info.Size() }
