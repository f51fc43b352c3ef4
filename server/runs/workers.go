package runs

import (
	"context"
	"sync/atomic"
)

// maxIdleWorkers is how many idle goroutines a Manager keeps for the next
// runs.
const maxIdleWorkers = 64

// workers runs the executions of runs on goroutines that, once a run has
// ended, wait for the next one: a run then starts on a goroutine whose
// stack has already grown to what executing a graph takes, instead of
// growing a new goroutine's stack, copy by copy, every time. At most
// maxIdleWorkers wait; all of them end when ctx does.
type workers struct {
	ctx  context.Context
	work chan func() // unbuffered: a send succeeds only to a waiting worker
	// idle counts the workers waiting, live all of them.
	idle, live atomic.Int32
}

func newWorkers(ctx context.Context) *workers {
	return &workers{ctx: ctx, work: make(chan func())}
}

// run runs f on a waiting worker, or on a new one when none waits.
func (w *workers) run(f func()) {
	select {
	case w.work <- f:
	default:
		w.live.Add(1)
		go w.loop(f)
	}
}

// loop runs f, then the functions handed to it while it waits.
func (w *workers) loop(f func()) {
	defer w.live.Add(-1)
	for {
		f()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case f = <-w.work:
			w.idle.Add(-1)
		case <-w.ctx.Done():
			w.idle.Add(-1)
			return
		}
	}
}
