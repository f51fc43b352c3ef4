package runs

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSync counts syncs; each takes a while, as an fsync does.
type fakeSync struct {
	starts, finished atomic.Int64
}

func (f *fakeSync) sync(context.Context) error {
	n := f.starts.Add(1)
	time.Sleep(200 * time.Microsecond)
	for {
		old := f.finished.Load()
		if old >= n || f.finished.CompareAndSwap(old, n) {
			return nil
		}
	}
}

// within fails the test when fn has not returned after a long time (it
// waits for a delay that should have been cut short).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still waiting after 30s", what)
	}
}

// Runs that end together share fsyncs, and each returns after an fsync that
// started after it asked.
func TestGroupSyncShares(t *testing.T) {
	f := &fakeSync{}
	g := &groupSync{sync: f.sync, delay: time.Hour}
	g.cost.Store(int64(time.Millisecond))
	const runs = 16
	for range runs {
		g.started()
	}
	var wg sync.WaitGroup
	var late atomic.Int64
	within(t, "runs ending together", func() {
		for range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				before := f.starts.Load()
				if err := g.Sync(context.Background()); err != nil {
					t.Error(err)
				}
				if f.finished.Load() <= before {
					late.Add(1)
				}
			}()
		}
		wg.Wait()
	})
	if n := late.Load(); n > 0 {
		t.Errorf("%d runs returned before an fsync that started after they asked", n)
	}
	if n := f.starts.Load(); n != 1 {
		t.Errorf("%d runs ending together took %d fsyncs, want 1", runs, n)
	}
}

// A run that ends while no other executes is synced at once; one that ends
// while another executes waits only until that one ends.
func TestGroupSyncWaitsOnlyForExecutingRuns(t *testing.T) {
	f := &fakeSync{}
	g := &groupSync{sync: f.sync, delay: time.Hour}
	g.cost.Store(int64(time.Millisecond))
	g.started()
	within(t, "a lone run", func() { g.Sync(context.Background()) })
	g.started()
	g.started()
	first := make(chan struct{})
	go func() {
		g.Sync(context.Background())
		close(first)
	}()
	within(t, "two runs, the second ending later", func() {
		time.Sleep(10 * time.Millisecond) // the first waits for the second
		g.Sync(context.Background())
		<-first
	})
	// A run whose end is not synced (cut by a shutdown) stops the wait too.
	g.started()
	g.started()
	synced := make(chan struct{})
	go func() {
		g.Sync(context.Background())
		close(synced)
	}()
	within(t, "a run ending while another is cut", func() {
		time.Sleep(10 * time.Millisecond)
		g.ended()
		<-synced
	})
}

// Runs that end while an fsync is under way share the next one, without a
// delay of their own.
func TestGroupSyncSharesTheNextSync(t *testing.T) {
	release := make(chan struct{})
	var syncs atomic.Int64
	g := &groupSync{delay: time.Hour, sync: func(context.Context) error {
		if syncs.Add(1) == 1 {
			<-release // the first fsync takes until the others have asked
		}
		return nil
	}}
	g.cost.Store(int64(time.Millisecond))
	first := make(chan struct{})
	g.started()
	go func() {
		g.Sync(context.Background())
		close(first)
	}()
	for syncs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	// A long run keeps executing: the runs ending during the fsync do not
	// wait for it (the delay is an hour), only for the fsync under way.
	g.started()
	const waiting = 5
	var wg sync.WaitGroup
	for range waiting {
		wg.Add(1)
		g.started()
		go func() {
			defer wg.Done()
			g.Sync(context.Background())
		}()
	}
	within(t, "runs asking while an fsync is under way", func() {
		for {
			g.mu.Lock()
			n := 0
			if g.next != nil {
				n = g.next.members
			}
			g.mu.Unlock()
			if n == waiting {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	close(release)
	within(t, "runs waiting for the next fsync", func() {
		wg.Wait()
		<-first
	})
	if n := syncs.Load(); n != 2 {
		t.Errorf("%d runs ending during an fsync took %d fsyncs in all, want 2 (the one under way and one for them)", waiting, n)
	}
}
