package graphs

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node/lifecycletest"
)

// probeVersion is a graph named "probed" whose one node is the lifecycle
// probe named probe.
func probeVersion(probe string, failPrepare bool) string {
	return fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "probed"
state: x: {type: "string"}
start: "p"
nodes: p: {type: %q, config: {probe: %q, fail_prepare: %v}, next: "END"}
`, lifecycletest.TypeName, probe, failPrepare)
}

// A hot reload keeps the replaced version loaded (threads written by it go on
// running on it), so its nodes are closed at shutdown, once, as are those of
// the versions that replaced it; a version whose Prepare failed is closed at
// once and not again. A file that redefines a served graph's name is
// discarded and its nodes closed at once.
func TestReloadAndShutdownCloseNodes(t *testing.T) {
	dir := t.TempDir()
	db := openBadger(t)
	// As graphctl serve does: prepare each version, serve it even when that fails.
	newEngine := func(g *compile.Graph) (*engine.Engine, error) {
		eng := engine.New(g, db.Checkpointer(), engine.Options{})
		_ = eng.Preflight(context.Background())
		return eng, nil
	}
	prefix := t.TempDir()
	probe := func(name string) string { return filepath.Join(prefix, name) }
	file := filepath.Join(dir, "probed.cue")
	t0 := time.Unix(1_700_000_000, 0)
	write(t, file, probeVersion(probe("v1"), false), t0)
	reg, diags, err := Open(dir, newEngine, nil)
	if err != nil || reg == nil {
		t.Fatalf("open: %v %v", err, diags)
	}
	type want map[string]lifecycletest.Count
	steps := []struct {
		name  string
		file  string
		text  string
		after want
	}{
		{"reload keeps the old version open", file, probeVersion(probe("v2"), false),
			want{"v1": {Prepares: 1}, "v2": {Prepares: 1}}},
		{"a failed prepare closes the new version at once", file, probeVersion(probe("v3"), true),
			want{"v1": {Prepares: 1}, "v2": {Prepares: 1}, "v3": {Prepares: 1, Closes: 1}}},
		{"a duplicate name is discarded and closed", filepath.Join(dir, "dup.cue"), probeVersion(probe("dup"), false),
			want{"v2": {Prepares: 1}, "v3": {Prepares: 1, Closes: 1}, "dup": {Prepares: 1, Closes: 1}}},
	}
	for i, st := range steps {
		write(t, st.file, st.text, t0.Add(time.Duration(i+1)*time.Second))
		reg.Reload()
		for name, w := range st.after {
			if got := lifecycletest.Counts(probe(name)); got != w {
				t.Errorf("%s: probe %s: %+v, want %+v", st.name, name, got, w)
			}
		}
	}
	if err := reg.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for name, w := range (want{"v1": {Prepares: 1, Closes: 1}, "v2": {Prepares: 1, Closes: 1}, "v3": {Prepares: 1, Closes: 1}, "dup": {Prepares: 1, Closes: 1}}) {
		if got := lifecycletest.Counts(probe(name)); got != w {
			t.Errorf("shutdown: probe %s: %+v, want %+v", name, got, w)
		}
	}
}
