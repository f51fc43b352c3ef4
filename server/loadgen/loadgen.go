// Package loadgen measures a graphctl serve process from outside, over TCP,
// as its clients see it: runs per second and their latency percentiles at a
// number of concurrent clients, the delay from a model server sending a token
// to the client parsing its SSE frame, and the resident memory of the serve
// process holding many idle SSE streams. It can start the serve process itself
// (Start) next to a local OpenAI-compatible streaming model server
// (StartModel), which the token and idle-stream measurements need.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// RunsOptions describe a runs-per-second measurement.
type RunsOptions struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:8123.
	URL string
	// Replicas, when set, are the base URLs of several servers sharing one
	// database: client i sends its runs to Replicas[i % len(Replicas)].
	Replicas []string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Clients is the number of concurrent clients, each waiting for its run
	// to end before it starts the next.
	Clients int
	// Duration is how long runs are started.
	Duration time.Duration
	// Threaded runs every client on a thread of its own (POST
	// /threads/{id}/runs/wait, the thread growing turn after turn); otherwise
	// runs are stateless (POST /runs/wait).
	Threaded bool
	// Turns, when positive, bounds a threaded client's thread: after that
	// many runs it goes on on a new thread (created outside the timed
	// runs), so that the figures are those of conversations of at most that
	// many turns rather than of threads that grow for the whole duration.
	Turns int
	// Graph is the assistant (graph name) to run.
	Graph string
	// Input is every run's input.
	Input map[string]any
}

