package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/workspace"
	"github.com/graphctl/graphctl/server/graphs"
)

// Every example directory, and the whole examples and graphs trees, can be
// served at once: no two graph files declare the same graph name.
func TestExamplesCanBeServedTogether(t *testing.T) {
	root := repoRoot(t)
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	dirs := []string{filepath.Join(root, "examples"), filepath.Join(root, "graphs")}
	more, _ := filepath.Glob(filepath.Join(root, "examples", "*"))
	for _, dir := range append(dirs, more...) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.*"))
		hasGraph := false
		for _, f := range files {
			hasGraph = hasGraph || strings.HasSuffix(f, ".cue") || strings.HasSuffix(f, ".yaml")
		}
		if !hasGraph && dir != dirs[0] {
			continue
		}
		t.Run(strings.TrimPrefix(dir, root+"/"), func(t *testing.T) {
			reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) {
				return ws.Engine(g, engine.Options{}), nil
			}, nil)
			if err != nil || reg == nil {
				t.Fatalf("graphctl serve --graphs %s would refuse to start: %v %v", dir, err, diags)
			}
			reg.Close()
		})
	}
}

// `graphctl test` runs the tests beside a YAML graph, written in CUE or YAML.
func TestTestCommandRunsTestsBesideYAMLGraphs(t *testing.T) {
	root := repoRoot(t)
	out, errOut, code := run(t, "test", filepath.Join(root, "examples", "triage"), "-v")
	if code != 0 || !strings.Contains(out, "triage.yaml") || strings.Contains(out, "[no test cases]") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}
