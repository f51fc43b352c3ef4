// Package e2e drives graphctl Studio in a real browser (Playwright's
// playwright-core in Debian's chromium) against a server on 127.0.0.1, and
// the /mcp endpoint with the official MCP TypeScript client. The browser
// scripts are studio.spec.mjs and mcp.spec.mjs beside this file; `npm ci`
// here installs what they need (.ci/run does).
//
// Outside CI the tests skip when node, the npm packages or chromium are
// missing, saying so; with GRAPHCTL_REQUIRE_BROWSER=1 (set by .ci/run)
// they fail instead. Screenshots are saved in each test's artifact
// directory: run with -artifacts (and -outputdir DIR) to keep them.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server"
	"github.com/graphctl/graphctl/server/graphs"
)

// streamedReply is what the assistant graph's model answers.
const streamedReply = "Dishwashers leak most often at the door gasket, the drain hose or the inlet valve."

// chromium is the browser the tests drive (Debian's package).
const chromium = "/usr/bin/chromium"

// requireTools skips (or, in CI, fails) when the browser test tools are
// missing.
func requireTools(t *testing.T, browser bool) string {
	t.Helper()
	missing := ""
	node, err := exec.LookPath("node")
	switch {
	case err != nil:
		missing = "node is not on PATH"
	case !exists("node_modules/playwright-core") || !exists("node_modules/@modelcontextprotocol/sdk"):
		missing = "the npm packages are not installed: npm ci --prefix server/studio/e2e"
	case browser && !exists(chromium):
		missing = chromium + " is missing: apt-get install chromium"
	}
	if missing != "" {
		if os.Getenv("GRAPHCTL_REQUIRE_BROWSER") == "1" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	return node
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// fixture is a server over a graphs directory holding the shipped
// slot-filling graph, testdata/refund.cue (an interrupt) and
// testdata/assistant.cue (a model), watched for changes as `graphctl
// studio` does.
type fixture struct {
	url, dir string
	keys     []string
}

func newFixture(t *testing.T, keys ...string) *fixture {
	t.Helper()
	dir := t.TempDir()
	for src, dst := range map[string]string{"../../../graphs/slot_filling.cue": "slot_filling.cue", "testdata/refund.cue": "refund.cue",
		"testdata/assistant.cue": "assistant.cue", "testdata/review.cue": "review.cue",
		"../../../examples/parallel-approval/parallel_approval.cue": "parallel_approval.cue"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The assistant graph's model is a script that streams its reply token
	// by token, as a provider does.
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"replies": ["`+streamedReply+`"]}`), 0o644)
	// The audit log records each node's duration, as graphctl serve does.
	opts := engine.Options{Extra: llm.OverrideKey.Bind(node.Extra{}, "script:"+script),
		Observers: []engine.Observer{&audit.Recorder{Store: ws.Store()}}}
	reg, diags, err := graphs.OpenLenient(dir, func(g *compile.Graph) (*engine.Engine, error) { return ws.Engine(g, opts), nil }, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	srv, err := server.New(server.Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store(), APIKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	go reg.Watch(ctx, 100*time.Millisecond)
	t.Cleanup(func() {
		cancel()
		hs.Close()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		srv.Runs().Shutdown(sctx)
		reg.Close()
		ws.Close()
	})
	return &fixture{url: hs.URL, dir: dir, keys: keys}
}

// api sends a JSON request to the fixture and decodes the answer.
func (f *fixture) api(t *testing.T, method, path string, body any) (int, any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.url+path, r)
	req.Header.Set("Content-Type", "application/json")
	if len(f.keys) > 0 {
		req.Header.Set("Authorization", "Bearer "+f.keys[0])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out any
	raw, _ := io.ReadAll(resp.Body)
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		out = string(raw)
	}
	return resp.StatusCode, out
}

// runSpec runs one scenario of a spec script and returns what it printed on
// its RESULT line.
func runSpec(t *testing.T, node, spec, scenario string, f *fixture, extra ...string) map[string]any {
	t.Helper()
	res, err := runSpecOnce(t, node, spec, scenario, f, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func runSpecOnce(t *testing.T, node, spec, scenario string, f *fixture, extra ...string) (map[string]any, error) {
	t.Helper()
	out := t.ArtifactDir()
	args := append([]string{spec, scenario, f.url, out, f.dir}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stdout
	err := cmd.Run()
	t.Logf("node %s %s:\n%s", spec, scenario, stdout.String())
	if shots, _ := filepath.Glob(filepath.Join(out, "*.png")); len(shots) > 0 {
		t.Logf("screenshots: %s", strings.Join(shots, " "))
	}
	if err != nil {
		return nil, fmt.Errorf("scenario %s failed: %w", scenario, err)
	}
	res := map[string]any{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				return nil, fmt.Errorf("RESULT line %q: %w", line, err)
			}
		}
	}
	return res, nil
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
