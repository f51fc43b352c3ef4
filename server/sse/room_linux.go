package sse

import (
	"net"
	"syscall"
	"unsafe"
)

// Socket memory figures of getsockopt(SO_MEMINFO) (linux/sock_diag.h).
const (
	soMeminfo        = 55
	meminfoSndbuf    = 3
	meminfoWmemQueue = 5
	meminfoVars      = 9
)

// sendRoom returns how many more bytes a TCP connection takes without
// waiting, as its kernel send buffer says: what keeps the buffer at most
// half full, less a margin for the kernel's own bookkeeping of the
// segments. It returns nil for other connections.
func sendRoom(c net.Conn) func() int {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var (
		mi    [meminfoVars]uint32
		errno syscall.Errno
	)
	read := func(fd uintptr) {
		size := uint32(unsafe.Sizeof(mi))
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.SOL_SOCKET, soMeminfo,
			uintptr(unsafe.Pointer(&mi[0])), uintptr(unsafe.Pointer(&size)), 0)
	}
	return func() int {
		if err := rc.Control(read); err != nil || errno != 0 {
			return 0
		}
		return int(int64(mi[meminfoSndbuf])/2 - int64(mi[meminfoWmemQueue]) - roomMargin)
	}
}
