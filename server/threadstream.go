package server

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/server/runs"
	"github.com/graphctl/graphctl/server/sse"
)

// threadStreamModes are the modes of GET /threads/{thread}/stream, as
// LangGraph's Agent Server has them: run_modes (every run's frames, each
// run ended by a run_done frame; the default), lifecycle (only each run's
// metadata, error and run_done frames) and state_update (a state_update
// frame for each update of the thread's state through POST
// /threads/{thread}/state; runs write none).
var threadStreamModes = []string{"run_modes", "lifecycle", "state_update"}

// stateUpdateIDPrefix begins the frame id of a state_update frame, which
// the checkpoint id the update wrote follows.
const stateUpdateIDPrefix = "state_update:"

// threadStreamPoll is how often an open thread stream looks for the
// thread's next run.
const threadStreamPoll = 100 * time.Millisecond

// threadNotice is what an open thread stream is told of its thread: a run
// submitted on it, a state update written to it, or (neither) that the
// thread is deleted.
type threadNotice struct {
	run    *runs.Active
	update *sse.Frame
}

// threadWatchers tells the open thread streams of the runs submitted on
// their threads, so that a run that ends between two looks is not missed,
// and of the updates of their state.
type threadWatchers struct {
	n  atomic.Int32 // open streams: submit skips the lock when none
	mu sync.Mutex
	m  map[string]map[chan threadNotice]struct{}
}

// watch returns a channel that receives the notices of thread, and the
// function that stops the watch.
func (w *threadWatchers) watch(thread string) (<-chan threadNotice, func()) {
	ch := make(chan threadNotice, 16)
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]map[chan threadNotice]struct{}{}
	}
	if w.m[thread] == nil {
		w.m[thread] = map[chan threadNotice]struct{}{}
	}
	w.m[thread][ch] = struct{}{}
	w.n.Add(1)
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.m[thread], ch)
		if len(w.m[thread]) == 0 {
			delete(w.m, thread)
		}
		w.n.Add(-1)
		w.mu.Unlock()
	}
}

// notify hands a submitted run to the streams watching its thread (nil:
// the thread is deleted); a stream that is behind by 16 notices misses this
// one (it still sees the run while it runs).
func (w *threadWatchers) notify(thread string, a *runs.Active) {
	w.send(thread, threadNotice{run: a})
}

// notifyStateUpdate hands the state_update frame of an update of thread's
// state to the streams watching it.
func (w *threadWatchers) notifyStateUpdate(thread string, f sse.Frame) {
	w.send(thread, threadNotice{update: &f})
}

func (w *threadWatchers) send(thread string, n threadNotice) {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.m[thread] {
		select {
		case ch <- n:
		default:
		}
	}
}

// publishStateUpdate tells the thread streams of root in mode state_update
// that values were written to its state as asNode, making checkpoint
// cpID of cpThread (root, or one of its subgraphs' threads). The frame's
// data is the thread, the new checkpoint's config and the update as it was
// sent.
func (s *Server) publishStateUpdate(root, cpThread, cpID, asNode string, values any) {
	data := map[string]any{"thread_id": root, "checkpoint": cpConfig(cpThread, cpID), "values": values}
	if asNode != "" {
		data["as_node"] = asNode
	}
	s.watchers.notifyStateUpdate(root, sse.Frame{ID: stateUpdateIDPrefix + cpID, Event: "state_update", Data: mustJSONBytes(data)})
}

// threadStreamFilter is what a thread stream's modes ask for.
type threadStreamFilter struct {
	// runs: follow the thread's runs; lifecycle: of those, only the
	// metadata, error and run_done frames.
	runs, lifecycle bool
	// stateUpdates: the thread's state_update frames.
	stateUpdates bool
}

// parseThreadStreamModes reads the modes of a thread stream (none means
// run_modes).
func parseThreadStreamModes(modes []string) (threadStreamFilter, error) {
	for _, m := range modes {
		if !slices.Contains(threadStreamModes, m) {
			return threadStreamFilter{}, invalid("stream_mode %q of a thread stream is not one of %s", m, strings.Join(threadStreamModes, ", "))
		}
	}
	if len(modes) == 0 {
		return threadStreamFilter{runs: true}, nil
	}
	all := slices.Contains(modes, "run_modes")
	lifecycle := slices.Contains(modes, "lifecycle")
	return threadStreamFilter{runs: all || lifecycle, lifecycle: lifecycle && !all, stateUpdates: slices.Contains(modes, "state_update")}, nil
}

