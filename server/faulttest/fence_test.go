package faulttest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/server/sse"
)

// gate serves effectGraph's calls: it answers /effect at once and holds the
// first call of /slow until release is closed, answering it {"by":
// "paused"}; later calls of /slow (the replica that took the run over) are
// answered {"by": "live"} at once.
type gate struct {
	srv     *httptest.Server
	held    chan struct{} // closed when the first /slow call arrived
	release chan struct{}
	calls   atomic.Int32
}

func newGate(t *testing.T) *gate {
	g := &gate{held: make(chan struct{}), release: make(chan struct{})}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		by := "live"
		if r.URL.Path == "/slow" && g.calls.Add(1) == 1 {
			close(g.held)
			<-g.release
			by = "paused"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"by": %q}`, by)
	}))
	t.Cleanup(func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
		g.srv.Close()
	})
	return g
}

// link is a TCP proxy to PostgreSQL that can be cut (a network partition):
// while cut, what either side sends is held, and delivered once healed.
type link struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	open   chan struct{} // closed while the link carries data
	// held counts the chunks a client sent while the link was cut.
	held atomic.Int32
}

func newLink(t *testing.T, target string) *link {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &link{ln: ln, target: target, open: make(chan struct{})}
	close(l.open)
	var conns sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		l.heal()
		conns.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			conns.Add(2)
			go func() { defer conns.Done(); l.pipe(s, c, true) }()
			go func() { defer conns.Done(); l.pipe(c, s, false) }()
		}
	}()
	return l
}

// pipe copies from src to dst, holding each chunk while the link is cut.
func (l *link) pipe(dst, src net.Conn, fromClient bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			l.mu.Lock()
			open := l.open
			l.mu.Unlock()
			select {
			case <-open:
			default:
				if fromClient {
					l.held.Add(1)
				}
				<-open
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (l *link) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.open:
		l.open = make(chan struct{})
	default:
	}
}

func (l *link) heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.open:
	default:
		close(l.open)
	}
}

// readStream reads a run's stream to its end: its events, an error event
// with its data.
func readStream(u string) ([]string, error) {
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("join the stream: status %d", resp.StatusCode)
	}
	var events []string
	err = sse.Parse(bufio.NewReader(resp.Body), func(f sse.Frame) error {
		ev := f.Event
		if ev == "error" {
			ev += " " + string(f.Data)
		}
		events = append(events, ev)
		return nil
	})
	return events, err
}

// waitFor polls cond until it holds, failing the test after deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	stop := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(stop) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFenceReplicaPausedPastItsLease pauses (SIGSTOP) the serve replica
// executing a run, in the middle of a node, until its lease has expired and
// a second replica has taken the run over and finished it. The first one
// then resumes (SIGCONT) with its database link cut, so that the node it
// was in finishes and its checkpoint is on the way before it can hear that
// the run is no longer its own; the link then heals. The first replica's
// write must fail (the run's claim moved on) and the replica stop the run
// without touching the thread: its checkpoints form one line, the final
// state is the second replica's, the run succeeded once, and no client got
// a 5xx from either replica.
func TestFenceReplicaPausedPastItsLease(t *testing.T) {
	direct := pgtest.SchemaURL(t, "gcfence")
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	lk := newLink(t, u.Host)
	u.Host = lk.ln.Addr().String()
	viaLink := u.String()

	g := newGate(t)
	graphs := writeGraph(t, "effects", fmt.Sprintf(effectGraph, g.srv.URL))
	serve := func(pg string) *process {
		return startServer(t, graphs, "", nil, "--postgres", pg, "--run-lease", "2s", "--no-studio", "--no-mcp")
	}
	first := serve(viaLink)
	c := newClient()
	var v violations
	const th = "fenced"
	c.must(t, first.url, http.MethodPost, "/threads", map[string]any{"thread_id": th}, http.StatusOK)
	out := c.must(t, first.url, http.MethodPost, "/threads/"+th+"/runs",
		map[string]any{"assistant_id": "effects", "input": turnInput("turn-1"), "stream_mode": []string{"values"}}, http.StatusOK)
	runID := str(field(out, "run_id"))

	// A client follows the run on the first replica throughout.
	type stream struct {
		events []string
		err    error
	}
	streamed := make(chan stream, 1)
	go func() {
		events, err := readStream(first.url + "/threads/" + th + "/runs/" + runID + "/stream")
		streamed <- stream{events, err}
	}()

	select {
	case <-g.held:
	case <-time.After(deadline):
		t.Fatalf("the run never reached its second node:\n%s", first.logs.String())
	}
	if err := first.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	second := serve(direct)
	waitFor(t, "the second replica to finish the run", func() bool {
		code, out, err := c.call(context.Background(), second.url, http.MethodGet, "/threads/"+th+"/runs/"+runID, nil)
		return err == nil && code == http.StatusOK && str(field(out, "status")) == "success"
	})

	lk.cut()
	close(g.release) // the paused node's answer waits in its socket
	if err := first.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first replica to talk to its database again", func() bool { return lk.held.Load() > 0 })
	// Time for the node to finish and its checkpoint to be sent (and held);
	// a shorter wait only lets the replica hear of its lost lease first.
	time.Sleep(time.Second)
	lk.heal()
	waitFor(t, "the first replica to stop the run", func() bool {
		l := first.logs.String()
		return strings.Contains(l, "run lease lost") || strings.Contains(l, "taken over by another replica")
	})
	select {
	case st := <-streamed:
		t.Logf("stream of the run on the paused replica: %v", st.events)
		if n := len(st.events); st.err != nil || n == 0 || !strings.Contains(st.events[n-1], "RunTakenOver") {
			v.add("the server keeps answering", "stream of the run on the first replica: %v %v, want it to end telling the run was taken over", st.events, st.err)
		}
	case <-time.After(deadline):
		v.add("the server keeps answering", "the stream of the run on the first replica never ended")
	}
	// Joined again on the first replica, the run is followed from the
	// database: every frame, to its end.
	events, err := readStream(first.url + "/threads/" + th + "/runs/" + runID + "/stream")
	if n := len(events); err != nil || n == 0 || events[n-1] != "end" || slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "error") }) {
		v.add("joined streams receive every event", "the run joined again on the first replica: %v %v, want its frames to its end", events, err)
	}

	for i, p := range []*process{first, second} {
		code, out, err := c.call(context.Background(), p.url, http.MethodGet, "/threads/"+th+"/state", nil)
		if err != nil || code != http.StatusOK {
			v.add("the server keeps answering", "state on replica %d: %d %v", i+1, code, err)
			continue
		}
		if by := str(field(out, "values", "slow", "by")); by != "live" {
			v.add("the holder's history stays linear", "state on replica %d: slow answered by %q, want the second replica's (live)", i+1, by)
		}
		if log := field(out, "values", "log"); fmt.Sprint(log) != "[turn-1]" {
			v.add("no input applied twice", "state on replica %d: log %v, want [turn-1]", i+1, log)
		}
		code, out, err = c.call(context.Background(), p.url, http.MethodGet, "/threads/"+th+"/runs/"+runID, nil)
		if err != nil || code != http.StatusOK || str(field(out, "status")) != "success" {
			v.add("every run ends in a final state", "run on replica %d: %d %v %v", i+1, code, field(out, "status"), err)
		}
	}
	for _, l := range strings.Split(first.logs.String(), "\n") {
		if strings.Contains(l, "lease") || strings.Contains(l, "taken over") {
			t.Logf("first replica: %s", l)
		}
	}
	for _, e := range c.serverErrors() {
		v.add("the server keeps answering", "%s", e)
	}
	first.stop()
	second.stop()

	db, err := postgres.Open(context.Background(), direct, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkChains(t, db.Checkpointer(), &v)
	snap, err := db.Checkpointer().Latest(context.Background(), th)
	if err != nil {
		t.Fatal(err)
	}
	var slow struct{ By string }
	json.Unmarshal(snap.Values["slow"], &slow)
	if slow.By != "live" {
		v.add("the holder's history stays linear", "stored state: slow answered by %q, want live", slow.By)
	}
	v.report(t, "a serve replica paused (SIGSTOP) past its run's lease while another took the run over", 1)
}
