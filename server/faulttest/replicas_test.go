package faulttest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/postgres"
	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
	"github.com/graphctl/graphctl/server/sse"
)

// replicaSet is the serve processes sharing one database; a slot is nil
// while its replica is down.
type replicaSet struct {
	mu    sync.Mutex
	procs []*process
}

// pick returns a live replica other than not (-1: any), and its index.
func (rs *replicaSet) pick(not int) (int, *process) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var live []int
	for i, p := range rs.procs {
		if p != nil && i != not {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return -1, nil
	}
	i := live[rand.IntN(len(live))]
	return i, rs.procs[i]
}

func (rs *replicaSet) set(i int, p *process) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.procs[i] = p
}

// replicaRun is one accepted run.
type replicaRun struct {
	run, thread, turn, strategy string
	sentAt, answeredAt          time.Time
}

// joined is what a client joining a run's stream on another replica read.
type joined struct {
	run     string
	replica int
	ids     []int
	events  []string
	lastLog []string // the log of the last values frame
	err     error
}

// TestReplicasOnPostgres runs three graphctl serve replicas on one
// PostgreSQL schema and sends them 200 runs over 50 threads, each to a random
// replica, with mixed multitask strategies; a third of the runs are joined
// (streamed) on another replica than the one that accepted them, and every
// eighth turn copies a random thread on a random replica. Mid-load one
// replica is killed with SIGKILL (its runs are resumed by the others once
// their leases expire) and another is restarted. Afterwards every run is in a
// final state, each thread's checkpoints form one chain, no finished node ran
// twice, no input was applied twice, every joined stream received every
// event of its run, in order, up to its end, and every copy was refused
// (409, a run executing on its thread) or is of a state its thread had: its
// log of turns is a prefix of the thread's.
func TestReplicasOnPostgres(t *testing.T) {
	base := pgtest.URL(t)
	schema := pgtest.Schema(t, "gcreplicas")
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	pgURL := u.String()

	const nRuns, nThreads, killAt, restartAt = 200, 50, 70, 130
	rec := newRecorder(t, effectDelay)
	graphs := writeGraph(t, "effects", fmt.Sprintf(effectGraph, rec.srv.URL))
	var startedMu sync.Mutex
	var started []*process
	start := func() *process {
		p := startServer(t, graphs, "", nil, "--postgres", pgURL, "--run-lease", "2s", "--no-studio", "--no-mcp")
		startedMu.Lock()
		started = append(started, p)
		startedMu.Unlock()
		return p
	}
	rs := &replicaSet{procs: []*process{start(), start(), start()}}
	c := newClient()
	var v violations
	threads := make([]string, nThreads)
	for i := range threads {
		threads[i] = fmt.Sprintf("r%d", i)
		_, p := rs.pick(-1)
		c.must(t, p.url, http.MethodPost, "/threads", map[string]any{"thread_id": threads[i], "if_exists": "do_nothing"}, http.StatusOK)
	}

	var (
		mu       sync.Mutex
		accepted []replicaRun
		joins    []joined
		kills    []time.Time
		copies   []threadCopy
		refused  int
		next     int
		wg, jwg  sync.WaitGroup
	)
	strategies := []string{"enqueue", "enqueue", "enqueue", "enqueue", "enqueue", "enqueue", "reject", "reject", "interrupt", "rollback"}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				if n >= nRuns {
					return
				}
				switch n {
				case killAt:
					i, p := rs.pick(-1)
					rs.set(i, nil)
					p.kill()
					mu.Lock()
					kills = append(kills, time.Now()) // once dead: every call it made is before
					mu.Unlock()
				case restartAt:
					i, p := rs.pick(-1)
					rs.set(i, nil)
					p.stop()
					rs.set(i, start())
				}
				th := threads[rand.IntN(len(threads))]
				turn := fmt.Sprintf("%s/%d", th, n)
				strategy := strategies[rand.IntN(len(strategies))]
				from, p := rs.pick(-1)
				sent := time.Now()
				code, out, err := c.call(context.Background(), p.url, http.MethodPost, "/threads/"+th+"/runs",
					map[string]any{"assistant_id": "effects", "input": turnInput(turn), "multitask_strategy": strategy, "stream_mode": []string{"values"}})
				switch {
				case err != nil:
					// The replica was stopped while answering: the run may or may not exist.
					continue
				case code == http.StatusConflict && strategy == "reject":
					continue
				case code == http.StatusServiceUnavailable && str(field(out, "error", "code")) == "shutting_down":
					continue // sent to the replica being restarted: the client retries elsewhere
				case code != http.StatusOK:
					v.add("the server keeps answering", "create run (%s) on replica %d: %d %v", strategy, from, code, out)
					continue
				}
				r := replicaRun{run: str(field(out, "run_id")), thread: th, turn: turn, strategy: strategy, sentAt: sent, answeredAt: time.Now()}
				mu.Lock()
				accepted = append(accepted, r)
				join := len(accepted)%3 == 0
				mu.Unlock()
				if join {
					jwg.Add(1)
					go func() {
						defer jwg.Done()
						j := joinOn(rs, from, r)
						mu.Lock()
						joins = append(joins, j)
						mu.Unlock()
					}()
				}
				if n%8 == 4 {
					if cp, ok := copyOn(c, rs, threads, &v); ok {
						mu.Lock()
						copies = append(copies, cp)
						mu.Unlock()
					} else {
						mu.Lock()
						refused++
						mu.Unlock()
					}
				}
				time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	_, p := rs.pick(-1)
	waitFinal(t, c, p.url, threads)
	jwg.Wait()
	for _, e := range c.serverErrors() {
		if !strings.Contains(e, "shutting_down") {
			v.add("the server keeps answering", "%s", e)
		}
	}
	for i := range rs.procs {
		if p := rs.procs[i]; p != nil {
			p.stop()
		}
	}
	kills = append(kills, time.Now())

	db, err := postgres.Open(context.Background(), base, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkChains(t, db.Checkpointer(), &v)
	statuses := map[string]string{}
	// Runs on record that no client saw accepted: their create request lost
	// its answer (the replica died or stopped while answering), yet the run
	// may exist and act on its thread like any other.
	var unanswered []replicaRun
	rows, err := db.Pool().Query(context.Background(), `SELECT run_id, status, coalesce(record->>'error', ''),
	thread_id, coalesce(record->>'multitask_strategy', ''), created_at FROM runs WHERE run_id NOT LIKE 'hold:%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, status, msg, thread, strategy string
		var created time.Time
		if err := rows.Scan(&id, &status, &msg, &thread, &strategy, &created); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(accepted, func(r replicaRun) bool { return r.run == id }) {
			unanswered = append(unanswered, replicaRun{run: id, thread: thread, strategy: strategy, sentAt: created, answeredAt: created})
		}
		statuses[id] = status
		if !finalStatuses[status] {
			v.add("every run ends in a final state", "run %s is %q after the system settled", id, status)
		}
		if status == "error" {
			v.add("every run ends in a final state", "run %s ended in error: %s", id, msg)
		}
	}
	rows.Close()
	// A run may end interrupted (or, rolled back, leave no record) only when
	// an interrupt (rollback) run was accepted on its thread after it was
	// sent (not answered before it was), or is on record there, created
	// after it was sent, with its answer lost.
	cancelledBy := func(r replicaRun, strategies ...string) bool {
		by := func(o replicaRun) bool {
			return o.run != r.run && o.thread == r.thread && o.answeredAt.After(r.sentAt) && slices.Contains(strategies, o.strategy)
		}
		return slices.ContainsFunc(accepted, by) || slices.ContainsFunc(unanswered, by)
	}
	succeeded := map[string][]string{}
	for _, r := range accepted {
		status, ok := statuses[r.run]
		switch {
		case !ok && !cancelledBy(r, "rollback"):
			v.add("every run ends in a final state", "accepted run %s (turn %s) has no record and no rollback followed it", r.run, r.turn)
		case status == "success":
			succeeded[r.thread] = append(succeeded[r.thread], r.turn)
		case status == "interrupted" && !cancelledBy(r, "interrupt", "rollback"):
			v.add("every run ends in a final state", "run %s (turn %s) was interrupted with no interrupt or rollback after it", r.run, r.turn)
		}
	}
	for _, th := range threads {
		snap, err := db.Checkpointer().Latest(context.Background(), th)
		if err != nil {
			continue
		}
		checkTurns(th, stringList(snap.Values["log"]), succeeded[th], &v)
	}
	for _, cp := range copies {
		checkCopy(db.Checkpointer(), cp, &v)
	}
	calls := rec.checkEffects(kills, &v)
	streamed := 0
	for _, j := range joins {
		if j.err != nil {
			continue // its replica went down meanwhile
		}
		streamed++
		for i, id := range j.ids {
			if id != i+1 {
				v.add("joined streams receive every event", "run %s joined on replica %d: event ids %v are not 1, 2, 3, …", j.run, j.replica, j.ids)
				break
			}
		}
		if len(j.events) == 0 || j.events[len(j.events)-1] != "end" {
			v.add("joined streams receive every event", "run %s joined on replica %d: stream %v does not end with end", j.run, j.replica, j.events)
		}
		if statuses[j.run] == "success" {
			r := accepted[slices.IndexFunc(accepted, func(r replicaRun) bool { return r.run == j.run })]
			if !slices.Contains(j.lastLog, r.turn) {
				v.add("joined streams receive every event", "run %s joined on replica %d: the last values frame %v lacks the run's turn %s (events %v)", j.run, j.replica, j.lastLog, r.turn, j.events)
			}
		}
	}
	if streamed == 0 {
		t.Error("no stream was joined on another replica")
	}
	resumed := 0
	for _, p := range started {
		resumed += strings.Count(p.logs.String(), "run resumed from an expired lease")
	}
	t.Logf("%d runs sent, %d accepted, %d joined on another replica, %d side-effect calls, %d runs resumed by another replica (after the kill or the restart), %d threads copied, %d copies refused (a run executing) or lost with their replica",
		nRuns, len(accepted), streamed, calls, resumed, len(copies), refused)
	v.report(t, "3 serve replicas on one PostgreSQL, one killed with SIGKILL and one restarted mid-load", nRuns)
}

// threadCopy is a copy of a thread made mid-load.
type threadCopy struct {
	from, id string
	replica  int
}

// copyOn copies a random thread on a random live replica. A copy refused
// because a run executes on the thread (409), or lost with its replica, is
// not one (ok false); any other answer than 200 is a violation.
func copyOn(c *client, rs *replicaSet, threads []string, v *violations) (threadCopy, bool) {
	th := threads[rand.IntN(len(threads))]
	i, p := rs.pick(-1)
	code, out, err := c.call(context.Background(), p.url, http.MethodPost, "/threads/"+th+"/copy", nil)
	switch {
	case err != nil, code == http.StatusConflict:
		return threadCopy{}, false
	case code == http.StatusServiceUnavailable && str(field(out, "error", "code")) == "shutting_down":
		return threadCopy{}, false
	case code != http.StatusOK:
		v.add("a copy is of a state its thread had", "copy of %s on replica %d: %d %v", th, i, code, out)
		return threadCopy{}, false
	}
	return threadCopy{from: th, id: str(field(out, "thread_id")), replica: i}, true
}

// checkCopy checks that a copy's log of turns is a prefix of its thread's:
// the copy was made while no run wrote to the thread, so it holds the turns
// of the runs before it, all of them, and none of a run it cut (whose turn
// may since have been rolled back).
func checkCopy(cp checkpoint.Checkpointer, c threadCopy, v *violations) {
	ctx := context.Background()
	copied, err := cp.Latest(ctx, c.id)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return // a copy of a thread with no checkpoint yet
	}
	if err != nil {
		v.add("a copy is of a state its thread had", "copy %s of %s: %v", c.id, c.from, err)
		return
	}
	orig, err := cp.Latest(ctx, c.from)
	if err != nil {
		v.add("a copy is of a state its thread had", "thread %s: %v", c.from, err)
		return
	}
	have, want := stringList(copied.Values["log"]), stringList(orig.Values["log"])
	if len(have) > len(want) || !slices.Equal(have, want[:len(have)]) {
		v.add("a copy is of a state its thread had", "copy %s of thread %s made on replica %d: log %v is not a prefix of the thread's %v", c.id, c.from, c.replica, have, want)
	}
}

// joinOn joins a run's stream on a live replica other than the one that
// accepted it, and reads it to its end.
func joinOn(rs *replicaSet, from int, r replicaRun) joined {
	i, p := rs.pick(from)
	j := joined{run: r.run, replica: i}
	if p == nil {
		j.err = fmt.Errorf("no other live replica")
		return j
	}
	resp, err := http.Get(p.url + "/threads/" + r.thread + "/runs/" + r.run + "/stream")
	if err != nil {
		j.err = err
		return j
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		j.err = fmt.Errorf("join: status %d", resp.StatusCode)
		return j
	}
	j.err = sse.Parse(bufio.NewReader(resp.Body), func(f sse.Frame) error {
		j.events = append(j.events, f.Event)
		if id, err := strconv.Atoi(f.ID); err == nil {
			j.ids = append(j.ids, id)
		}
		if f.Event == "values" {
			var vals struct {
				Log []string `json:"log"`
			}
			json.Unmarshal(f.Data, &vals)
			j.lastLog = vals.Log
		}
		return nil
	})
	if n := len(j.events); j.err == nil && (n == 0 || j.events[n-1] != "end") {
		// A replica going down ends its streams with an error (or cuts them).
		select {
		case <-p.done:
			j.err = fmt.Errorf("replica %d went down", i)
		case <-time.After(deadline):
		}
	}
	return j
}
