package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStudioServesValidGraphsAndReportsInvalidOnes runs `graphctl studio
// DIR` on a directory with one valid and one invalid graph: the valid one
// is served, the page is at /studio/, and GET /graphs lists the invalid
// file's diagnostics (serve would refuse to start).
func TestStudioServesValidGraphsAndReportsInvalidOnes(t *testing.T) {
	dir := t.TempDir()
	good := `dsl_version: "graphctl/v1"
name: "hello"
state: messages: {type: "messages"}
start: "a"
nodes: a: {type: "reply", config: text: "hi", next: "END"}
`
	os.WriteFile(filepath.Join(dir, "hello.cue"), []byte(good), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.cue"), []byte(strings.NewReplacer(`"hello"`, `"bad"`, `next: "END"`, `next: "ENDD"`).Replace(good)), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out lockedBuffer
	root := newRootCommand()
	root.SetArgs([]string{"studio", dir, "--no-open", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(t.TempDir(), "data")})
	root.SetOut(&out)
	root.SetErr(&out)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var url string
	re := regexp.MustCompile(`Studio: (http://\S+)/studio/`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && url == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no Studio URL printed:\n%s", out.String())
	}
	resp, err := http.Get(url + "/studio/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /studio/: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Get(url + "/graphs")
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Graphs []struct {
			GraphID string `json:"graph_id"`
		}
		Diagnostics []struct {
			File, Code, Source string
			Line, Col          int
		}
	}
	json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if len(info.Graphs) != 1 || info.Graphs[0].GraphID != "hello" {
		t.Errorf("graphs %+v, want hello only", info.Graphs)
	}
	if len(info.Diagnostics) == 0 || filepath.Base(info.Diagnostics[0].File) != "bad.cue" || info.Diagnostics[0].Line != 5 || !strings.Contains(info.Diagnostics[0].Source, "ENDD") {
		t.Errorf("diagnostics %+v, want bad.cue:5 with its source line", info.Diagnostics)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("studio: %v\n%s", err, out.String())
	}
}
