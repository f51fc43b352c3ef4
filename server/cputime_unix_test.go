//go:build unix

package server

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU starts measuring the process's CPU time (user and system, every
// goroutine, the collector's too); the function it returns reports it per
// operation as cpu-ns/op, which a busy machine inflates far less than
// wall-clock time.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() { b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op") }
}

// processCPU is the CPU time the process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
