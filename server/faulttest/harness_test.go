package faulttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bin is the graphctl binary under test: $GRAPHCTL_BIN, or one built from
// this module for the test run.
var bin string

// long is set by GRAPHCTL_FAULT_LONG=1: more trials, longer runs.
var long = os.Getenv("GRAPHCTL_FAULT_LONG") == "1"

func TestMain(m *testing.M) {
	code := func() int {
		bin = os.Getenv("GRAPHCTL_BIN")
		if bin == "" {
			dir, err := os.MkdirTemp("", "graphctl-faulttest-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			defer os.RemoveAll(dir)
			bin = filepath.Join(dir, "graphctl")
			build := exec.Command("go", "build", "-o", bin, "github.com/graphctl/graphctl/cmd/graphctl")
			build.Stdout, build.Stderr = os.Stderr, os.Stderr
			if err := build.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "build graphctl:", err)
				return 2
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// deadline bounds waits that end only if graphctl works; it guards against a
// hung test and measures nothing.
const deadline = 60 * time.Second

// syncBuffer is a bytes.Buffer safe for a process's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// process is one graphctl serve process.
type process struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	done chan struct{}
}

var servingRE = regexp.MustCompile(`graphctl serving .* on (http://\S+)`)

// startServer runs graphctl serve on graphs with data dir data, on a free
// port, with extra arguments and environment.
func startServer(t *testing.T, graphs, data string, env []string, args ...string) *process {
	t.Helper()
	all := append([]string{"serve", "--graphs", graphs, "--data-dir", data, "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Env = append(os.Environ(), env...)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &process{t: t, cmd: cmd, logs: logs, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		cmd.Wait()
		close(s.done)
	}()
	select {
	case s.url = <-urls:
	case <-s.done:
		t.Fatalf("graphctl serve exited at start:\n%s", logs.String())
	case <-time.After(deadline):
		cmd.Process.Kill()
		t.Fatalf("graphctl serve did not start:\n%s", logs.String())
	}
	t.Cleanup(func() { s.kill() })
	return s
}

// kill ends the process with SIGKILL.
func (s *process) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// stop ends the process with SIGTERM (a graceful stop) and waits.
func (s *process) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(deadline):
		s.kill()
		s.t.Errorf("graphctl serve did not stop on SIGTERM:\n%s", s.logs.String())
	}
}

// exited reports whether the process has ended.
func (s *process) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// client talks to a server and records every answer's status.
type client struct {
	mu       sync.Mutex
	statuses map[int]int
	// fivexx holds the 5xx answers: method, path and body.
	fivexx []string
	http   *http.Client
}

func newClient() *client {
	return &client{statuses: map[int]int{}, http: &http.Client{Timeout: deadline}}
}

// call sends a JSON request; err is a transport error (the server was
// killed), else status and the decoded body.
func (c *client) call(ctx context.Context, base, method, path string, body any) (int, any, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	c.mu.Lock()
	c.statuses[resp.StatusCode]++
	if resp.StatusCode >= 500 {
		c.fivexx = append(c.fivexx, fmt.Sprintf("%s %s → %d %s", method, path, resp.StatusCode, raw))
	}
	c.mu.Unlock()
	var out any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if len(raw) > 0 && dec.Decode(&out) != nil {
		out = string(raw)
	}
	return resp.StatusCode, out, nil
}

// must is call that fails the test on a transport error or an unexpected status.
func (c *client) must(t *testing.T, base, method, path string, body any, want int) any {
	t.Helper()
	code, out, err := c.call(context.Background(), base, method, path, body)
	if err != nil || code != want {
		t.Fatalf("%s %s: %d %v %v; want %d", method, path, code, out, err, want)
	}
	return out
}

// serverErrors returns the 5xx answers seen.
func (c *client) serverErrors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.fivexx...)
}

func field(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// writeGraph writes a graph file into a new graphs directory.
func writeGraph(t *testing.T, name, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name+".cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitFinal polls the runs of threads until none is pending or running.
func waitFinal(t *testing.T, c *client, base string, threads []string) {
	t.Helper()
	stop := time.Now().Add(deadline)
	for {
		busy := ""
		for _, th := range threads {
			code, out, err := c.call(context.Background(), base, http.MethodGet, "/threads/"+th+"/runs?limit=1000", nil)
			if err != nil || code != http.StatusOK {
				busy = fmt.Sprintf("list runs of %s: %d %v", th, code, err)
				break
			}
			for _, r := range out.([]any) {
				if s := str(field(r, "status")); s == "pending" || s == "running" {
					busy = fmt.Sprintf("run %s of %s is %s", str(field(r, "run_id")), th, s)
				}
			}
			if busy != "" {
				break
			}
		}
		if busy == "" {
			return
		}
		if time.Now().After(stop) {
			t.Fatalf("runs did not end: %s", busy)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// violations collects invariant violations by invariant.
type violations struct {
	mu   sync.Mutex
	byID map[string][]string
}

func (v *violations) add(invariant, format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.byID == nil {
		v.byID = map[string][]string{}
	}
	v.byID[invariant] = append(v.byID[invariant], fmt.Sprintf(format, args...))
}

func (v *violations) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, l := range v.byID {
		n += len(l)
	}
	return n
}

// report fails the test listing every violation, and logs the fault table row.
func (v *violations) report(t *testing.T, fault string, trials int) {
	t.Helper()
	t.Logf("FAULT TABLE | %s | %d trials | %d invariant violations", fault, trials, v.count())
	v.mu.Lock()
	defer v.mu.Unlock()
	for inv, list := range v.byID {
		for i, s := range list {
			if i == 10 {
				t.Errorf("%s: … %d more", inv, len(list)-10)
				break
			}
			t.Errorf("%s: %s", inv, s)
		}
	}
}
