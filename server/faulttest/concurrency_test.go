package faulttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/sse"
)

// completions counts, per turn and node, the work nodes that finished (in
// this process: the concurrency test runs the server in process, for the
// race detector).
var completions sync.Map // "turn node" → *atomic.Int32

// workType is a node that works for a few random milliseconds (stopping
// when cancelled) and counts its completions.
var workType = node.Type{
	Name:        "faulttest_work",
	Description: "sleeps a few random milliseconds and counts its completions (tests only)",
	Config:      `{max_ms: *20 | int}`,
	New: func(b node.Builder) (node.Node, error) {
		var cfg struct {
			MaxMS int `json:"max_ms"`
		}
		if err := b.Decode(&cfg); err != nil {
			return nil, err
		}
		if cfg.MaxMS <= 0 {
			cfg.MaxMS = 20
		}
		return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
			select {
			case <-time.After(time.Duration(rand.IntN(cfg.MaxMS)) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			turn, _ := in.State["turn"].(string)
			n, _ := completions.LoadOrStore(turn+" "+in.Node, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			return node.Update{}, nil
		}), nil
	},
}

func init() { node.MustRegister(workType) }

const workGraph = `dsl_version: "graphctl/v1"
name: "work"
state: {
	messages: {type: "messages"}
	turn: {type: "string"}
	log: {type: "list<string>", reducer: "append"}
}
start: "a"
nodes: {
	a: {type: "faulttest_work", next: ["b", "c"]}
	b: {type: "faulttest_work", next: "join"}
	c: {type: "faulttest_work", next: "join"}
	join: {type: "faulttest_work", wait_for: ["b", "c"], next: "note"}
	note: {type: "set", config: set: log: "[turn]", next: "END"}
}
`

// TestConcurrentClients has 50 threads worked on by many clients at once,
// with every multitask strategy and cancels of both kinds, against the
// server in this process (run it with -race): the invariants hold and the
// race detector finds nothing.
func TestConcurrentClients(t *testing.T) {
	// Turn names repeat from one run of the test to the next (-count).
	completions.Clear()
	duration := 10 * time.Second
	if long {
		duration = 60 * time.Second
	}
	const nThreads, nClients = 50, 16
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "work.cue"), []byte(workGraph), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) { return ws.Engine(g, engine.Options{}), nil }, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	defer reg.Close()
	srv, err := server.New(server.Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store(), ChatGraph: "work", NoStudio: true, NoMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, server.ServeOptions{ShutdownGrace: 5 * time.Second}) }()
	base := "http://" + ln.Addr().String()

	c := newClient()
	var v violations
	threads := make([]string, nThreads)
	for i := range threads {
		threads[i] = fmt.Sprintf("c%02d", i)
		c.must(t, base, http.MethodPost, "/threads", map[string]any{"thread_id": threads[i]}, http.StatusOK)
	}
	type created struct{ run, thread, turn, strategy string }
	var mu sync.Mutex
	var runs []created
	var turns atomic.Int64
	var ops, cancels, rejected, streams atomic.Int64
	strategies := []string{"reject", "enqueue", "enqueue", "interrupt", "rollback"}
	end := time.Now().Add(duration)
	var wg sync.WaitGroup
	for w := 0; w < nClients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				ops.Add(1)
				th := threads[rand.IntN(nThreads)]
				switch p := rand.IntN(100); {
				case p < 12: // cancel a recent run of either kind
					mu.Lock()
					var r created
					if len(runs) > 0 {
						r = runs[len(runs)-1-rand.IntN(min(len(runs), 20))]
					}
					mu.Unlock()
					if r.run == "" {
						continue
					}
					action := []string{"interrupt", "rollback"}[rand.IntN(2)]
					code, out, err := c.call(context.Background(), base, http.MethodPost, "/threads/"+r.thread+"/runs/"+r.run+"/cancel?action="+action, nil)
					if err != nil || code != http.StatusAccepted && code != http.StatusConflict && code != http.StatusNotFound {
						v.add("the server keeps answering", "cancel %s: %d %v %v", r.run, code, out, err)
					}
					cancels.Add(1)
				case p < 20: // read
					path := []string{"/threads/" + th + "/state", "/threads/" + th + "/runs", "/threads/" + th + "/history"}[rand.IntN(3)]
					method := http.MethodGet
					if path == "/threads/"+th+"/history" {
						method = http.MethodPost
					}
					if code, out, err := c.call(context.Background(), base, method, path, map[string]any{}); err != nil || code != http.StatusOK {
						v.add("the server keeps answering", "%s %s: %d %v %v", method, path, code, out, err)
					}
				default: // a new run, a streamed one now and then
					turn := fmt.Sprintf("%s/%d", th, turns.Add(1))
					strategy := strategies[rand.IntN(len(strategies))]
					body := map[string]any{"assistant_id": "work", "input": turnInput(turn), "multitask_strategy": strategy}
					if p < 30 {
						streams.Add(1)
						runID, err := streamRun(base+"/threads/"+th+"/runs/stream", body)
						if err != nil {
							v.add("the server keeps answering", "stream run: %v", err)
						} else if runID != "" {
							mu.Lock()
							runs = append(runs, created{runID, th, turn, strategy})
							mu.Unlock()
						} else {
							rejected.Add(1)
						}
						continue
					}
					code, out, err := c.call(context.Background(), base, http.MethodPost, "/threads/"+th+"/runs", body)
					switch {
					case err != nil:
						v.add("the server keeps answering", "create run: %v", err)
					case code == http.StatusOK:
						mu.Lock()
						runs = append(runs, created{str(field(out, "run_id")), th, turn, strategy})
						mu.Unlock()
					case code == http.StatusConflict && strategy == "reject":
						rejected.Add(1)
					default:
						v.add("the server keeps answering", "create run (%s): %d %v", strategy, code, out)
					}
				}
			}
		}()
	}
	wg.Wait()
	waitFinal(t, c, base, threads)

	// Every run is final; successful runs' turns are in their thread's log
	// once, no turn twice; no work node of a turn finished twice.
	status := map[string]string{}
	for _, th := range threads {
		out := c.must(t, base, http.MethodGet, "/threads/"+th+"/runs?limit=1000", nil, http.StatusOK)
		for _, r := range out.([]any) {
			status[str(field(r, "run_id"))] = str(field(r, "status"))
		}
	}
	succeeded := map[string][]string{}
	byStatus := map[string]int{}
	for _, r := range runs {
		s, ok := status[r.run]
		if !ok {
			s = "rolled back" // a rolled-back run leaves no record
		}
		byStatus[s]++
		if ok && !finalStatuses[s] {
			v.add("every run ends in a final state", "run %s is %s", r.run, s)
		}
		if s == "success" {
			succeeded[r.thread] = append(succeeded[r.thread], r.turn)
		}
	}
	for _, th := range threads {
		st := c.must(t, base, http.MethodGet, "/threads/"+th+"/state", nil, http.StatusOK)
		var log []string
		for _, x := range asList(field(st, "values", "log")) {
			log = append(log, str(x))
		}
		checkTurns(th, log, succeeded[th], &v)
	}
	completions.Range(func(k, n any) bool {
		if n.(*atomic.Int32).Load() > 1 {
			v.add("no finished node ran twice", "%s finished %d times", k, n.(*atomic.Int32).Load())
		}
		return true
	})
	for _, e := range c.serverErrors() {
		v.add("the server keeps answering", "%s", e)
	}
	stop()
	if err := <-served; err != nil && err != context.Canceled {
		t.Errorf("serve: %v", err)
	}
	checkChains(t, ws.Checkpointer(), &v)
	t.Logf("%s: %d operations by %d clients on %d threads: %d runs %v, %d rejected as busy, %d cancels, %d streamed",
		duration, ops.Load(), nClients, nThreads, len(runs), byStatus, rejected.Load(), cancels.Load(), streams.Load())
	v.report(t, fmt.Sprintf("%d clients × %d threads × mixed multitask strategies and cancels for %s (in process, -race in CI)", nClients, nThreads, duration), len(runs))
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// streamRun creates a run with /runs/stream and reads its stream to the
// end; it returns the run id, "" when the thread was busy (409).
func streamRun(url string, body map[string]any) (string, error) {
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusConflict {
		return "", nil
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	runID := ""
	err = sse.Parse(bufio.NewReader(resp.Body), func(f sse.Frame) error {
		if f.Event == "metadata" && runID == "" {
			var m struct {
				RunID string `json:"run_id"`
			}
			json.Unmarshal(f.Data, &m)
			runID = m.RunID
		}
		return nil
	})
	return runID, err
}

// checkChains checks that every thread's checkpoints form one readable chain.
func checkChains(t *testing.T, cp checkpoint.Checkpointer, v *violations) {
	ctx := context.Background()
	threads, err := cp.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range threads {
		hist, err := cp.History(ctx, th.ThreadID, checkpoint.ListOptions{})
		if err != nil {
			v.add("checkpoints form one chain", "history of %s: %v", th.ThreadID, err)
			continue
		}
		for i, h := range hist {
			want := ""
			if i+1 < len(hist) {
				want = hist[i+1].ID
			}
			if h.ParentID != want {
				v.add("checkpoints form one chain", "thread %s: checkpoint %s has parent %q, want %q", th.ThreadID, h.ID, h.ParentID, want)
			}
			if _, err := cp.Get(ctx, th.ThreadID, h.ID); err != nil {
				v.add("checkpoints form one chain", "thread %s: checkpoint %s unreadable: %v", th.ThreadID, h.ID, err)
			}
		}
	}
}