// joinThreadStream serves GET /threads/{thread}/stream: the frames of each
// run on the thread, one after another, and the updates of its state, as
// LangGraph's Agent Server streams them (see threadStreamModes). The stream
// stays open until the client closes it or the thread is deleted. Frame ids
// of runs are RUN_ID:SEQ; a reconnect with Last-Event-ID goes on after that
// frame when its run is still running, else with the thread's next run.
// State updates are streamed as they happen, under the id
// state_update:CHECKPOINT_ID (a reconnect after one goes on with the
// thread's next run or update).
func (s *Server) joinThreadStream(c *gin.Context) {
	thread := c.Param("thread")
	c.Set(ctxThreadID, thread)
	if err := validID("thread", thread); err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.loadThread(c, thread); err != nil {
		s.fail(c, err)
		return
	}
	filter, err := parseThreadStreamModes(append(queryList(c, "stream_mode"), queryList(c, "stream_modes")...))
	if err != nil {
		s.fail(c, err)
		return
	}
	lastRun, after := "", 0
	if id := c.GetHeader("Last-Event-ID"); id != "" && id != "-" && id != "-1" && !strings.HasPrefix(id, stateUpdateIDPrefix) {
		run, seq, ok := strings.Cut(id, ":")
		n, err := strconv.Atoi(seq)
		if !ok || err != nil || n < 0 {
			s.fail(c, invalid("Last-Event-ID %q is not an event id of a thread stream (RUN_ID:SEQ or %sCHECKPOINT_ID)", id, stateUpdateIDPrefix))
			return
		}
		lastRun, after = run, n
	}
	notices, stop := s.watchers.watch(thread)
	defer stop()
	// Where the SDK reconnects (with Last-Event-ID) when the stream breaks.
	c.Header("Location", c.Request.URL.Path)
	w := sse.Prepare(c.Writer)
	s.metrics.StreamOpened()
	defer s.metrics.StreamClosed()
	ctx := c.Request.Context()
	poll := time.NewTicker(threadStreamPoll)
	defer poll.Stop()
	keepAlive := time.NewTicker(s.cfg.KeepAlive)
	defer keepAlive.Stop()
	done := map[string]bool{}
	follow := func(a *runs.Active) bool {
		rec := a.Record()
		if !filter.runs || done[rec.RunID] {
			return true
		}
		from := 0
		if rec.RunID == lastRun {
			from = after
		}
		done[rec.RunID] = true
		return s.pipeThreadRun(ctx, w, a, from, filter.lifecycle)
	}
	for {
		if filter.runs {
			if a, ok := s.runs.Busy(thread); ok && !follow(a) {
				return
			}
		}
		select {
		case n := <-notices:
			switch {
			case n.update != nil:
				if filter.stateUpdates && w.Write(*n.update) != nil {
					return
				}
			case n.run == nil:
				return // the thread is deleted
			case !follow(n.run):
				return // the client is gone
			}
		case <-poll.C:
		case <-keepAlive.C:
			if w.Comment("keep-alive") != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// pipeThreadRun writes one run's frames after seq after to a thread stream
// and a run_done frame when it ends; false when the client is gone.
func (s *Server) pipeThreadRun(ctx context.Context, w *sse.Writer, a *runs.Active, after int, lifecycle bool) bool {
	rec := a.Record()
	// Frame ids are RUN_ID:SEQ.
	idPrefix := rec.RunID + ":"
	tick := time.NewTicker(s.cfg.KeepAlive)
	defer tick.Stop()
	for {
		entries, closed, wake := a.Buf.Since(after)
		for _, e := range entries {
			after = e.Seq
			if e.Frame.Event == "end" || lifecycle && e.Frame.Event != "metadata" && e.Frame.Event != "error" {
				continue
			}
			if w.WriteWithIDPrefix(idPrefix, e.Frame) != nil {
				return false
			}
		}
		if closed {
			rec = a.Record()
			return w.Write(sse.Frame{ID: rec.RunID + ":" + strconv.Itoa(after+1), Event: "run_done",
				Data: mustJSONBytes(map[string]any{"run_id": rec.RunID, "thread_id": rec.ThreadID, "status": rec.Status})}) == nil
		}
		select {
		case <-wake:
		case <-tick.C:
			if w.Comment("keep-alive") != nil {
				return false
			}
		case <-ctx.Done():
			return false
		}
	}
}

// joinStatelessStream serves GET /runs/{run}/stream, the SDK's
// joinStream(null, runId): a stateless run's frames while it runs. As on
// the Agent Server, a run that is not running (ended, or unknown) streams
// nothing.
func (s *Server) joinStatelessStream(c *gin.Context) {
	run := c.Param("run")
	c.Set(ctxRunID, run)
	if err := validID("run", run); err != nil {
		s.fail(c, err)
		return
	}
	a, ok := s.runs.Get(run)
	if !ok {
		w := sse.Prepare(c.Writer)
		w.Write(sse.Frame{Event: "end", Data: []byte("null")})
		return
	}
	rec := a.Record()
	c.Params = append(c.Params, gin.Param{Key: "thread", Value: rec.ThreadID})
	s.joinStream(c)
}
