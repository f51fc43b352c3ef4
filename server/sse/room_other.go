//go:build !linux

package sse

import "net"

// sendRoom returns nil: the send buffer of a connection is read on Linux
// only, so elsewhere TryWrite never writes.
func sendRoom(net.Conn) func() int { return nil }
