package graphs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/graphtest"
	"github.com/graphctl/graphctl/runtime/load"
)

// graphFiles lists every graph file under graphs/ and examples/, so that a
// graph added later is covered without touching this test.
func graphFiles(t *testing.T) []string {
	t.Helper()
	dirs := []string{"."}
	if _, err := os.Stat(filepath.Join("..", "examples")); err == nil {
		dirs = append(dirs, filepath.Join("..", "examples"))
	}
	files, err := load.Expand(dirs)
	if err != nil {
		t.Fatalf("list graph files: %v", err)
	}
	return files
}

// TestGraphs loads and compiles every graph file, checks its declarative test
// cases, and runs them.
func TestGraphs(t *testing.T) {
	files := graphFiles(t)
	found := false
	for _, file := range files {
		if filepath.Base(file) == "slot_filling.cue" {
			found = true
		}
		t.Run(file, func(t *testing.T) {
			g, diags, err := runtime.Load(file)
			if err != nil {
				t.Fatalf("load %s: %v", file, err)
			}
			if diags.HasErrors() || g == nil {
				t.Fatalf("%s does not compile:\n%v", file, diags)
			}
			if problems := graphtest.Check(g); len(problems) > 0 {
				t.Fatalf("%s: invalid test cases:\n%v", file, problems)
			}
			results := graphtest.Run(context.Background(), g, graphtest.Options{TempDir: t.TempDir(), Verbose: testing.Verbose()})
			var out strings.Builder
			ok := graphtest.Report(&out, file, results, testing.Verbose())
			if !ok {
				t.Errorf("declarative tests of %s failed:\n%s", file, out.String())
			} else {
				t.Log("\n" + out.String())
			}
		})
	}
	if !found {
		t.Errorf("graphs/slot_filling.cue was not among the graph files %v", files)
	}
}

// BenchmarkSlotFillingCases runs every declarative case of the slot-filling
// graph, each on its own Badger database on disk, as `graphctl test` does.
func BenchmarkSlotFillingCases(b *testing.B) {
	g, diags, err := runtime.Load("slot_filling.cue")
	if err != nil || diags.HasErrors() {
		b.Fatalf("load slot_filling.cue: %v %v", err, diags)
	}
	dir := b.TempDir()
	for b.Loop() {
		for _, r := range graphtest.Run(context.Background(), g, graphtest.Options{TempDir: dir}) {
			if !r.Passed {
				b.Fatalf("%s failed: %v", r.Name, r.Failures)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(len(g.Spec.Tests))/1000, "ms/case")
}
