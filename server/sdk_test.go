package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/appliance"
	_ "github.com/graphctl/graphctl/builtin-nodes/extract"
	_ "github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server/graphs"
)

// sdkGraphs builds a graphs dir with the product's slot-filling graph and
// the approve test graph.
func sdkGraphs(t testing.TB) string {
	dir := t.TempDir()
	for src, dst := range map[string]string{
		"../graphs/slot_filling.cue":      "slot_filling.cue",
		"../graphs/slot_filling_test.cue": "slot_filling_test.cue",
		"testdata/graphs/approve.cue":     "approve.cue",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, dst), b, 0o644)
	}
	return dir
}

// newGraphFixture is newFixture over another graphs dir.
func newGraphFixture(t testing.TB, dir string, mutate func(*Config)) *fixture {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, engine.Options{}), nil
	}, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	return wrapFixture(t, ws, reg, mutate)
}

// TestLangGraphJSClient runs .ci/langgraph-sdk/test.mjs (the official
// @langchain/langgraph-sdk client) against the server.
func TestLangGraphJSClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	sdkDir, _ := filepath.Abs("../.ci/langgraph-sdk")
	if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", "@langchain", "langgraph-sdk")); err != nil {
		t.Skip("the SDK is not installed: npm install --prefix .ci/langgraph-sdk")
	}
	f := newGraphFixture(t, sdkGraphs(t), nil)
	cmd := exec.Command(node, "test.mjs", f.http.URL)
	cmd.Dir = sdkDir
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node test.mjs: %v", err)
	}
}