// RunsResult is what a runs measurement saw.
type RunsResult struct {
	Mode      string        `json:"mode"`
	Graph     string        `json:"graph"`
	Clients   int           `json:"clients"`
	Runs      int           `json:"runs"`
	Failures  int           `json:"failures"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	PerSecond float64       `json:"runs_per_second"`
	P50       time.Duration `json:"p50_ns"`
	P90       time.Duration `json:"p90_ns"`
	P99       time.Duration `json:"p99_ns"`
	// ClientCPU is the CPU time this process (the load clients) spent
	// during the measurement, per run: the clients share the machine with
	// the server they measure.
	ClientCPU time.Duration `json:"client_cpu_per_run_ns"`
	// FirstFailure describes the first failed run, if any.
	FirstFailure string `json:"first_failure,omitempty"`
}

// processCPU returns the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Client is an HTTP client for one server.
type Client struct {
	base   string
	apiKey string
	http   *http.Client
}

// NewClient returns a client of the server at base keeping up to conns
// connections open.
func NewClient(base, apiKey string, conns int) *Client {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}
	return &Client{base: strings.TrimRight(base, "/"), apiKey: apiKey, http: &http.Client{Transport: tr}}
}

// Close closes the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// do sends a request with a JSON body (nil for none; json.RawMessage is
// sent as it is) and returns the response.
func (c *Client) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var r io.Reader
	if raw, ok := body.(json.RawMessage); ok {
		r = bytes.NewReader(raw)
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return c.http.Do(req)
}

// call sends a request and decodes a 2xx JSON answer into out (nil to
// discard it).
func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode %q: %w", method, path, data, err)
	}
	return nil
}

// callObject posts a JSON request and checks the answer as checkRunAnswer
// does, reading it into buf.
func (c *Client) callObject(ctx context.Context, path string, body json.RawMessage, buf *bytes.Buffer) error {
	resp, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	return checkRunAnswer(path, resp.StatusCode, buf.Bytes())
}

// checkRunAnswer checks the answer of a /runs/wait request: 200 with the
// run's final values, a JSON object, and not the {"__error__": …} of a run
// that failed. The object is not decoded: only its first member is read,
// and its last byte checked.
func checkRunAnswer(path string, status int, data []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("POST %s: %d %s: %s", path, status, http.StatusText(status), bytes.TrimSpace(data))
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		return fmt.Errorf("POST %s: the answer is not a JSON object: %q", path, data)
	}
	if first := bytes.TrimLeft(trimmed[1:], " \t\r\n"); bytes.HasPrefix(first, []byte(`"__error__"`)) {
		return fmt.Errorf("POST %s: the run failed: %s", path, trimmed)
	}
	return nil
}

// createThread creates a thread and returns its id.
func (c *Client) createThread(ctx context.Context) (string, error) {
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := c.call(ctx, http.MethodPost, "/threads", map[string]any{}, &th); err != nil {
		return "", err
	}
	if th.ThreadID == "" {
		return "", errors.New("POST /threads answered without a thread_id")
	}
	return th.ThreadID, nil
}

// runClient is one load client: it sends its runs over a runConn of its
// own, or through the shared net/http Client for a URL that is not plain
// http://.
type runClient struct {
	c    *Client
	conn *runConn
	buf  bytes.Buffer
}

func newRunClient(c *Client) *runClient {
	rc := &runClient{c: c}
	if conn, err := newRunConn(c.base, c.apiKey); err == nil {
		rc.conn = conn
	}
	return rc
}

func (rc *runClient) close() {
	if rc.conn != nil {
		rc.conn.Close()
	}
}

// run posts a run request to path and checks its answer (checkRunAnswer).
func (rc *runClient) run(ctx context.Context, path string, body []byte) error {
	if rc.conn == nil {
		return rc.c.callObject(ctx, path, body, &rc.buf)
	}
	status, err := rc.conn.post(ctx, path, body, &rc.buf)
	if err != nil {
		return err
	}
	return checkRunAnswer(path, status, rc.buf.Bytes())
}

// createThread creates a thread and returns its id.
func (rc *runClient) createThread(ctx context.Context) (string, error) {
	if rc.conn == nil {
		return rc.c.createThread(ctx)
	}
	status, err := rc.conn.post(ctx, "/threads", []byte("{}"), &rc.buf)
	if err != nil {
		return "", err
	}
	if status/100 != 2 {
		return "", fmt.Errorf("POST /threads: %d %s: %s", status, http.StatusText(status), bytes.TrimSpace(rc.buf.Bytes()))
	}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal(rc.buf.Bytes(), &th); err != nil || th.ThreadID == "" {
		return "", fmt.Errorf("POST /threads answered without a thread_id: %q", rc.buf.Bytes())
	}
	return th.ThreadID, nil
}

// Runs starts runs from opts.Clients concurrent clients for opts.Duration and
// reports how many ended and how long each took. Each client reads every
// answer in full over a keep-alive connection of its own; a run that
// answers anything but 200 with a JSON object, or whose answer is the
// error of a failed run, counts as a failure.
func Runs(ctx context.Context, opts RunsOptions) (RunsResult, error) {
	if opts.Clients < 1 {
		return RunsResult{}, fmt.Errorf("clients must be at least 1, got %d", opts.Clients)
	}
	if opts.Duration <= 0 {
		return RunsResult{}, fmt.Errorf("duration must be positive, got %v", opts.Duration)
	}
	if opts.Turns < 0 {
		return RunsResult{}, fmt.Errorf("turns must not be negative, got %d", opts.Turns)
	}
	c := NewClient(opts.URL, opts.APIKey, opts.Clients)
	defer c.Close()
	clientOf := func(i int) *Client { return c }
	if len(opts.Replicas) > 0 {
		cs := make([]*Client, len(opts.Replicas))
		for i, u := range opts.Replicas {
			cs[i] = NewClient(u, opts.APIKey, opts.Clients)
			defer cs[i].Close()
		}
		clientOf = func(i int) *Client { return cs[i%len(cs)] }
	}
	mode := "stateless"
	paths := make([]string, opts.Clients)
	for i := range paths {
		paths[i] = "/runs/wait"
	}
	if opts.Threaded {
		mode = "threaded"
		for i := range paths {
			id, err := c.createThread(ctx)
			if err != nil {
				return RunsResult{}, err
			}
			paths[i] = "/threads/" + id + "/runs/wait"
		}
	}
	// The request is encoded once, and an answer is checked to be a JSON
	// object without being decoded: the clients share the machine with
	// the server they measure, so they spend as little CPU as they can.
	body, err := json.Marshal(map[string]any{"assistant_id": opts.Graph, "input": opts.Input})
	if err != nil {
		return RunsResult{}, fmt.Errorf("encode the run request: %w", err)
	}
	var (
		mu       sync.Mutex
		lat      []time.Duration
		failures atomic.Int64
		first    atomic.Value
		wg       sync.WaitGroup
	)
	cpu0 := processCPU()
	start := time.Now()
	deadline := start.Add(opts.Duration)
	for i := 0; i < opts.Clients; i++ {
		wg.Add(1)
		go func(c *Client, path string) {
			defer wg.Done()
			rc := newRunClient(c)
			defer rc.close()
			mine := make([]time.Duration, 0, 1024)
			for turn := 0; time.Now().Before(deadline) && ctx.Err() == nil; turn++ {
				if opts.Threaded && opts.Turns > 0 && turn > 0 && turn%opts.Turns == 0 {
					id, err := rc.createThread(ctx)
					if err != nil {
						failures.Add(1)
						first.CompareAndSwap(nil, err.Error())
						continue
					}
					path = "/threads/" + id + "/runs/wait"
				}
				t0 := time.Now()
				if err := rc.run(ctx, path, body); err != nil {
					failures.Add(1)
					first.CompareAndSwap(nil, err.Error())
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}(clientOf(i), paths[i])
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	if err := ctx.Err(); err != nil {
		return RunsResult{}, err
	}
	res := RunsResult{Mode: mode, Graph: opts.Graph, Clients: opts.Clients, Runs: len(lat), Failures: int(failures.Load()),
		Elapsed: elapsed, PerSecond: float64(len(lat)) / elapsed.Seconds()}
	res.P50, res.P90, res.P99 = Percentile(lat, 0.5), Percentile(lat, 0.9), Percentile(lat, 0.99)
	if len(lat) > 0 {
		res.ClientCPU = cpu / time.Duration(len(lat))
	}
	if f, ok := first.Load().(string); ok {
		res.FirstFailure = f
	}
	return res, nil
}

// Percentile returns the p-th percentile (0 < p ≤ 1) of d, sorting d.
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*p)]
}

// RSS returns the resident memory of process pid in bytes, from
// /proc/PID/status (VmRSS).
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("resident memory of process %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS of process %d: %w", pid, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("process %d: no VmRSS in /proc/%d/status", pid, pid)
}

// Counters reads GET /debug/counters of a server started with --debug. It
// returns nil and no error when the server does not serve them.
func (c *Client) Counters(ctx context.Context) (map[string]float64, error) {
	resp, err := c.do(ctx, http.MethodGet, "/debug/counters", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /debug/counters: %s", resp.Status)
	}
	var out map[string]float64
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("GET /debug/counters: %w", err)
	}
	return out, nil
}
