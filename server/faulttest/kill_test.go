package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// effectGraph runs two side effects (HTTP calls to the recorder, the second
// slow enough to be cut) and then records the turn in its log.
const effectGraph = `dsl_version: "graphctl/v1"
name: "effects"
state: {
	messages: {type: "messages"}
	turn: {type: "string"}
	effect: {type: "any"}
	slow: {type: "any"}
	log: {type: "list<string>", reducer: "append"}
}
start: "effect"
nodes: {
	effect: {type: "http", config: {method: "POST", url: "%[1]s/effect", json_body: {turn: "turn"}, output: "effect"}, next: "slow"}
	slow: {type: "http", config: {method: "POST", url: "%[1]s/slow", json_body: {turn: "turn"}, output: "slow"}, next: "note"}
	note: {type: "set", config: set: log: "[turn]", next: "END"}
}
`

func effectDelay(endpoint string) time.Duration {
	if endpoint == "/slow" {
		return time.Duration(20+rand.IntN(150)) * time.Millisecond
	}
	return time.Duration(rand.IntN(20)) * time.Millisecond
}

func turnInput(turn string) map[string]any {
	return map[string]any{"turn": turn, "messages": []any{map[string]any{"role": "user", "content": turn}}}
}

// TestKillServeDuringRuns submits runs to graphctl serve and kills it with
// SIGKILL at random points, restarting it each time on the same data dir;
// the restarted server resumes what was cut.
func TestKillServeDuringRuns(t *testing.T) {
	runs := 36
	if long {
		runs = 150
	}
	rec := newRecorder(t, effectDelay)
	graphs := writeGraph(t, "effects", fmt.Sprintf(effectGraph, rec.srv.URL))
	data := filepath.Join(t.TempDir(), "data")
	c := newClient()
	var v violations
	threads := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	type submitted struct{ run, thread, turn string }
	var accepted []submitted
	var kills []time.Time
	n := 0
	for round := 0; n < runs; round++ {
		srv := startServer(t, graphs, data, nil)
		if code, _, err := c.call(context.Background(), srv.url, http.MethodGet, "/ok", nil); err != nil || code != http.StatusOK {
			v.add("the server keeps answering", "GET /ok after restart %d: %d %v", round, code, err)
		}
		for _, th := range threads {
			c.must(t, srv.url, http.MethodPost, "/threads", map[string]any{"thread_id": th, "if_exists": "do_nothing"}, http.StatusOK)
		}
		killAt := time.Now().Add(time.Duration(50+rand.IntN(500)) * time.Millisecond)
		for i := 0; i < 5 && n < runs; i++ {
			th := threads[rand.IntN(len(threads))]
			turn := fmt.Sprintf("%s/%d", th, n)
			n++
			code, out, err := c.call(context.Background(), srv.url, http.MethodPost, "/threads/"+th+"/runs",
				map[string]any{"assistant_id": "effects", "input": turnInput(turn), "multitask_strategy": "enqueue"})
			switch {
			case err != nil:
				// Killed while answering: the run may or may not exist.
			case code == http.StatusOK:
				accepted = append(accepted, submitted{run: str(field(out, "run_id")), thread: th, turn: turn})
			default:
				v.add("the server keeps answering", "create run: %d %v", code, out)
			}
			time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		}
		time.Sleep(time.Until(killAt))
		srv.kill()
		kills = append(kills, time.Now()) // once dead: every call it made is before

	}
	srv := startServer(t, graphs, data, nil)
	waitFinal(t, c, srv.url, threads)
	for _, e := range c.serverErrors() {
		v.add("the server keeps answering", "%s", e)
	}
	srv.stop()
	kills = append(kills, time.Now())

	recs, latest := checkDataDir(t, data, &v)
	succeeded := map[string][]string{}
	for _, a := range accepted {
		r, ok := recs[a.run]
		switch {
		case !ok:
			v.add("every run ends in a final state", "accepted run %s (turn %s) has no record after the restarts", a.run, a.turn)
		case r.Status == "success":
			succeeded[a.thread] = append(succeeded[a.thread], a.turn)
		default:
			v.add("every run ends in a final state", "accepted run %s (turn %s) ended %s (%s); kills must not fail runs", a.run, a.turn, r.Status, r.Error)
		}
	}
	for _, th := range threads {
		checkTurns(th, stringList(latest[th]["log"]), succeeded[th], &v)
	}
	calls := rec.checkEffects(kills, &v)
	t.Logf("%d runs submitted (%d accepted), %d kills, %d side-effect calls", n, len(accepted), len(kills)-1, calls)
	v.report(t, "kill -9 of graphctl serve at random points, restart, resume", n)
}

// TestKillRunAndResume kills graphctl run at random points of a turn and
// continues the thread with graphctl resume until the turn completes.
func TestKillRunAndResume(t *testing.T) {
	turns := 10
	if long {
		turns = 40
	}
	rec := newRecorder(t, effectDelay)
	dir := writeGraph(t, "effects", fmt.Sprintf(effectGraph, rec.srv.URL))
	graph := filepath.Join(dir, "effects.cue")
	data := filepath.Join(t.TempDir(), "data")
	var v violations
	var kills []time.Time
	var done []string
	for i := 0; i < turns; i++ {
		turn := fmt.Sprintf("cli/%d", i)
		input := fmt.Sprintf(`{"turn": %q, "messages": [{"role": "user", "content": %q}]}`, turn, turn)
		cmd := exec.Command(bin, "run", graph, "--data-dir", data, "--thread", "cli", "--input", input, "--json")
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				v.add("every run ends in a final state", "run of turn %s failed without a kill: %v\n%s", turn, err, out.String())
			} else {
				done = append(done, turn)
			}
			continue
		case <-time.After(time.Duration(rand.IntN(250)) * time.Millisecond):
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		kills = append(kills, time.Now()) // once dead: every call it made is before
		// Resume until the turn is in the log; a kill before the input was
		// saved leaves nothing of the turn, which is then sent again.
		completed := false
		for attempt := 0; attempt < 4 && !completed; attempt++ {
			res, err := exec.Command(bin, "resume", graph, "--data-dir", data, "--thread", "cli", "--json").CombinedOutput()
			if err != nil && strings.Contains(string(res), "no thread") || err == nil && !slices.Contains(finalLog(string(res)), turn) {
				res, err = exec.Command(bin, "run", graph, "--data-dir", data, "--thread", "cli", "--input", input, "--json").CombinedOutput()
			}
			if err == nil && slices.Contains(finalLog(string(res)), turn) {
				completed = true
				done = append(done, turn)
			} else if attempt == 3 {
				v.add("every run ends in a final state", "turn %s did not complete after a kill: %v\n%s", turn, err, res)
			}
		}
	}
	_, latest := checkDataDir(t, data, &v)
	checkTurns("cli", stringList(latest["cli"]["log"]), done, &v)
	calls := rec.checkEffects(kills, &v)
	t.Logf("%d turns, %d kills, %d side-effect calls", turns, len(kills), calls)
	v.report(t, "kill -9 of graphctl run at random points, graphctl resume", turns)
}

// finalLog reads the log field of the final state graphctl run --json printed.
func finalLog(out string) []string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var done struct {
		Payload struct {
			State struct {
				Log []string `json:"log"`
			} `json:"state"`
		} `json:"payload"`
	}
	json.Unmarshal([]byte(lines[len(lines)-1]), &done)
	return done.Payload.State.Log
}
