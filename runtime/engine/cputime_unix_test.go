//go:build unix

package engine_test

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time the process has used so far, user and system,
// in all its threads (Badger's and the garbage collector's included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// meterCPU starts measuring the process's CPU time; the function it returns
// reports it per unit of work (units per benchmark iteration) as metric.
// Unlike ns/op, CPU time hardly depends on what else the machine runs.
func meterCPU(b *testing.B) func(units int, metric string) {
	start := processCPU()
	return func(units int, metric string) {
		used := processCPU() - start
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N*units), metric)
	}
}
