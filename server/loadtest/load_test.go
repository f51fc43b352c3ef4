package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/graphctl/graphctl/builtin-nodes/appliance"
	_ "github.com/graphctl/graphctl/builtin-nodes/extract"
	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	_ "github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server"
	"github.com/graphctl/graphctl/server/graphs"
	"github.com/graphctl/graphctl/server/sse"
)

var (
	load      = flag.Bool("load", false, "run the load measurements")
	runsN     = flag.Int("load.runs", 5000, "slot-filling runs to make")
	workers   = flag.Int("load.workers", 64, "concurrent clients for the runs measurement")
	streamsN  = flag.Int("load.streams", 1000, "SSE streams to hold open")
	tokensN   = flag.Int("load.tokens", 2000, "tokens for the latency measurement")
	holdGates sync.Map // thread id -> chan struct{}
)

func TestMain(m *testing.M) {
	node.MustRegister(node.Type{Name: "loadtest_hold", Description: "waits until released (load tests)", Config: `{}`,
		New: func(node.Builder) (node.Node, error) {
			return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
				ch, _ := holdGates.LoadOrStore(in.ThreadID, make(chan struct{}))
				select {
				case <-ch.(chan struct{}):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return nil, nil
			}), nil
		}})
	node.MustRegister(node.Type{Name: "loadtest_tokens", Description: "emits timestamped text tokens (load tests)", Config: `{}`,
		New: func(node.Builder) (node.Node, error) {
			return node.Func(func(ctx context.Context, in *node.Input) (node.Update, error) {
				for i := 0; i < *tokensN; i++ {
					in.Emit(event.Event{Type: event.Text, Payload: map[string]any{"delta": strconv.FormatInt(time.Now().UnixNano(), 10) + " "}})
					time.Sleep(200 * time.Microsecond)
				}
				return nil, nil
			}), nil
		}})
	os.Exit(m.Run())
}

const extraGraphs = `
-- hold.cue --
dsl_version: "graphctl/v1"
name: "hold"
state: messages: {type: "messages"}
start: "wait"
nodes: wait: {type: "loadtest_hold", next: "END"}
-- tokens.cue --
dsl_version: "graphctl/v1"
name: "tokens"
state: messages: {type: "messages"}
start: "talk"
nodes: talk: {type: "loadtest_tokens", next: "END"}
`

func setup(t *testing.T) (*httptest.Server, *server.Server) {
	dir := t.TempDir()
	for _, f := range []string{"slot_filling.cue", "slot_filling_test.cue"} {
		b, err := os.ReadFile(filepath.Join("../../graphs", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	for _, part := range strings.Split(extraGraphs, "-- ")[1:] {
		name, body, _ := strings.Cut(part, " --\n")
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, engine.Options{}), nil
	}, nil)
	if err != nil || reg == nil {
		t.Fatalf("graphs: %v %v", err, diags)
	}
	srv, err := server.New(server.Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Runs().Shutdown(ctx)
		reg.Close()
		ws.Close()
	})
	return hs, srv
}

func post(c *http.Client, url string, body any) (*http.Response, error) {
	b, _ := json.Marshal(body)
	return c.Post(url, "application/json", bytes.NewReader(b))
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*p)]
}

func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

