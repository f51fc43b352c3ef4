package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/storage/postgres/pgtest"
)

// postgresURL returns the URL of a schema of the test's own on the server at
// $GRAPHCTL_TEST_POSTGRES, dropped when the test ends.
func postgresURL(t *testing.T) string {
	t.Helper()
	return pgtest.SchemaURL(t, "gctest_cli")
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

// Two serve processes on one PostgreSQL schema are replicas: both start, a
// run created on one is joined and listed on the other, its thread's state
// is the same on both, and an assistant changed on one is changed on both.
func TestServesShareOneSchema(t *testing.T) {
	pg := postgresURL(t)
	dir := t.TempDir()
	graph := `dsl_version: "graphctl/v1"
name: "note"
state: {
	messages: {type: "messages"}
	log: {type: "list<string>", reducer: "append"}
}
start: "note"
nodes: note: {type: "set", config: set: log: "[\"noted\"]", next: "END"}
`
	if err := os.WriteFile(filepath.Join(dir, "note.cue"), []byte(graph), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := func() (string, chan error) {
		var out syncBuffer
		cmd := newRootCommand()
		cmd.SetArgs([]string{"serve", "--graphs", dir, "--addr", "127.0.0.1:0", "--postgres", pg, "--log-level", "error", "--no-studio", "--no-mcp"})
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		done := make(chan error, 1)
		go func() { done <- cmd.ExecuteContext(ctx) }()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if i := strings.Index(out.String(), " on http://"); i >= 0 {
				return strings.Fields(out.String()[i+4:])[0], done
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve did not start:\n%s", out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	a, doneA := start()
	b, doneB := start()
	call := func(method, url, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
		}
		var out any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, raw)
		}
		if m, ok := out.(map[string]any); ok {
			return m
		}
		return map[string]any{"list": out}
	}
	call("POST", a+"/threads", `{"thread_id": "shared"}`)
	created := call("POST", a+"/threads/shared/runs", `{"assistant_id": "note", "input": {}}`)
	runID, _ := created["run_id"].(string)
	joined := call("GET", b+"/threads/shared/runs/"+runID+"/join", "")
	if fmt.Sprint(joined["log"]) != "[noted]" {
		t.Fatalf("join on the other replica = %v, want the run's final values", joined)
	}
	listed := call("GET", b+"/threads/shared/runs", "")["list"].([]any)
	if len(listed) != 1 || listed[0].(map[string]any)["status"] != "success" {
		t.Fatalf("runs listed on the other replica = %v, want the one successful run", listed)
	}
	state := call("GET", b+"/threads/shared/state", "")
	if fmt.Sprint(state["values"].(map[string]any)["log"]) != "[noted]" {
		t.Fatalf("state on the other replica = %v", state)
	}
	// An assistant created on one replica and updated on the other reads
	// back updated on the first (replicas cache no assistants).
	asst := call("POST", a+"/assistants", `{"graph_id": "note", "name": "first"}`)
	id, _ := asst["assistant_id"].(string)
	call("GET", a+"/assistants/"+id, "")
	call("PATCH", b+"/assistants/"+id, `{"name": "renamed"}`)
	if got := call("GET", a+"/assistants/"+id, "")["name"]; got != "renamed" {
		t.Fatalf("assistant name on the first replica after an update on the other = %v, want renamed", got)
	}
	cancel()
	for _, done := range []chan error{doneA, doneB} {
		if err := <-done; err != nil {
			t.Fatalf("serve: %v", err)
		}
	}
}
