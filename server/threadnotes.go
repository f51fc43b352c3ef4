package server

import "sync"

// maxNotedThreads bounds notedThreads; when it is full it starts again
// empty.
const maxNotedThreads = 1 << 16

// notedThreads remembers the threads whose stored record exists and names
// the graph and assistant of their last run, so that the next run on such
// a thread need not read the record again to check it (noteRunOnThread).
// Every write or delete of a thread record in this process forgets the
// thread first; a read that a forget overtook is not remembered (gen), so a
// deleted thread is never remembered as existing. It is used only when no
// other process writes the records (Config.OwnStore). A nil *notedThreads
// remembers nothing.
type notedThreads struct {
	mu  sync.Mutex
	gen uint64
	m   map[string]notedThread
}

type notedThread struct{ graph, assistant string }

func newNotedThreads() *notedThreads { return &notedThreads{m: map[string]notedThread{}} }

// has reports whether the thread is remembered with this graph and assistant.
func (n *notedThreads) has(thread, graph, assistant string) bool {
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[thread] == notedThread{graph, assistant}
}

// generation returns what note compares: take it before reading the record.
func (n *notedThreads) generation() uint64 {
	if n == nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.gen
}

// note remembers the thread as its record was read or written since
// generation gen was taken, unless a forget came in between.
func (n *notedThreads) note(gen uint64, thread, graph, assistant string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.gen != gen {
		return
	}
	if len(n.m) >= maxNotedThreads {
		clear(n.m)
	}
	n.m[thread] = notedThread{graph, assistant}
}

// forget drops a thread whose record is being written or deleted.
func (n *notedThreads) forget(thread string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gen++
	delete(n.m, thread)
}