func TestLoad(t *testing.T) {
	if !*load {
		t.Skip("load measurements run with -load")
	}
	hs, srv := setup(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048, MaxConnsPerHost: 0}}

	t.Run("open SSE streams", func(t *testing.T) {
		runtime.GC()
		before := rssMB()
		streams := make([]*http.Response, *streamsN)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 128)
		for i := 0; i < *streamsN; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				defer func() { <-sem }()
				thread := fmt.Sprintf("hold-%d", i)
				post(client, hs.URL+"/threads", map[string]any{"thread_id": thread})
				resp, err := post(client, hs.URL+"/threads/"+thread+"/runs/stream", map[string]any{"assistant_id": "hold", "input": map[string]any{}})
				if err != nil {
					return
				}
				// Read the metadata frame: the stream is open and the run started.
				br := bufio.NewReader(resp.Body)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\n" {
						break
					}
				}
				streams[i] = resp
			}(i)
		}
		wg.Wait()
		runtime.GC()
		after := rssMB()
		t.Logf("%d SSE streams open (%d active in metrics, %d runs running): process RSS %.1f MB (%.1f MB before; server and clients in one process)",
			*streamsN, srv.Metrics().ActiveStreams(), srv.Runs().ActiveCount(), after, before)
		for i := 0; i < *streamsN; i++ {
			ch, _ := holdGates.LoadOrStore(fmt.Sprintf("hold-%d", i), make(chan struct{}))
			close(ch.(chan struct{}))
		}
		for _, r := range streams {
			if r != nil {
				sse.Parse(r.Body, func(sse.Frame) error { return nil })
				r.Body.Close()
			}
		}
	})

	t.Run("runs per second", func(t *testing.T) {
		var next atomic.Int64
		lat := make([]time.Duration, *runsN)
		var failures atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := next.Add(1) - 1
					if i >= int64(*runsN) {
						return
					}
					t0 := time.Now()
					resp, err := post(client, hs.URL+"/runs/wait", map[string]any{"assistant_id": "slot_filling",
						"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "My dishwasher WDT780SAEM1 is leaking"}}}})
					if err != nil {
						failures.Add(1)
						continue
					}
					var out map[string]any
					json.NewDecoder(resp.Body).Decode(&out)
					resp.Body.Close()
					if resp.StatusCode != 200 || out["model"] != "WDT780SAEM1" {
						failures.Add(1)
					}
					lat[i] = time.Since(t0)
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		t.Logf("slot_filling /runs/wait (stateless thread, Badger): %d runs, %d workers, %.0f runs/s, p50 %v, p99 %v, failures %d",
			*runsN, *workers, float64(*runsN)/el.Seconds(), percentile(lat, 0.5), percentile(lat, 0.99), failures.Load())

		// Stateful: one thread per worker, turn after turn.
		next.Store(0)
		lat2 := make([]time.Duration, *runsN)
		start = time.Now()
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				thread := fmt.Sprintf("load-%d", w)
				post(client, hs.URL+"/threads", map[string]any{"thread_id": thread})
				for {
					i := next.Add(1) - 1
					if i >= int64(*runsN) {
						return
					}
					t0 := time.Now()
					resp, err := post(client, hs.URL+"/threads/"+thread+"/runs/wait", map[string]any{"assistant_id": "slot_filling",
						"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "My dishwasher WDT780SAEM1 is leaking"}}}})
					if err == nil {
						resp.Body.Close()
					}
					lat2[i] = time.Since(t0)
				}
			}(w)
		}
		wg.Wait()
		el = time.Since(start)
		t.Logf("slot_filling /threads/{id}/runs/wait (%d threads, growing history): %.0f runs/s, p50 %v, p99 %v",
			*workers, float64(*runsN)/el.Seconds(), percentile(lat2, 0.5), percentile(lat2, 0.99))
	})

	t.Run("token to SSE frame", func(t *testing.T) {
		resp, err := post(client, hs.URL+"/runs/stream", map[string]any{"assistant_id": "tokens", "input": map[string]any{}, "stream_mode": "messages-tuple"})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var lat []time.Duration
		sse.Parse(resp.Body, func(f sse.Frame) error {
			now := time.Now()
			if f.Event != "messages" {
				return nil
			}
			var tuple []map[string]any
			if json.Unmarshal(f.Data, &tuple) != nil || len(tuple) == 0 {
				return nil
			}
			content, _ := tuple[0]["content"].(string)
			ns, err := strconv.ParseInt(strings.TrimSpace(content), 10, 64)
			if err == nil {
				lat = append(lat, now.Sub(time.Unix(0, ns)))
			}
			return nil
		})
		t.Logf("token emitted by a node to SSE frame parsed at the client: %d tokens, median %v, p99 %v",
			len(lat), percentile(lat, 0.5), percentile(lat, 0.99))
	})
}
