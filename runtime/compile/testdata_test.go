package compile

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/load"
)

// testEnv is the environment the file-based suites compile with: only
// GRAPHCTL_TEST_SET is set, whatever the process environment holds.
func testEnv(name string) (string, bool) {
	if name == "GRAPHCTL_TEST_SET" {
		return "value", true
	}
	return "", false
}

// check loads a graph file and, when loading found no errors, compiles it.
func check(t *testing.T, path string) diag.List {
	t.Helper()
	g, diags, err := load.File(path)
	if err != nil {
		t.Fatal(err)
	}
	if diags.HasErrors() || g == nil {
		return diags
	}
	_, more := Compile(g, Options{LookupEnv: testEnv})
	return append(diags, more...)
}

// wantOf reads the "want: <code> <line>:<col> [fragment]" comment on a file's
// first line; the diagnostic's message must contain the fragment, when given.
func wantOf(t *testing.T, path string) (code string, line, col int, fragment string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		t.Fatalf("%s is empty", path)
	}
	first := strings.TrimSpace(sc.Text())
	first = strings.TrimPrefix(strings.TrimPrefix(first, "//"), "#")
	first = strings.TrimSpace(first)
	if _, err := fmt.Sscanf(first, "want: %s %d:%d", &code, &line, &col); err != nil {
		t.Fatalf("%s: first line %q is not `want: <code> <line>:<col>`: %v", path, first, err)
	}
	if fields := strings.Fields(first); len(fields) > 3 {
		fragment = strings.Join(fields[3:], " ")
	}
	return code, line, col, fragment
}

func suiteFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.cue", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join("testdata", dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

// TestInvalidGraphs loads every file of testdata/invalid, each holding one
// mistake, and asserts that exactly that mistake is reported: a diagnostic with
// the wanted code at the wanted line:col, and no diagnostic of another code.
// Every file must fail validation, except that a file whose mistake is only
// worth a warning (env-unset) must produce that warning and no error.
func TestInvalidGraphs(t *testing.T) {
	files := suiteFiles(t, "invalid")
	if len(files) < 40 {
		t.Fatalf("want at least 40 invalid graphs, have %d", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			code, line, col, fragment := wantOf(t, path)
			diags := check(t, path)
			found := false
			for _, d := range diags {
				if d.Code != code {
					t.Errorf("unexpected diagnostic %s", d)
					continue
				}
				if d.Line == line && d.Col == col && d.File == path {
					if !strings.Contains(d.Message, fragment) {
						t.Errorf("%s: the message lacks %q", d, fragment)
					}
					found = true
					if (d.Severity == diag.Warning) == diags.HasErrors() {
						t.Errorf("%s: severity %s, and the file has errors = %v", d, d.Severity, diags.HasErrors())
					}
				}
			}
			if !found {
				t.Errorf("want [%s] at %d:%d, got:\n%s", code, line, col, diags.Error())
			}
			if len(diags) == 0 {
				t.Error("no diagnostics at all")
			}
		})
	}
}

// TestValidGraphs asserts that the files of testdata/valid compile without
// errors or warnings.
func TestValidGraphs(t *testing.T) {
	files := suiteFiles(t, "valid")
	if len(files) == 0 {
		t.Fatal("no valid graphs")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g, diags, err := load.File(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(diags) > 0 {
				t.Fatalf("load:\n%s", diags.Error())
			}
			cg, diags := Compile(g, Options{LookupEnv: testEnv})
			if len(diags) > 0 || cg == nil {
				t.Fatalf("compile:\n%s", diags.Error())
			}
			for _, name := range cg.NodeOrder {
				if cg.Nodes[name].Impl == nil {
					t.Errorf("node %q was not built", name)
				}
			}
		})
	}
}
