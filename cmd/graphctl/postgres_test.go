package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresURL returns the URL of a schema of the test's own on the server at
// $GRAPHCTL_TEST_POSTGRES, dropped when the test ends.
func postgresURL(t *testing.T) string {
	t.Helper()
	base := os.Getenv("GRAPHCTL_TEST_POSTGRES")
	if base == "" {
		t.Skip("$GRAPHCTL_TEST_POSTGRES is not set: the PostgreSQL tests need a server (e.g. postgres://postgres@127.0.0.1:5432/test)")
	}
	schema := fmt.Sprintf("gctest_cli_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return u.String()
}

// Two turns of the slot-filling graph in two runs keep their thread in
// PostgreSQL: the second turn sees what the first extracted, and threads
// show reads the same state, with no data directory involved.
func TestRunOnPostgres(t *testing.T) {
	pg := postgresURL(t)
	graph := filepath.Join(repoRoot(t), "graphs/slot_filling.cue")
	t.Chdir(t.TempDir())
	if _, stderr, code := run(t, "run", graph, "--postgres", pg, "--thread", "pg1", "-i", "My dishwasher WDT780SAEM1 is leaking"); code != 0 {
		t.Fatalf("turn 1: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := run(t, "run", graph, "--postgres", pg, "--thread", "pg1", "--json", "-i", "I want to fix it")
	if code != 0 {
		t.Fatalf("turn 2: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "WDT780SAEM1") || !strings.Contains(stdout, "diagnose_repair") {
		t.Errorf("turn 2 does not carry the model from turn 1 and the new goal:\n%s", stdout)
	}
	if _, err := os.Stat(".graphctl"); err == nil {
		t.Error("a data directory was created although --postgres was given")
	}
	out, stderr, code := run(t, "threads", "show", "pg1", "--postgres", pg, "--json")
	if code != 0 {
		t.Fatalf("threads show: exit %d: %s", code, stderr)
	}
	var shown map[string]any
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("threads show --json: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"WDT780SAEM1"`) {
		t.Errorf("threads show does not have the thread's state:\n%s", out)
	}
}

func TestPostgresUnreachable(t *testing.T) {
	_, stderr, code := run(t, "run", filepath.Join(repoRoot(t), "graphs/slot_filling.cue"), "--postgres", "postgres://postgres@127.0.0.1:1/test?connect_timeout=2", "-i", "hi")
	if code != 2 || !strings.Contains(stderr, "postgres") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming postgres", code, stderr)
	}
}

// A data dir's threads move to PostgreSQL with threads export and import, and
// the conversation continues there.
func TestThreadsExportImportToPostgres(t *testing.T) {
	pg := postgresURL(t)
	graph := filepath.Join(repoRoot(t), "graphs/slot_filling.cue")
	t.Chdir(t.TempDir())
	if _, stderr, code := run(t, "run", graph, "--data-dir", "data", "--thread", "moved", "-i", "My dishwasher WDT780SAEM1 is leaking"); code != 0 {
		t.Fatalf("turn 1: exit %d: %s", code, stderr)
	}
	if _, stderr, code := run(t, "threads", "export", "--data-dir", "data", "--out", "backup.jsonl"); code != 0 || !strings.Contains(stderr, "exported 1 threads") {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	if _, stderr, code := run(t, "threads", "import", "backup.jsonl", "--postgres", pg); code != 0 || !strings.Contains(stderr, "imported 1 threads") {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := run(t, "run", graph, "--postgres", pg, "--thread", "moved", "-i", "I want to fix it")
	if code != 0 || !strings.Contains(stdout, "WDT780SAEM1") {
		t.Fatalf("turn 2 on PostgreSQL: exit %d: %s\n%s", code, stderr, stdout)
	}
	if _, stderr, code := run(t, "threads", "import", "backup.jsonl", "--postgres", pg); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Fatalf("second import: exit %d: %s", code, stderr)
	}
}

// A second serve on the same PostgreSQL schema is refused with a message that
// says why, while the first keeps serving; a serve on another schema starts.
func TestSecondServeOnOneSchemaIsRefused(t *testing.T) {
	pg := postgresURL(t)
	graphs := filepath.Join(repoRoot(t), "examples/triage")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out1 syncBuffer
	first := newRootCommand()
	first.SetArgs([]string{"serve", "--graphs", graphs, "--addr", "127.0.0.1:0", "--postgres", pg, "--log-level", "error"})
	first.SetOut(&out1)
	first.SetErr(&out1)
	done := make(chan error, 1)
	go func() { done <- first.ExecuteContext(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out1.String(), "graphctl serving") {
		if time.Now().After(deadline) {
			t.Fatalf("first serve did not start:\n%s", out1.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, stderr, code := run(t, "serve", "--graphs", graphs, "--addr", "127.0.0.1:0", "--postgres", pg)
	if code != 2 || !strings.Contains(stderr, "another graphctl serve is using this PostgreSQL database") {
		t.Fatalf("second serve: exit %d: %s", code, stderr)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("first serve: %v\n%s", err, out1.String())
	}
}
