package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/server/graphs"
)

// sdkGraphs builds a graphs dir with the product's slot-filling and cognitive
// graphs and the approve test graph.
func sdkGraphs(t testing.TB) string {
	dir := t.TempDir()
	for src, dst := range map[string]string{
		"../graphs/slot_filling.cue":      "slot_filling.cue",
		"../graphs/slot_filling_test.cue": "slot_filling_test.cue",
		"../graphs/cognitive.cue":         "cognitive.cue",
		"testdata/graphs/approve.cue":     "approve.cue",
		"testdata/graphs/slow.cue":        "slow.cue",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, dst), b, 0o644)
	}
	return dir
}

// newGraphFixture is newFixture over another graphs dir; extra is handed to
// every engine (e.g. a scripted model).
func newGraphFixture(t testing.TB, dir string, mutate func(*Config), extra ...node.Extra) *fixture {
	t.Helper()
	ws, err := openServed(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.Options{}
	if len(extra) > 0 {
		opts.Extra = extra[0]
	}
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, opts), nil
	}, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	return wrapFixture(t, ws, reg, mutate)
}

// jsClient runs the scripts of .ci/langgraph-sdk, which use the official
// @langchain/langgraph-sdk client.
type jsClient struct{ node, dir string }

// requireJSClient skips the test when node or the SDK is not installed.
func requireJSClient(t *testing.T) jsClient {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	dir, _ := filepath.Abs("../.ci/langgraph-sdk")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", "langgraph-sdk")); err != nil {
		t.Skip("the SDK is not installed: npm install --prefix .ci/langgraph-sdk")
	}
	return jsClient{node: node, dir: dir}
}

// run runs script against the server at url; the script's failure fails t.
func (c jsClient) run(t *testing.T, script, url string) {
	t.Helper()
	cmd := exec.Command(c.node, script, url)
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
}

// TestLangGraphJSClient runs .ci/langgraph-sdk/test.mjs (the official
// @langchain/langgraph-sdk client) against the server.
func TestLangGraphJSClient(t *testing.T) {
	sdk := requireJSClient(t)
	// The cognitive graph's reasoning node answers from a script: a request to
	// confirm a booking (a HITL interrupt), then the confirmation.
	// The slow graph's node waits for THREAD.release in this directory,
	// which test.mjs writes once it has seen the thread busy.
	t.Setenv(gateEnv, t.TempDir())
	script := filepath.Join(t.TempDir(), "cognitive-script.json")
	os.WriteFile(script, []byte(cognitiveScript), 0o644)
	f := newGraphFixture(t, sdkGraphs(t), nil, llm.OverrideKey.Bind(node.Extra{}, "script:"+script))
	sdk.run(t, "test.mjs", f.http.URL)
}

const cognitiveScript = `{"replies": [
  {"node": "reasoning", "json": {"response": "I can book that. Please confirm the details.",
    "ecs_request": {"title": "Schedule a study session",
      "form": {"fields": [{"name": "date", "type": "date", "required": true}, {"name": "time", "type": "time", "required": true}]}}}},
  {"node": "reasoning", "json": {"response": "Done: your study session is booked."}}
]}`

// TestLangGraphJSTimeTravel runs .ci/langgraph-sdk/timetravel.mjs: time
// travel, continuing runs, messages and stream modes through the official
// client, on the echo, approve and slow test graphs.
func TestLangGraphJSTimeTravel(t *testing.T) {
	sdk := requireJSClient(t)
	dir := testGraphsDir(t, "echo.cue", "approve.cue", "slow.cue")
	// The slow graph's node waits for THREAD.release in this directory; the
	// script cancels it instead.
	t.Setenv(gateEnv, t.TempDir())
	f := newGraphFixture(t, dir, nil)
	sdk.run(t, "timetravel.mjs", f.http.URL)
}

// TestLangGraphJSNodeCache runs .ci/langgraph-sdk/nodecache.mjs against
// examples/node-cache served with a local OpenAI-compatible model that has
// one reply: the script asks the same question twice (on two threads) and
// sees the second answer come from the node cache (a cache_hit custom event);
// the model must have been asked once.
func TestLangGraphJSNodeCache(t *testing.T) {
	sdk := requireJSClient(t)
	model := llmtest.NewServer(t, llmtest.WithReplies(llmtest.JSON(map[string]any{"answer": "Paris"})))
	t.Setenv("OPENAI_BASE_URL", model.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	dir := t.TempDir()
	// The example's scripted model file comes along: a graph's script:FILE
	// model is read when the graph is loaded.
	for _, name := range []string{"cached.cue", "replies.json"} {
		src, err := os.ReadFile(filepath.Join("../examples/node-cache", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), src, 0o644)
	}
	f := newGraphFixture(t, dir, nil, llm.OverrideKey.Bind(node.Extra{}, "openai:gpt-4o-mini"))
	sdk.run(t, "nodecache.mjs", f.http.URL)
	if reqs := model.Requests(); len(reqs) != 1 {
		t.Errorf("the model was asked %d times for one question asked twice, want once", len(reqs))
	}
}

// TestLangGraphJSConformance runs .ci/langgraph-sdk/conformance.mjs: every
// method and option of the official client against the echo and approve
// test graphs, as an independent client suite drives the server.
func TestLangGraphJSConformance(t *testing.T) {
	sdk := requireJSClient(t)
	f := newGraphFixture(t, testGraphsDir(t, "echo.cue", "approve.cue"), nil)
	sdk.run(t, "conformance.mjs", f.http.URL)
}
