package runs

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestWorkersReuseGoroutines checks that a function handed over while a
// worker waits runs on that worker, that functions handed over together
// each get a goroutine of their own, that no more than maxIdleWorkers wait,
// and that the waiting ones end with the context.
func TestWorkersReuseGoroutines(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := newWorkers(ctx)

	// Runs one after another: the worker that ran one runs the next (a run
	// handed over just before that worker waits again gets a new one).
	for range 50 {
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done
		waitFor(t, func() bool { return w.idle.Load() >= 1 }, "a worker to wait again")
		time.Sleep(time.Millisecond)
	}
	if n := w.live.Load(); n < 1 || n > 3 {
		t.Errorf("%d worker goroutines after 50 runs one after another, want 1 (3 at most)", n)
	}

	// Runs that overlap each get a goroutine; past maxIdleWorkers, the
	// extra ones end when their run has.
	const overlapping = maxIdleWorkers + 20
	var started, release sync.WaitGroup
	started.Add(overlapping)
	release.Add(1)
	for range overlapping {
		w.run(func() {
			started.Done()
			release.Wait()
		})
	}
	started.Wait() // every function runs at once: none waited for another
	release.Done()
	waitFor(t, func() bool { return w.idle.Load() == maxIdleWorkers }, "the idle workers to settle")
	waitFor(t, func() bool { return w.live.Load() == maxIdleWorkers }, "the extra workers to end")

	cancel()
	waitFor(t, func() bool { return w.live.Load() == 0 }, "the workers to end with the context")
	if n := w.idle.Load(); n != 0 {
		t.Errorf("%d idle workers after the context ended, want 0", n)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
