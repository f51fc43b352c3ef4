//go:build !linux

package evalguard

import "syscall"

// childAttr has no parent-death signal outside Linux; the child is killed
// when the load's context ends.
func childAttr() *syscall.SysProcAttr { return nil }
