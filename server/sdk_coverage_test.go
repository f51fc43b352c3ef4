package server

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLangGraphJSCoverage runs .ci/langgraph-sdk/coverage.mjs: every method
// of the official client's assistants, threads, runs, crons and store with
// the options users pass, the requests the Python SDK sends where they
// differ, and hostile requests, against the echo, approve and slow test
// graphs.
func TestLangGraphJSCoverage(t *testing.T) {
	sdk := requireJSClient(t)
	dir := testGraphsDir(t, "echo.cue", "approve.cue", "slow.cue")
	// The slow graph's node waits for THREAD.release in this directory,
	// which the script writes.
	t.Setenv(gateEnv, t.TempDir())
	f := newGraphFixture(t, dir, nil)
	sdk.run(t, "coverage.mjs", f.http.URL)
}

// testGraphsDir returns a new graphs dir holding the named files of
// testdata/graphs.
func testGraphsDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata/graphs", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLangGraphJSThreadStream runs .ci/langgraph-sdk/threadstream.mjs: a
// thread's stream in modes run_modes, lifecycle and state_update through the
// official client, against the echo test graph.
func TestLangGraphJSThreadStream(t *testing.T) {
	sdk := requireJSClient(t)
	f := newGraphFixture(t, testGraphsDir(t, "echo.cue"), nil)
	sdk.run(t, "threadstream.mjs", f.http.URL)
}

// TestLangGraphJSCheckpointMetadata runs .ci/langgraph-sdk/metadata.mjs: the
// metadata of checkpoints (run, thread, graph, assistant) on a thread's
// state and history, against the echo test graph.
func TestLangGraphJSCheckpointMetadata(t *testing.T) {
	sdk := requireJSClient(t)
	f := newGraphFixture(t, testGraphsDir(t, "echo.cue"), nil)
	sdk.run(t, "metadata.mjs", f.http.URL)
}
