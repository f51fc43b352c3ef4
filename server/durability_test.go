package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// child is a server process running this test binary in child mode.
type child struct {
	cmd  *exec.Cmd
	addr string
}

func startChild(t *testing.T, data, gate, addr string, fail bool) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GRAPHCTL_SERVERTEST_CHILD=1", "GRAPHCTL_SERVERTEST_DATA="+data,
		"GRAPHCTL_SERVERTEST_ADDR="+addr, gateEnv+"="+gate)
	if fail {
		cmd.Env = append(cmd.Env, "GRAPHCTL_SERVERTEST_FAIL=1")
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, addr: addr}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/ok"); err == nil {
			resp.Body.Close()
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("server child did not come up")
	return nil
}

func (c *child) call(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+c.addr+path, r)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestKilledServerResumesRuns kills the server with SIGKILL while a run is
// inside a slow node, restarts it on the same data dir, and sees the run
// complete (or, with --on-restart fail, marked as an error).
func TestKilledServerResumesRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) {
			data, gate := t.TempDir(), t.TempDir()
			addr := freeAddr(t)
			c := startChild(t, data, gate, addr, fail)
			c.call(t, "POST", "/threads", map[string]any{"thread_id": "d1"})
			code, run := c.call(t, "POST", "/threads/d1/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}})
			if code != 200 {
				t.Fatalf("create run: %d %v", code, run)
			}
			runID := run["run_id"].(string)
			started := filepath.Join(gate, "d1.started")
			for i := 0; ; i++ {
				if _, err := os.Stat(started); err == nil {
					break
				}
				if i > 3000 {
					t.Fatal("slow node never started")
				}
				time.Sleep(10 * time.Millisecond)
			}
			c.cmd.Process.Signal(syscall.SIGKILL)
			c.cmd.Wait()

			os.WriteFile(filepath.Join(gate, "d1.release"), nil, 0o644)
			c = startChild(t, data, gate, addr, fail)
			want := "success"
			if fail {
				want = "error"
			}
			var rec map[string]any
			for i := 0; i < 3000; i++ {
				_, rec = c.call(t, "GET", "/threads/d1/runs/"+runID, nil)
				if rec["status"] != "running" && rec["status"] != "pending" {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if rec["status"] != want {
				t.Fatalf("run status after restart %v, want %s (%v)", rec["status"], want, rec)
			}
			_, st := c.call(t, "GET", "/threads/d1/state", nil)
			vals, _ := st["values"].(map[string]any)
			log, _ := vals["log"].([]any)
			if !fail && len(log) != 1 {
				t.Fatalf("resumed thread log %v, want the slow node's entry once", log)
			}
			if fail && len(log) != 0 {
				t.Fatalf("failed run's thread log %v, want none", log)
			}
		})
	}
}
