package faulttest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

const growGraph = `dsl_version: "graphctl/v1"
name: "grow"
state: {
	messages: {type: "messages"}
	turn: {type: "string"}
	blob: {type: "list<string>", reducer: "append"}
	log: {type: "list<string>", reducer: "append"}
}
start: "note"
nodes: note: {type: "set", config: set: log: "[turn]", next: "END"}
`

// mountTmpfs mounts a tmpfs of size bytes on a new directory, or skips the
// test saying why it cannot.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("disk full is simulated with a size-limited tmpfs, a Linux mount")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a size-limited tmpfs here (needs root and CAP_SYS_ADMIN): %v %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// spaceCheckInterval is how often, at most, the server reads the free space
// of its data dir (runtime/storage/badger).
const spaceCheckInterval = 100 * time.Millisecond

func freeSpace(t *testing.T, dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// fill writes a file of n bytes.
func fill(t *testing.T, path string, n int64) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for n > 0 {
		w := min(n, int64(len(chunk)))
		if _, err := f.Write(chunk[:w]); err != nil {
			t.Fatalf("fill: %v", err)
		}
		n -= w
	}
}

// TestDiskFull fills the disk under graphctl serve's data dir while runs
// write large states: writes are refused with a clear error (507 on the
// API, runs end in error) instead of the storage engine crashing the
// process, the server keeps answering, and once space is freed the threads
// go on and the data dir is whole after a restart.
func TestDiskFull(t *testing.T) {
	const reserve = 64 << 20
	disk := mountTmpfs(t, 384<<20)
	data := filepath.Join(disk, "data")
	filler := filepath.Join(disk, "filler")
	// Leave the reserve and 24 MiB above it.
	fill(t, filler, freeSpace(t, disk)-reserve-24<<20)
	graphs := writeGraph(t, "grow", growGraph)
	env := []string{fmt.Sprintf("GRAPHCTL_MIN_FREE_MB=%d", reserve>>20)}
	srv := startServer(t, graphs, data, env)
	c := newClient()
	var v violations
	threads := []string{"d0", "d1", "d2", "d3"}
	for _, th := range threads {
		c.must(t, srv.url, http.MethodPost, "/threads", map[string]any{"thread_id": th}, http.StatusOK)
	}
	payload := func() string {
		b := make([]byte, 300<<10)
		rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	succeeded := map[string][]string{}
	full, runs := 0, 0
	for i := 0; full < 4 && i < 400; i++ {
		th := threads[i%len(threads)]
		turn := fmt.Sprintf("%s/%d", th, i)
		in := turnInput(turn)
		in["blob"] = []string{payload()}
		runs++
		code, out, err := c.call(context.Background(), srv.url, http.MethodPost, "/threads/"+th+"/runs/wait", map[string]any{"assistant_id": "grow", "input": in})
		switch {
		case err != nil:
			t.Fatalf("the server died as the disk filled (turn %d): %v\n%s", i, err, srv.logs.String())
		case code == http.StatusOK && field(out, "__error__") == nil:
			succeeded[th] = append(succeeded[th], turn)
		case code == http.StatusOK || code == http.StatusInsufficientStorage:
			msg := fmt.Sprint(field(out, "__error__", "message"), field(out, "detail"))
			if !strings.Contains(msg, "disk is nearly full") {
				v.add("a full disk is a clear error", "turn %s: %d %s", turn, code, msg)
			}
			full++
		default:
			v.add("a full disk is a clear error", "turn %s: %d %v", turn, code, out)
		}
	}
	if full == 0 {
		t.Fatalf("%d runs of 300 KiB never filled the disk", runs)
	}
	// Full: reads still answer, writes are refused with 507, the process lives.
	if code, _, err := c.call(context.Background(), srv.url, http.MethodGet, "/threads/d0/state", nil); err != nil || code != http.StatusOK {
		v.add("the server keeps answering", "state on a full disk: %d %v", code, err)
	}
	// The data dir's own space moves as the database writes its memtables
	// to tables and deletes their logs: a write is due a 507 only while
	// the free space is below the reserve, so the disk is filled to 16 MiB
	// under it first, and a write the server accepted counts against it
	// only when the space was still below the reserve afterwards.
	var toppedUp []string
	for attempt := 1; ; attempt++ {
		if free := freeSpace(t, disk); free > reserve-16<<20 {
			name := fmt.Sprintf("%s-%d", filler, attempt)
			fill(t, name, free-(reserve-16<<20))
			toppedUp = append(toppedUp, name)
		}
		time.Sleep(2 * spaceCheckInterval) // the server reads the free space at most this often
		code, out, err := c.call(context.Background(), srv.url, http.MethodPost, "/threads", map[string]any{"thread_id": fmt.Sprintf("new-%d", attempt)})
		if err == nil && code == http.StatusInsufficientStorage {
			break
		}
		if err == nil && code == http.StatusOK && freeSpace(t, disk) >= reserve && attempt < 5 {
			continue // the database freed space meanwhile: fill again
		}
		v.add("a full disk is a clear error", "new thread on a full disk: %d %v %v; want 507", code, out, err)
		break
	}
	if srv.exited() {
		t.Fatalf("graphctl serve died on a full disk:\n%s", srv.logs.String())
	}
	// Space is freed: every thread goes on.
	os.Remove(filler)
	for _, name := range toppedUp {
		os.Remove(name)
	}
	time.Sleep(2 * spaceCheckInterval)
	for _, th := range threads {
		turn := th + "/after"
		code, out, err := c.call(context.Background(), srv.url, http.MethodPost, "/threads/"+th+"/runs/wait", map[string]any{"assistant_id": "grow", "input": turnInput(turn)})
		if err != nil || code != http.StatusOK || field(out, "__error__") != nil {
			v.add("resumes after space is freed", "turn %s: %d %v %v", turn, code, out, err)
			continue
		}
		succeeded[th] = append(succeeded[th], turn)
	}
	waitFinal(t, c, srv.url, threads)
	for _, e := range c.serverErrors() {
		if !strings.Contains(e, "→ 507") {
			v.add("the server keeps answering", "%s", e)
		}
	}
	srv.stop()
	restarted := startServer(t, graphs, data, env)
	restarted.stop()
	_, latest := checkDataDir(t, data, &v)
	for _, th := range threads {
		checkTurns(th, stringList(latest[th]["log"]), succeeded[th], &v)
	}
	t.Logf("%d runs of 300 KiB until %d were refused for a full disk; then space freed", runs, full)
	v.report(t, "disk full (size-limited tmpfs) during checkpoint writes, then space freed", runs)
}
