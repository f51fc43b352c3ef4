package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cueBlockRE finds the fenced CUE blocks of a Markdown page.
var cueBlockRE = regexp.MustCompile("(?s)```cue\n(.*?)```")

// TestGraphFileReferenceExamplesRun validates and runs every complete graph
// (a CUE block that declares dsl_version) of docs/graph-file.md, so that the
// reference shows only graphs that work.
func TestGraphFileReferenceExamplesRun(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "graph-file.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, m := range cueBlockRE.FindAllStringSubmatch(string(src), -1) {
		if !strings.HasPrefix(m[1], "dsl_version:") {
			continue // a fragment
		}
		n++
		path := filepath.Join(dir, "example"+strconv.Itoa(n)+".cue")
		if err := os.WriteFile(path, []byte(m[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, errOut, code := run(t, "validate", path); code != 0 {
			t.Fatalf("example %d does not validate:\n%s%s\n%s", n, out, errOut, m[1])
		}
		if out, errOut, code := run(t, "run", path, "-i", "hello", "--data-dir", filepath.Join(dir, "data")); code != 0 {
			t.Fatalf("example %d does not run:\n%s%s\n%s", n, out, errOut, m[1])
		}
	}
	if n < 2 {
		t.Fatalf("found %d complete graphs in docs/graph-file.md, want at least 2", n)
	}
}
