// Package load reads graph files — CUE, or YAML validated by the same schema —
// into graph.Graph values.
//
// Loading parses the user's files, checks the document against the embedded
// schema (graphschema.Source(), definition #Graph, with the defaults keys
// node packages declare) and each node's config against
// its node type's schema, and decodes the result with the position of every
// value. Problems are reported all at once as diagnostics with stable codes at
// the user's file:line:col; positions inside the embedded schema are never
// shown. Semantic checks (routing targets, expressions, reducers) belong to
// runtime/compile.
//
// Files of plain data (no references, comprehensions, operators or
// constraints) are decoded from their syntax tree and checked in Go against
// schemas compiled from the same CUE (plain.go, schemacheck.go), several
// times faster than the evaluator; whenever that check finds a problem or
// is unsure, the evaluator loads the files, so diagnostics are the same on
// either path.
//
// Decoded values (Graph.Vars, Node.Config, Defaults.Raw, Tests, field defaults
// and enums) are JSON-like: map[string]any, []any, string, bool, nil, int64 for
// integers and float64 for other numbers.
package load

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// SourceFile is one in-memory file of a graph, such as the tests that go with
// a graph file.
type SourceFile struct {
	// Name is the file name used in diagnostics; its extension selects the
	// format (.yaml and .yml are YAML, anything else CUE).
	Name string
	Data []byte
}

// Loader loads graph files, checking each node's config against the schema
// of its type in Registry. The zero Loader uses node.Default(), as the
// package-level File and Source do.
type Loader struct {
	// Registry holds the node types graph files may use; nil means
	// node.Default().
	Registry *node.Registry
}

// File loads the graph file at path with the default registry; see
// Loader.File.
func File(path string) (*graph.Graph, diag.List, error) { return Loader{}.File(path) }

// Source loads a graph from memory with the default registry; see
// Loader.Source.
func Source(filename string, src []byte, extra ...SourceFile) (*graph.Graph, diag.List) {
	return Loader{}.Source(filename, src, extra...)
}

// File loads the graph file at path together with its tests: the sibling file
// <name>_test.cue, <name>_test.yaml or <name>_test.yml, in either format
// whatever the graph's format (at most one of them may exist). The error
// reports only I/O problems; everything wrong with the files' content is in
// the diagnostics.
func (ld Loader) File(path string) (*graph.Graph, diag.List, error) {
	src, d, err := ReadFile(path)
	if err != nil {
		return nil, nil, pathError(path, err)
	}
	if d != nil {
		return nil, d, nil
	}
	if !HasGraphExtension(path) {
		return nil, diag.List{misnamed(path)}, nil
	}
	var extra []SourceFile
	if !IsTestFile(path) {
		for _, testPath := range TestFiles(path) {
			data, d, err := ReadFile(testPath)
			if err == nil && d != nil {
				return nil, d, nil
			}
			if err != nil {
				return nil, nil, fmt.Errorf("tests of %s: %w", path, pathError(testPath, err))
			}
			extra = append(extra, SourceFile{Name: testPath, Data: data})
		}
	}
	if len(extra) > 1 {
		var l diag.List
		names := make([]string, len(extra))
		for i, f := range extra {
			names[i] = filepath.Base(f.Name)
		}
		l.Errorf(diag.Pos{File: extra[1].Name, Line: 1, Col: 1}, "duplicate-tests", "",
			"%s has %d test files (%s): keep its tests in one of them", filepath.Base(path), len(extra), strings.Join(names, ", "))
		return nil, l, nil
	}
	g, diags := ld.Source(path, src, extra...)
	return g, diags, nil
}

// ReadError is the error of a graph or test file that cannot be read: a
// missing file, a directory, a dangling or looping link, a named pipe, no
// permission. It names the file and the system's reason ("g.cue: is a
// directory"), without the system call that failed.
type ReadError struct {
	Path string
	Err  error
}

func (e *ReadError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the system's reason.
func (e *ReadError) Unwrap() error { return e.Err }

// pathError is the ReadError of path. A path that does not exist because
// it is a symbolic link to nothing says so, with the link's target.
func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		if target, lerr := os.Readlink(path); lerr == nil {
			err = fmt.Errorf("it is a symbolic link to %s, which does not exist (%w)", target, err)
		}
	}
	return &ReadError{Path: path, Err: err}
}

// CodeDuplicateGraph is the diagnostic code of a graph of a directory whose
// name another graph of the directory already has.
const CodeDuplicateGraph = "duplicate-graph"

// DuplicateGraph is the diagnostic of graph g, found in a directory whose
// graph file prev already has g's name, at its name: the graphs of a
// directory are served by name, so each needs its own.
func DuplicateGraph(g *graph.Graph, prev string) diag.List {
	pos, ok := g.Pos["name"]
	if !ok {
		pos = diag.Pos{File: g.File, Line: 1, Col: 1}
	}
	var l diag.List
	l.Errorf(pos, CodeDuplicateGraph, "name", "graph name %q is already served from %s: each graph of the directory needs a name of its own", g.Name, prev)
	return l
}

// CodeUnreadable is the diagnostic code of a graph file found in a
// directory that cannot be read.
const CodeUnreadable = "unreadable"

