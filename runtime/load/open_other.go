//go:build !unix

package load

import "os"

// openFlags opens a file for reading.
const openFlags = os.O_RDONLY
