package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/graphctl/graphctl/runtime/load"
)

// TestCommandsRefuseFilesThatAreNotFiles gives validate, run and test paths
// that look like graph files but are a named pipe or a device, directly and
// as a subgraph: each is refused at once, naming the path and what it is,
// where reading it would wait for a writer forever or never end. A path given
// on the command line is an I/O error (exit 2); a subgraph is an error of
// the graph at the node that names it (exit 1).
func TestCommandsRefuseFilesThatAreNotFiles(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe.cue")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(dir, "parent.cue")
	src := hostileHeader + "nodes: a: {type: \"subgraph\", config: graph: \"pipe.cue\", next: \"END\"}\n"
	if err := os.WriteFile(parent, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		exit       int
		want       string
	}{
		{"a named pipe", pipe, 2, pipe + ": not a regular file (a named pipe)"},
		{"a device", zero, 2, zero + ": not a regular file (a device)"},
		{"a subgraph that is a named pipe", parent, 1, parent + `:8:46: [subgraph-missing] node "a": subgraph file "pipe.cue": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, args := range [][]string{
				{"validate", tt.file},
				{"run", tt.file, "-i", "hi", "--data-dir", filepath.Join(dir, "data")},
				{"test", tt.file},
			} {
				out, errOut, code := run(t, args...)
				all := out + errOut
				if code != tt.exit || !strings.Contains(all, tt.want) || !strings.Contains(all, "not a regular file") {
					t.Errorf("%s: exit %d, want %d with %q:\n%s", args[0], code, tt.exit, tt.want, all)
				}
				assertNoGoTrace(t, args[0], all)
			}
		})
	}
}

// hostileYAMLNode completes yamlHeader with a node.
const hostileYAMLNode = "nodes:\n  a: {type: reply, config: {text: hi}, next: END}\n"

// assertNoGoTrace fails when a command's output shows a panic or a Go
// stack trace.
func assertNoGoTrace(t *testing.T, command, out string) {
	t.Helper()
	for _, bad := range []string{"panic", "goroutine ", "runtime/debug", ".go:"} {
		if strings.Contains(out, bad) {
			t.Fatalf("%s: output holds %q:\n%s", command, bad, out)
		}
	}
}

// TestValidateThousandsOfMisspeltTargets validates a graph of 5,000 nodes
// each naming a node that does not exist: every mistake is reported at its
// line, the first ones with the node most likely meant, and once the hints'
// budget is spent the rest with the list of nodes (and END) instead, so that checking
// stays linear in the file instead of comparing every name with every node.
func TestValidateThousandsOfMisspeltTargets(t *testing.T) {
	const n = 5000
	var b strings.Builder
	b.WriteString(strings.Replace(hostileHeader, `start: "a"`, `start: "n0"`, 1))
	b.WriteString("nodes: {\n")
	for i := range n {
		fmt.Fprintf(&b, "\tn%d: {type: \"reply\", config: text: \"hi\", next: \"n%dx\"}\n", i, i)
	}
	b.WriteString("}\n")
	path := filepath.Join(t.TempDir(), "many.cue")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "validate", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, errOut)
	}
	assertNoGoTrace(t, "validate", out+errOut)
	lines := strings.Split(strings.TrimSpace(out+errOut), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want one error per node (%d); first: %s", len(lines), n, lines[0])
	}
	first := path + `:9:49: [unknown-target] node "n0": next names unknown node "n0x"; did you mean "n0"?`
	last := fmt.Sprintf(`%s:%d:52: [unknown-target] node "n%d": next names unknown node "n%dx" (the nodes are "n0", "n1",`, path, 8+n, n-1, n-1)
	if lines[0] != first || !strings.HasPrefix(lines[n-1], last) || !strings.HasSuffix(lines[n-1], fmt.Sprintf("(%d in all))", n+1)) {
		t.Fatalf("first and last errors:\n%s\n%s\nwant\n%s\n%s…", lines[0], lines[n-1], first, last)
	}
}

// TestServeRefusesABadGraphsDirectory starts serve on directories that hold a
// valid graph and one bad file each: serve refuses to start (exit 1) and
// prints the bad file's problem at file:line:col, whether the file is an
// invalid graph, a symbolic link to itself, a named pipe or a second graph
// of the same name.
func TestServeRefusesABadGraphsDirectory(t *testing.T) {
	good := hostileHeader + hostileNode
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		at    string // file:line:col: [code] after the directory
		want  string
	}{
		{"an invalid graph", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "bad.yaml"), strings.Replace(yamlHeader, "name: h", "name: b", 1)+"nodes:\n  a: {type: reply, config: {text: hi}, next: ENDD}\n")
		}, "bad.yaml:8:46: [unknown-target]", `node "a": next names unknown node "ENDD"; did you mean "END"?`},
		{"a symbolic link to itself", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(dir, "loop.cue"), filepath.Join(dir, "loop.cue")); err != nil {
				t.Fatal(err)
			}
		}, "loop.cue:1:1: [unreadable]", "the graph file cannot be read: too many levels of symbolic links"},
		{"a named pipe", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "pipe.yaml:1:1: [unreadable]", "the graph file cannot be read: not a regular file (a named pipe)"},
		{"a yaml file of two documents", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "two.yaml"), strings.Replace(yamlHeader, "name: h", "name: two", 1)+hostileYAMLNode+"---\nname: three\n")
		}, "two.yaml:9:1: [syntax]", "a second YAML document starts here, and a graph file is one document"},
		{"two graphs of one name", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "same.cue"), good)
		}, "same.cue:2:15: [duplicate-graph]", `graph name "h" is already served from `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			graphs := filepath.Join(dir, "graphs")
			if err := os.Mkdir(graphs, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(graphs, "good.cue"), good)
			tt.setup(t, graphs)
			out, errOut, code := run(t, "serve", "--graphs", graphs, "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"))
			all := out + errOut
			if code != 1 || !strings.Contains(all, filepath.Join(graphs, tt.at)+" "+tt.want) {
				t.Fatalf("exit %d, want 1 with %s %s:\n%s", code, tt.at, tt.want, all)
			}
			assertNoGoTrace(t, "serve", all)
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDeepNestingIsRefusedAtItsPlace gives the commands files whose values
// nest past load.MaxNesting in ways the parsers allow: a CUE label chain
// (a: b: c: …) a hundred thousand deep, which the CUE parser's own depth
// limit does not count and whose indexing and evaluation take the square of
// its depth, and lists or YAML mappings just past the limit. Each is a
// syntax error at the first value past the limit, reported without
// evaluating the file.
func TestDeepNestingIsRefusedAtItsPlace(t *testing.T) {
	var yamlDeep strings.Builder
	yamlDeep.WriteString(yamlHeader + hostileYAMLNode + "vars:\n")
	for i := range 1001 {
		yamlDeep.WriteString(strings.Repeat(" ", i+1) + "k:\n")
	}
	yamlDeep.WriteString(strings.Repeat(" ", 1002) + "v\n")
	tests := []struct{ name, file, src, at string }{
		{"cue label chain 100000 deep", "chain.cue", hostileHeader + hostileNode + "vars: " + strings.Repeat("k: ", 100000) + "1\n", "9:3007"},
		{"cue lists 1001 deep", "lists.cue", hostileHeader + hostileNode + "vars: x: " + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + "\n", "9:1009"},
		{"yaml mappings 1001 deep", "deep.yaml", yamlDeep.String(), "1010:1002"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			writeFile(t, path, tt.src)
			want := fmt.Sprintf("%s:%s: [syntax] values nest deeper than %d levels here; a graph file needs a few", path, tt.at, load.MaxNesting)
			for _, args := range [][]string{
				{"validate", path},
				{"run", path, "-i", "hi", "--data-dir", filepath.Join(dir, "data")},
				{"test", path},
			} {
				out, errOut, code := run(t, args...)
				all := out + errOut
				if code != 1 || !strings.Contains(all, want) {
					t.Errorf("%s: exit %d, want 1 with\n%s\ngot:\n%s", args[0], code, want, all)
				}
				assertNoGoTrace(t, args[0], all)
			}
		})
	}
}

// TestDirectoryOfGraphsReportsUnreadableFiles validates and tests a
// directory holding a valid graph, an invalid one and a file that cannot be
// read: the unreadable file is reported at file:1:1 as serve reports it,
// and the directory's other files are still checked, instead of the
// command stopping at the first file it cannot read.
func TestDirectoryOfGraphsReportsUnreadableFiles(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // makes the file, returns its name
		want  string
	}{
		{"a dangling link", func(t *testing.T, dir string) string {
			if err := os.Symlink("gone.cue", filepath.Join(dir, "dangling.cue")); err != nil {
				t.Fatal(err)
			}
			return "dangling.cue"
		}, "it is a symbolic link to gone.cue, which does not exist"},
		{"a link to itself", func(t *testing.T, dir string) string {
			if err := os.Symlink(filepath.Join(dir, "self.yaml"), filepath.Join(dir, "self.yaml")); err != nil {
				t.Fatal(err)
			}
			return "self.yaml"
		}, "too many levels of symbolic links"},
		{"a named pipe", func(t *testing.T, dir string) string {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe.cue"), 0o644); err != nil {
				t.Fatal(err)
			}
			return "pipe.cue"
		}, "not a regular file (a named pipe)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "good.cue"), hostileHeader+hostileNode)
			writeFile(t, filepath.Join(dir, "bad.cue"), strings.Replace(hostileHeader, `name:        "h"`, `name:        "b"`, 1)+"nodes: a: {type: \"reply\", config: text: \"hi\", next: \"ENDD\"}\n")
			name := tt.setup(t, dir)
			unreadable := filepath.Join(dir, name) + ":1:1: [unreadable] the graph file cannot be read: " + tt.want
			invalid := filepath.Join(dir, "bad.cue") + `:8:54: [unknown-target] node "a": next names unknown node "ENDD"; did you mean "END"?`
			for _, command := range []string{"validate", "test"} {
				out, errOut, code := run(t, command, dir)
				all := out + errOut
				if code != 1 || !strings.Contains(all, unreadable) || !strings.Contains(all, invalid) {
					t.Errorf("%s: exit %d, want 1 with\n%s\n%s\ngot:\n%s", command, code, unreadable, invalid, all)
				}
				assertNoGoTrace(t, command, all)
			}
			// Named on the command line, the file is an error of the command.
			out, errOut, code := run(t, "validate", filepath.Join(dir, name))
			if code != 2 || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("validate %s: exit %d, want 2 with %q:\n%s%s", name, code, tt.want, out, errOut)
			}
		})
	}
}

// TestValidateADirectoryRefusesDuplicateGraphNames validates a directory
// holding two graphs of one name, which serve refuses to serve: validate
// reports the second at its name with serve's words, while the two files
// named one by one are valid (a name is the matter of the directory they
// are served from).
func TestValidateADirectoryRefusesDuplicateGraphNames(t *testing.T) {
	dir := t.TempDir()
	graphs := filepath.Join(dir, "graphs")
	if err := os.MkdirAll(filepath.Join(graphs, "more"), 0o755); err != nil {
		t.Fatal(err)
	}
	first, second := filepath.Join(graphs, "a.cue"), filepath.Join(graphs, "more", "b.yaml")
	writeFile(t, first, hostileHeader+hostileNode)
	writeFile(t, second, yamlHeader+hostileYAMLNode)
	want := second + `:2:7: [duplicate-graph] graph name "h" is already served from ` + first + ": each graph of the directory needs a name of its own"
	tests := []struct {
		name string
		args []string
		exit int
		want string
	}{
		{"the directory", []string{"validate", graphs}, 1, want},
		{"serve of the directory", []string{"serve", "--graphs", graphs, "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data")}, 1, want},
		{"the two files", []string{"validate", first, second}, 0, "ok  " + second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.exit || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d, want %d with %q:\n%s%s", code, tt.exit, tt.want, out, errOut)
			}
		})
	}
}
