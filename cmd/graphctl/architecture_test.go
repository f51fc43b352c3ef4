package main

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/graphctl/graphctl/"

// TestArchitectureDiagram reads the package diagram of docs/architecture.md
// back with the real Mermaid parser and checks it against the code: every box
// is a package of the module, every arrow is a dependency (direct or through
// other packages), and no arrow points back.
func TestArchitectureDiagram(t *testing.T) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		missingTool(t, "node is not on PATH")
	}
	root := repoRoot(t)
	checker := filepath.Join(root, ".ci", "mermaid")
	if _, err := os.Stat(filepath.Join(checker, "node_modules", "mermaid")); err != nil {
		missingTool(t, "the Mermaid parser is not installed: npm ci --prefix .ci/mermaid")
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```mermaid\n(.*?)```").FindSubmatch(doc)
	if block == nil {
		t.Fatal("docs/architecture.md has no mermaid block")
	}
	file := filepath.Join(t.TempDir(), "architecture.mmd")
	if err := os.WriteFile(file, block[1], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(nodeBin, filepath.Join(checker, "check.mjs"), file).Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s", err, out)
	}
	var parsed []struct {
		OK       bool
		Error    string
		Vertices []struct{ ID, Text string }
		Edges    []struct{ Start, End string }
	}
	if err := json.Unmarshal(out, &parsed); err != nil || len(parsed) != 1 {
		t.Fatalf("checker output (%v): %s", err, out)
	}
	if !parsed[0].OK {
		t.Fatalf("Mermaid cannot parse the diagram: %s", parsed[0].Error)
	}
	deps := moduleDeps(t, root)
	pkg := map[string]string{}
	for _, v := range parsed[0].Vertices {
		if _, ok := deps[v.Text]; !ok {
			t.Errorf("box %q is not a package of the module", v.Text)
		}
		pkg[v.ID] = v.Text
	}
	if len(parsed[0].Edges) == 0 {
		t.Fatal("the diagram has no arrows")
	}
	for _, e := range parsed[0].Edges {
		from, to := pkg[e.Start], pkg[e.End]
		if !deps[from][to] {
			t.Errorf("arrow %s --> %s: %s does not depend on %s", from, to, from, to)
		}
		if deps[to][from] {
			t.Errorf("arrow %s --> %s: %s depends on %s too", from, to, to, from)
		}
	}
}

// moduleDeps returns, for each package directory of the module (relative to
// root), the set of module packages it depends on, directly or not; test files
// are left out.
func moduleDeps(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	direct := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		dir = filepath.ToSlash(dir)
		if dir == "." {
			return nil
		}
		if _, ok := direct[dir]; !ok {
			direct[dir] = nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, modulePath); ok {
				direct[dir] = append(direct[dir], rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]map[string]bool{}
	var visit func(p string) map[string]bool
	visit = func(p string) map[string]bool {
		if d, ok := all[p]; ok {
			return d
		}
		d := map[string]bool{}
		all[p] = d
		for _, q := range direct[p] {
			d[q] = true
			for r := range visit(q) {
				d[r] = true
			}
		}
		return d
	}
	for p := range direct {
		visit(p)
	}
	return all
}
