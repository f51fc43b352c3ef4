package server

import (
	"os"
	"path/filepath"
	"testing"
)

// copySubgraphExample copies examples/subgraph into a new graphs dir.
func copySubgraphExample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"research.cue", "agents/researcher.cue", "agents/reviewer.cue"} {
		b, err := os.ReadFile(filepath.Join("../examples/subgraph", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLangGraphJSSubgraphs runs .ci/langgraph-sdk/subgraphs.mjs against
// examples/subgraph: getSubgraphs, streamSubgraphs with namespaced events,
// getState with subgraphs, an interrupt inside a child resumed from the
// parent thread, and time travel with a child (updateState with its
// checkpoint config, replay, fork), all through the official client.
func TestLangGraphJSSubgraphs(t *testing.T) {
	sdk := requireJSClient(t)
	f := newGraphFixture(t, copySubgraphExample(t), nil)
	sdk.run(t, "subgraphs.mjs", f.http.URL)
}
