package evalguard

import "syscall"

// childAttr makes the child die with its parent.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