// Unreadable is the diagnostic of a graph file that cannot be read, at its
// first line: where the files of a directory are checked or served, such a
// file is an invalid graph like any other, and the others are still checked.
func Unreadable(path string, err error) diag.List {
	var re *ReadError
	var pe *fs.PathError
	switch {
	case errors.As(err, &re):
		err = re.Err
	case errors.As(err, &pe):
		err = pe.Err
	}
	var l diag.List
	l.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, CodeUnreadable, "", "the graph file cannot be read: %v", err)
	return l
}

// MaxFileSize bounds the size of a graph or test file. A graph file is a few
// kilobytes; one of megabytes is a mistake, and parsing it would take time
// and memory in proportion.
const MaxFileSize = 4 << 20

// ErrNotRegular is the error of a path that is neither a regular file nor a
// directory: a named pipe, a device or a socket, whose reading could wait
// forever or never end.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads a graph or test file, or returns a too-large diagnostic,
// without reading it, when it holds more than MaxFileSize bytes. A path that
// is not a regular file (a directory, a named pipe, a device) is an error,
// returned without waiting for the pipe or reading the device.
func ReadFile(path string) ([]byte, diag.List, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		if info.IsDir() {
			return nil, nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
		}
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, fileKind(info.Mode()))}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxFileSize {
		size := int64(len(data))
		if info, err := f.Stat(); err == nil && info.Size() > size {
			size = info.Size()
		}
		return nil, diag.List{tooLarge(path, size)}, nil
	}
	return data, nil, nil
}

// fileKind names what a path that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// tooLarge is the diagnostic of a file past MaxFileSize.
func tooLarge(name string, size int64) diag.Diagnostic {
	var l diag.List
	l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, "too-large", "",
		"the file holds %s; a graph file may hold at most %s", mebibytes(size), mebibytes(MaxFileSize))
	return l[0]
}

// mebibytes writes a size in MiB, or in bytes below one.
func mebibytes(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// testSuffixes are the endings of the test files of a graph file.
var testSuffixes = []string{"_test.cue", "_test.yaml", "_test.yml"}

// IsTestFile reports whether a file name is that of a graph's test file
// (<name>_test.cue, .yaml or .yml), loaded with its graph rather than as one.
func IsTestFile(name string) bool {
	lower := strings.ToLower(name)
	for _, suf := range testSuffixes {
		if strings.HasSuffix(lower, suf) {
			return true
		}
	}
	return false
}

// TestFiles lists the test files that exist beside a graph file.
func TestFiles(path string) []string {
	base := strings.TrimSuffix(path, filepath.Ext(path))
	var out []string
	for _, suf := range testSuffixes {
		if info, err := os.Stat(base + suf); err == nil && !info.IsDir() {
			out = append(out, base+suf)
		}
	}
	return out
}

// GraphOf returns the graph file a test file belongs to (x_test.cue → x.cue,
// x.yaml or x.yml, whichever exists beside it), and false when none does or
// path is not a test file.
func GraphOf(path string) (string, bool) {
	lower := strings.ToLower(path)
	for _, suf := range testSuffixes {
		if !strings.HasSuffix(lower, suf) {
			continue
		}
		base := path[:len(path)-len(suf)]
		for _, ext := range []string{".cue", ".yaml", ".yml"} {
			if info, err := os.Stat(base + ext); err == nil && !info.IsDir() {
				return base + ext, true
			}
		}
	}
	return "", false
}

// Source loads a graph from memory: src is the graph file named filename and
// extra are further files unified with it (its tests). The graph is nil only
// when a file cannot be parsed; otherwise it is filled as far as the content
// allows, and the diagnostics say whether it is valid.
func (ld Loader) Source(filename string, src []byte, extra ...SourceFile) (*graph.Graph, diag.List) {
	return loadSources(ld.Registry.OrDefault(), append([]SourceFile{{Name: filename, Data: src}}, extra...))
}

// Expand turns files and directories into the sorted list of graph files they
// hold. Directories are walked recursively; test files (*_test.cue,
// *_test.yaml, *_test.yml, loaded with their graph) and directories named
// testdata or node_modules (npm packages, whose YAML files are not graphs)
// are skipped. A path given explicitly is kept whatever its extension, and
// loading it says what is wrong with its name.
func Expand(paths []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, pathError(p, err)
		}
		if !info.IsDir() {
			add(p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && (d.Name() == "testdata" || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if isGraphFile(d.Name()) {
				add(path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("load: walking %s: %w", p, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

func isGraphFile(name string) bool {
	return !IsTestFile(name) && HasGraphExtension(name)
}

// HasGraphExtension reports whether a file name ends in .cue, .yaml or .yml
// (in any case): the names graph files have, which say how they are read.
func HasGraphExtension(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".cue", ".yaml", ".yml":
		return true
	}
	return false
}

// misnamed is the diagnostic of a file given as a graph whose name says
// neither CUE nor YAML: read as CUE, a YAML or text file would be reported
// as a list of undefined words.
func misnamed(path string) diag.Diagnostic {
	name := filepath.Base(path)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	what := fmt.Sprintf("not %s", ext)
	if ext == "" {
		what = fmt.Sprintf("and %q has none", name)
	}
	advice := fmt.Sprintf("rename it %s.cue or %s.yaml, after the format it is written in", stem, stem)
	if strings.EqualFold(ext, ".json") {
		advice = fmt.Sprintf("rename it %s.yaml (JSON is valid YAML)", stem)
	}
	var l diag.List
	l.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, "file-name", "",
		"a graph file's name ends in .cue, .yaml or .yml, %s: %s", what, advice)
	return l[0]
}
