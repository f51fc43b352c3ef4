// Package faulttest is the fault-injection suite: its tests run the real
// graphctl binary (and, for the race detector, the server in process) under
// injected faults — a model server that rate-limits, fails and cuts its
// streams, an MCP server that crashes, hangs or answers garbage, kill -9 at
// random points of runs, a full disk, many clients racing on the same
// threads, three serve replicas on one PostgreSQL with one killed and one
// restarted mid-load, a replica paused (SIGSTOP) past its run's lease while
// another takes the run over — and check the invariants that must hold whatever happens:
//
//   - each thread's checkpoints form one chain, every one of them readable;
//   - every run ends in a final state (success, error or interrupted);
//   - a node that finished is not run again (a side effect seen twice needs
//     a kill between the two);
//   - no input is applied twice, and the input of a successful run once;
//   - the server keeps answering, and never with a 5xx.
//
// The suite runs in CI in a few minutes; GRAPHCTL_FAULT_LONG=1 runs each
// fault longer (more trials, the 60-second concurrency run). The package
// holds tests only.
package faulttest
