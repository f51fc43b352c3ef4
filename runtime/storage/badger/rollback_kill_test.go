package badger_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// rollbackChildEnv makes the test binary a child that rolls a thread back
// and waits to be killed.
const rollbackChildEnv = "GRAPHCTL_ROLLBACK_CHILD"

// TestRollbackChild is the child process of TestKillDuringRollback; it does
// nothing in a normal run.
func TestRollbackChild(t *testing.T) {
	spec := os.Getenv(rollbackChildEnv)
	if spec == "" {
		t.Skip("child process of TestKillDuringRollback")
	}
	var arg struct{ Dir, Thread, Start string }
	if err := json.Unmarshal([]byte(spec), &arg); err != nil {
		t.Fatal(err)
	}
	db, err := badger.Open(arg.Dir, badger.Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	fmt.Println("ready")
	if err := db.Checkpointer().Rollback(context.Background(), arg.Thread, arg.Start); err != nil {
		fmt.Println("rollback:", err)
		os.Exit(3)
	}
	fmt.Println("done")
	time.Sleep(time.Hour) // killed by the parent
}

// rollbackFixture writes a thread of checkpoints with growing values into a
// new database in dir and returns the ids, oldest first.
func rollbackFixture(t *testing.T, dir, thread string, n int) []string {
	t.Helper()
	db, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cp := db.Checkpointer()
	var ids []string
	parent := ""
	for i := 0; i < n; i++ {
		id := checkpoint.NewID()
		item, _ := json.Marshal([]string{fmt.Sprintf("message %d %x", i, make([]byte, 256))})
		blobs := []checkpoint.Blob{{Field: "msgs", Version: int64(i + 1), Data: item}}
		if i > 0 {
			blobs[0].Base = int64(i)
		}
		step, _ := json.Marshal(i)
		blobs = append(blobs, checkpoint.Blob{Field: "step", Version: int64(i + 1), Data: step})
		c := checkpoint.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, Step: i, GraphName: "g",
			Versions: map[string]int64{"msgs": int64(i + 1), "step": int64(i + 1)}, Source: "loop"}
		if err := cp.Put(context.Background(), c, blobs); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		parent = id
	}
	return ids
}

// TestKillDuringRollback kills a process at random points of a rollback and
// checks that the thread is whole afterwards: exactly as before, or exactly
// rolled back, every checkpoint readable.
func TestKillDuringRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const thread, n, keep = "th", 40, 10
	trials := 30
	outcomes := map[string]int{}
	for trial := 0; trial < trials; trial++ {
		dir := filepath.Join(t.TempDir(), "db")
		ids := rollbackFixture(t, dir, thread, n)
		start := ids[keep-1]
		spec, _ := json.Marshal(map[string]string{"Dir": dir, "Thread": thread, "Start": start})
		cmd := exec.Command(os.Args[0], "-test.run=^TestRollbackChild$")
		cmd.Env = append(os.Environ(), rollbackChildEnv+"="+string(spec))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		if !lines.Scan() || lines.Text() != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child did not start: %q", lines.Text())
		}
		// Kill at a random point: right away, during, or after the commit.
		time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond)
		cmd.Process.Kill()
		cmd.Wait()

		db, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatalf("trial %d: reopen after kill: %v", trial, err)
		}
		cp := db.Checkpointer()
		latest, err := cp.Latest(context.Background(), thread)
		if err != nil {
			db.Close()
			t.Fatalf("trial %d: thread unreadable after a kill during rollback: %v", trial, err)
		}
		hist, err := cp.History(context.Background(), thread, checkpoint.ListOptions{})
		if err != nil {
			db.Close()
			t.Fatal(err)
		}
		var got []string
		for _, h := range hist {
			got = append(got, h.ID)
			snap, err := cp.Get(context.Background(), thread, h.ID)
			if err != nil {
				t.Errorf("trial %d: checkpoint %s unreadable: %v", trial, h.ID, err)
				continue
			}
			var step int
			if err := json.Unmarshal(snap.Values["step"], &step); err != nil || step != snap.Step {
				t.Errorf("trial %d: checkpoint %s holds step %s, want %d", trial, h.ID, snap.Values["step"], snap.Step)
			}
			var msgs []string
			if err := json.Unmarshal(snap.Values["msgs"], &msgs); err != nil || len(msgs) != snap.Step+1 {
				t.Errorf("trial %d: checkpoint %s holds %d messages, want %d", trial, h.ID, len(msgs), snap.Step+1)
			}
		}
		slices.Reverse(got)
		threads, _ := cp.Threads(context.Background())
		db.Close()
		switch {
		case latest.ID == ids[n-1] && slices.Equal(got, ids):
			outcomes["before"]++
		case latest.ID == start && slices.Equal(got, ids[:keep]):
			outcomes["rolled back"]++
		default:
			t.Fatalf("trial %d: thread half rolled back: latest %s, %d checkpoints (want %d before or %d after)", trial, latest.ID, len(got), n, keep)
		}
		if len(threads) != 1 || threads[0].ThreadID != thread || threads[0].Latest != latest.ID {
			t.Fatalf("trial %d: thread list %+v after the kill, want the one thread at %s", trial, threads, latest.ID)
		}
	}
	t.Logf("%d kills during a rollback: %v", trials, outcomes)
}
