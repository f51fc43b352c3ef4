package runtime_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The core (runtime and server) knows no node family: node packages add
// what they bring to the graph language (defaults keys, state types,
// reducers, test keys, answer kinds) through registrations, and the
// application links them. These tests fail when a core package imports a
// node package or names a node family in its code.

const module = "github.com/graphctl/graphctl"

// TestCoreImportsNoNodePackage checks with go list that no package under
// runtime/ or server/ depends on a package under builtin-nodes/ (tests
// aside, which may link node packages to exercise them).
func TestCoreImportsNoNodePackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/runtime/...", module+"/server/...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var offenders []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, module+"/builtin-nodes/") || pkg == module+"/builtin-nodes" {
			offenders = append(offenders, pkg)
		}
	}
	if len(offenders) > 0 {
		t.Fatalf("core packages depend on node packages: %s", strings.Join(offenders, ", "))
	}
}

// nodeFamily matches the names of node families in code and comments: the
// model node ("llm"), ExecutionContracts and their server endpoints ("ecs",
// "contract(s)"), and the cognitive chat graph.
var nodeFamily = regexp.MustCompile(`(?i)\bllm\b|execution ?contract|\becs\b|\bcontracts?\b|\bcognitive\b`)

// allowed are lines that use such a word in a sense of its own, by file and
// text: OpenInference's span kind "LLM", a standard tracing vocabulary; and
// the graph the load generator (a client of the server, not part of it) has
// a server run.
var allowed = map[string][]string{
	"runtime/telemetry/tracer.go": {`child spans of their own (LLM, TOOL)`, `"chat": "LLM"`},
	"server/loadgen/streams.go":   {`graph whose one llm node asks the model`, `nodes: talk: {type: "llm"`},
}

// testLanguage are the files of the declarative test runner, whose cases
// write scripted model replies under the key "llm" (handed to nodes under
// the script key of the graph's node registry): there, that word alone is
// allowed.
var testLanguage = map[string]bool{"runtime/graphtest/graphtest.go": true, "runtime/graphtest/spec.go": true}

var llmWord = regexp.MustCompile(`(?i)\bllm\b`)

// TestCoreNamesNoNodeFamily checks the Go and CUE sources of runtime/ and
// server/ (tests and test data aside) for the names of node families.
func TestCoreNamesNoNodeFamily(t *testing.T) {
	for _, dir := range []string{"../runtime", "../server"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				switch d.Name() {
				case "testdata", "node_modules":
					return filepath.SkipDir
				}
				return nil
			}
			name := d.Name()
			if strings.HasSuffix(name, "_test.go") || !(strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".cue")) {
				return nil
			}
			rel, _ := filepath.Rel("..", path)
			checkNames(t, path, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func checkNames(t *testing.T, path, rel string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if testLanguage[rel] {
			text = llmWord.ReplaceAllString(text, "")
		}
		if !nodeFamily.MatchString(text) || isAllowed(rel, text) {
			continue
		}
		t.Errorf("%s:%d names a node family (%q): %s", rel, line, nodeFamily.FindString(text), strings.TrimSpace(text))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
}

func isAllowed(rel, text string) bool {
	for _, s := range allowed[rel] {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}
