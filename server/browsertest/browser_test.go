package browsertest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server"
	"github.com/graphctl/graphctl/server/graphs"
)

// chromium is the browser the test drives (Debian's package).
const chromium = "/usr/bin/chromium"

// replies are the scripted model's answers, in order: the first message,
// the third, and the regenerated third.
var replies = []string{
	"Hello! How can I help you today?",
	"Here is more: the table is by the window.",
	"Here is more, said another way: a window table.",
}

// requireTools returns node, skipping (or, in CI, failing) when a tool the
// test needs is missing.
func requireTools(t *testing.T) string {
	t.Helper()
	missing := ""
	node, err := exec.LookPath("node")
	switch {
	case err != nil:
		missing = "node is not on PATH"
	case !exists("node_modules/playwright-core") || !exists("node_modules/esbuild") || !exists("node_modules/@langchain/langgraph-sdk"):
		missing = "the npm packages are not installed: npm ci --prefix server/browsertest"
	case !exists(chromium):
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

// apiServer serves testdata/assistant.cue with a scripted model, as
// graphctl serve does: no API keys, so local pages may call it (CORS).
func apiServer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/assistant.cue")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "assistant.cue"), b, 0o644)
	script, _ := json.Marshal(map[string]any{"replies": replies})
	scriptFile := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(scriptFile, script, 0o644)
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	opts := engine.Options{Extra: llm.OverrideKey.Bind(node.Extra{}, "script:"+scriptFile)}
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) { return ws.Engine(g, opts), nil }, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	srv, err := server.New(server.Config{Graphs: reg, Checkpointer: ws.Checkpointer(), Store: ws.Store()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Runs().Shutdown(ctx)
	})
	return hs.URL
}

// TestUseStreamInABrowser bundles page.jsx, serves it on one origin and the
// API on another, and has browser.spec.mjs drive it in chromium.
func TestUseStreamInABrowser(t *testing.T) {
	node := requireTools(t)
	bundle := t.TempDir()
	build := exec.Command(node, "build.mjs", bundle)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs: %v\n%s", err, out)
	}
	api := apiServer(t)
	pages := httptest.NewServer(http.FileServer(http.Dir(bundle)))
	t.Cleanup(pages.Close)
	// The page is on localhost, the API on 127.0.0.1: two origins.
	pageURL := strings.Replace(pages.URL, "127.0.0.1", "localhost", 1) + "/index.html?api=" + url.QueryEscape(api)
	repliesJSON, _ := json.Marshal(replies)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "browser.spec.mjs", pageURL)
	cmd.Env = append(os.Environ(), "GRAPHCTL_BROWSERTEST_REPLIES="+string(repliesJSON), "GRAPHCTL_CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node browser.spec.mjs: %v", err)
	}
}
