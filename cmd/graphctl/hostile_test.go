package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileHeader starts a graph file that is valid up to what a case adds.
const hostileHeader = `dsl_version: "graphctl/v1"
name:        "h"
state: {
	messages: {type: "messages"}
	n:        {type: "int"}
}
start: "a"
`

// hostileNode completes hostileHeader with a node.
const hostileNode = "nodes: a: {type: \"reply\", config: text: \"hi\", next: \"END\"}\n"

// yamlHeader is hostileHeader in YAML.
const yamlHeader = `dsl_version: graphctl/v1
name: h
state:
  messages: {type: messages}
  n: {type: int}
start: a
`

// aliasBomb is a YAML "billion laughs": nine levels of nine aliases.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString(`l0: &l0 ["x","x","x","x","x","x","x","x","x"]` + "\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// TestValidateAndRunRejectHostileFiles feeds graphctl validate and run one
// mistake or hostile construct per file: each must exit non-zero with
// file:line:col: [code] and a message naming what is wrong, in bounded time
// and memory, and never with a panic or a Go stack trace. Files given by
// name (a directory, a symlink loop, a missing file) are usage or I/O errors
// (exit 2) naming the path. The semantic checks are tested one by one, with
// their exact positions, in runtime/compile/testdata/invalid; this table
// runs the commands a user runs.
func TestValidateAndRunRejectHostileFiles(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		file string // the file given to the commands, relative to dir
		src  string // its content (unless setup makes it)
		// setup makes what src cannot (directories, links, big files, other files).
		setup func(t *testing.T, path string)
		exit  int
		// at is "line:col: [code]" after the path (exit 1), or empty for exit 2.
		at       string
		contains string
		// also is more the output must hold: another problem reported at once.
		also string
		// validateOnly: run does not read a graph's test cases.
		validateOnly bool
	}{
		// Syntax and encoding.
		{name: "cue unclosed brace", file: "brace.cue", src: hostileHeader + "nodes: a: {type: \"reply\", config: text: \"hi\", next: \"END\"\n",
			exit: 1, at: "8:59: [syntax]", contains: "expected '}', found 'EOF'"},
		{name: "cue stray token", file: "stray.cue", src: hostileHeader + "nodes: a: {type: \"reply\" next: \"END\"}\n",
			exit: 1, at: "8:26: [syntax]", contains: "missing ',' in struct literal"},
		{name: "yaml bad indentation", file: "indent.yaml", src: yamlHeader + "nodes:\n  a:\n    type: reply\n   next: END\n",
			exit: 1, at: "10:4: [syntax]", contains: "not allowed in this context"},
		{name: "yaml tab indentation", file: "tab.yaml", src: yamlHeader + "nodes:\n\ta: {type: reply}\n",
			exit: 1, at: "8:1: [syntax]", contains: "YAML indents with spaces"},
		{name: "yaml unclosed flow mapping", file: "flow.yaml", src: yamlHeader + "nodes: {a: {type: reply}\n",
			exit: 1, at: "7:8: [syntax]", contains: "flow mapping end token"},
		{name: "empty cue file", file: "empty.cue", src: "", exit: 1, at: "1:1: [empty-file]", contains: "the file is empty"},
		{name: "empty yaml file", file: "empty.yaml", src: "\n# nothing yet\n", exit: 1, at: "1:1: [empty-file]", contains: "the file is empty"},
		{name: "a yaml list, not a graph", file: "list.yaml", src: "- a\n- b\n", exit: 1, at: "1:1: [type-mismatch]", contains: "must be an object of fields"},
		{name: "latin-1 byte", file: "latin1.yaml", src: yamlHeader + "description: caf\xe9\n",
			exit: 1, at: "7:17: [encoding]", contains: "byte 0xe9 is not UTF-8"},
		{name: "utf-16 file", file: "utf16.cue", src: "\xff\xfed\x00s\x00l\x00", exit: 1, at: "1:1: [encoding]", contains: "UTF-16"},
		{name: "50 MB file", file: "big.cue", setup: func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.WriteString(hostileHeader + "description: \"")
			chunk := strings.Repeat("x", 1<<20)
			for i := 0; i < 50; i++ {
				f.WriteString(chunk)
			}
			f.WriteString("\"\n")
		}, exit: 1, at: "1:1: [too-large]", contains: "a graph file may hold at most 4.0 MiB"},

		// Hostile structure.
		{name: "yaml alias bomb", file: "bomb.yaml", src: aliasBomb() + yamlHeader,
			exit: 1, at: "1:1: [syntax]", contains: "aliases expand to more than"},
		{name: "yaml nested 100000 deep", file: "deep.yaml", src: yamlHeader + "vars: {x: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}\n",
			exit: 1, at: "7:1: [syntax]", contains: "exceeded max depth"},
		{name: "cue nested 100000 deep", file: "deep.cue", src: hostileHeader + "vars: x: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n",
			exit: 1, at: "8:1009: [syntax]", contains: "values nest deeper than 1000 levels here"},
		{name: "cue import of os", file: "import.cue", src: "import \"os\"\n" + hostileHeader + "description: os.Getenv(\"HOME\")\n" + hostileNode,
			exit: 1, at: "1:8: [invalid-import]", contains: `package "os" cannot be imported`},
		{name: "cue definition that contains itself", file: "cycle.cue", src: hostileHeader + "#A: {a: #A}\nvars: x: #A\n" + hostileNode,
			exit: 1, at: "8:1: [invalid-value]", contains: "#A.a: structural cycle"},
		{name: "cue comprehension past the limits", file: "compr.cue", src: "import \"list\"\n" + hostileHeader +
			"vars: x: [for i in list.Range(0, 3000, 1) for j in list.Range(0, 3000, 1) {i * j}]\n" + hostileNode,
			exit: 1, at: "9:11: [eval-limit]", contains: "the first that can grow without bound"},
		{name: "yaml number past 64 bits", file: "bignum.yaml", src: yamlHeader + "vars: {big: 123456789012345678901234567890}\n",
			exit: 1, at: "7:13: [invalid-number]", contains: "the number 123456789012345678901234567890 is too large"},
		{name: "cue int default past 64 bits", file: "bigint.cue", src: strings.Replace(hostileHeader, `n:        {type: "int"}`, `n:        {type: "int", default: 99999999999999999999999999999}`, 1) + hostileNode,
			exit: 1, at: "5:35: [invalid-default]", contains: "does not fit in an int"},

		// Wrong types, names and keys.
		{name: "wrong type", file: "type.yaml", src: strings.Replace(yamlHeader, "name: h", "name: 5", 1),
			exit: 1, at: "2:7: [type-mismatch]", contains: "name: want string, got int"},
		{name: "wrong dsl_version", file: "version.cue", src: strings.Replace(hostileHeader, "graphctl/v1", "graphctl/v2", 1) + hostileNode,
			exit: 1, at: "1:15: [dsl-version]", contains: `got "graphctl/v2"`},
		{name: "unknown node type", file: "nodetype.cue", src: hostileHeader + "nodes: a: {type: \"replay\", config: text: \"hi\", next: \"END\"}\n",
			exit: 1, at: "8:19: [unknown-node-type]", contains: `did you mean "reply"?`},
		{name: "unknown top-level field", file: "top.cue", src: hostileHeader + "nodez: {}\n" + hostileNode,
			exit: 1, at: "8:1: [unknown-field]", contains: `unknown field "nodez"`},
		{name: "unknown node field", file: "nodefield.yaml", src: yamlHeader + "nodes:\n  a: {type: reply, config: {text: hi}, nxt: END}\n",
			exit: 1, at: "8:40: [unknown-field]", contains: `did you mean "next"?`},
		{name: "unknown config key", file: "config.cue", src: hostileHeader + "nodes: a: {type: \"reply\", config: {txt: \"hi\"}, next: \"END\"}\n",
			exit: 1, at: "8:36: [unknown-field]", contains: `did you mean "text"?`},
		{name: "misspelt reducer", file: "reducer.cue", src: strings.Replace(hostileHeader, `n:        {type: "int"}`, `n:        {type: "int", reducer: "ad"}`, 1) +
			"nodes: a: {type: \"set\", config: set: n: \"1\", next: \"END\"}\n",
			exit: 1, at: "5:36: [unknown-reducer]", contains: `unknown reducer "ad"; did you mean "add"?`},
		{name: "reducer that does not fit", file: "append.cue", src: strings.Replace(hostileHeader, `n:        {type: "int"}`, `n:        {type: "int", reducer: "append"}`, 1) +
			"nodes: a: {type: \"set\", config: set: n: \"1\", next: \"END\"}\n",
			exit: 1, at: "5:36: [invalid-reducer]", contains: `cannot use reducer "append"`},
		{name: "state field named state", file: "statefield.yaml", src: strings.Replace(yamlHeader, "n: {type: int}", "state: {type: string}", 1) + "nodes:\n  a: {type: reply, config: {text: hi}, next: END}\n",
			exit: 1, at: "5:3: [reserved-name]", contains: `"state" is reserved`},
		{name: "state field no expression can name", file: "hyphen.yaml", src: strings.Replace(yamlHeader, "n: {type: int}", "order-id: {type: string}", 1) + "nodes:\n  a: {type: reply, config: {text: hi}, next: END}\n",
			exit: 1, at: "5:3: [reserved-name]", contains: `"order-id" is not a name expressions can use`},
		{name: "var with a state field's name", file: "var.cue", src: hostileHeader + "vars: n: 3\nnodes: a: {type: \"reply\", config: text: \"hi\", next: \"END\"}\n",
			exit: 1, at: "8:10: [duplicate-name]", contains: `var "n" has the name of a state field`},
		{name: "duplicate node", file: "dupnode.yaml", src: yamlHeader + "nodes:\n  a: {type: reply, config: {text: hi}, next: END}\n  a: {type: reply, config: {text: ho}, next: END}\n",
			exit: 1, at: "9:3: [duplicate-name]", contains: `node "a" is declared twice`},
		{name: "duplicate state field", file: "dupfield.yaml", src: strings.Replace(yamlHeader, "n: {type: int}", "n: {type: int}\n  n: {type: string}", 1) + "nodes:\n  a: {type: reply, config: {text: hi}, next: END}\n",
			exit: 1, at: "6:3: [duplicate-name]", contains: `state field "n"`},
		{name: "node named END", file: "endnode.cue", src: hostileHeader + "nodes: {\n\ta: {type: \"reply\", config: text: \"hi\", next: \"END\"}\n\tEND: {type: \"reply\", config: text: \"x\", next: \"END\"}\n}\n",
			exit: 1, at: "10:2: [reserved-name]", contains: `node name "END" is reserved`},
		{name: "an inline secret", file: "secret.cue", src: hostileHeader + "defaults: llm: \"openai:gpt-4o-mini\"\nvars: key: \"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\"\nnodes: a: {type: \"reply\", config: text: \"hi\", next: \"END\"}\n",
			exit: 1, at: "9:13: [inline-secret]", contains: "environment"},

		// Conditions and templates.
		{name: "condition that is not an expression", file: "syntax.cue", src: hostileHeader + "nodes: a: {type: \"set\", config: set: n: \"1\", routes: [{when: \"n >\", to: \"END\"}], default: \"END\"}\n",
			exit: 1, at: "8:65: [expr-error]", contains: `expression "n >": unexpected token EOF`},
		{name: "condition on an unknown field", file: "unknown.cue", src: hostileHeader + "nodes: a: {type: \"set\", config: set: n: \"1\", routes: [{when: \"m > 2\", to: \"END\"}], default: \"END\"}\n",
			exit: 1, at: "8:63: [unknown-name]", contains: `unknown name "m"; did you mean "n"?`},
		{name: "condition that is not a bool", file: "notbool.yaml", src: yamlHeader + "nodes:\n  a:\n    type: set\n    config: {set: {n: \"1\"}}\n    routes: [{when: \"n + 1\", to: END}]\n    default: END\n",
			exit: 1, at: "11:22: [expr-error]", contains: "expected bool, but got int"},
		{name: "condition comparing an int with a string", file: "mismatch.cue", src: hostileHeader + "nodes: a: {type: \"set\", config: set: n: \"1\", routes: [{when: \"n == 'x'\", to: \"END\"}], default: \"END\"}\n",
			exit: 1, at: "8:65: [expr-error]", contains: "mismatched types int and string"},
		{name: "template naming an unknown field", file: "template.cue", src: hostileHeader + "nodes: a: {type: \"reply\", config: text: \"hi ${nam}\", next: \"END\"}\n",
			exit: 1, at: "8:47: [template-error]", contains: `unknown name "nam"`},

		// Graph structure.
		{name: "edge to a missing node", file: "target.cue", src: hostileHeader + "nodes: a: {type: \"reply\", config: text: \"hi\", next: \"b\"}\n",
			exit: 1, at: "8:54: [unknown-target]", contains: `next names unknown node "b"`},
		{name: "langgraph's __end__", file: "lgend.cue", src: hostileHeader + "nodes: a: {type: \"reply\", config: text: \"hi\", next: \"__end__\"}\n",
			exit: 1, at: "8:54: [unknown-target]", contains: `did you mean "END"?`},
		{name: "unknown start", file: "start.cue", src: strings.Replace(hostileHeader, `start: "a"`, `start: "b"`, 1) + "nodes: a: {type: \"reply\", config: text: \"hi\", next: \"END\"}\n",
			exit: 1, at: "7:9: [unknown-start]", contains: `start names unknown node "b"`},
		{name: "unreachable node", file: "unreachable.cue", src: hostileHeader + "nodes: {\n\ta: {type: \"reply\", config: text: \"hi\", next: \"END\"}\n\tb: {type: \"reply\", config: text: \"ho\", next: \"END\"}\n}\n",
			exit: 1, at: "10:2: [unreachable-node]", contains: `node "b" is never reached`},
		{name: "no path to END", file: "loop.cue", src: hostileHeader + "nodes: {\n\ta: {type: \"set\", config: set: n: \"n + 1\", next: \"b\"}\n\tb: {type: \"set\", config: set: n: \"n + 1\", next: \"a\"}\n}\n",
			exit: 1, at: "10:51: [cycle-without-exit]", contains: `closing cycle a -> b -> a, which has no way out`},
		{name: "routes without a default", file: "default.cue", src: hostileHeader + "nodes: a: {type: \"set\", config: set: n: \"1\", routes: [{when: \"n > 1\", to: \"END\"}]}\n",
			exit: 1, at: "8:46: [missing-default]", contains: "has routes but no default"},
		{name: "subgraph that includes itself", file: "self.cue", src: hostileHeader + "nodes: a: {type: \"subgraph\", config: graph: \"self.cue\", next: \"END\"}\n",
			exit: 1, at: "8:46: [subgraph-cycle]", contains: "includes itself"},
		{name: "subgraph that is not a graph file", file: "notgraph.cue", src: hostileHeader + "nodes: a: {type: \"subgraph\", config: graph: \"/etc/hostname\", next: \"END\"}\n",
			exit: 1, at: "8:46: [invalid-config]", contains: `subgraph "/etc/hostname" is not a graph file: name a .cue, .yaml or .yml file`},
		{name: "subgraph file that does not exist", file: "nochild.cue", src: hostileHeader + "nodes: a: {type: \"subgraph\", config: graph: \"agents/none.cue\", next: \"END\"}\n",
			exit: 1, at: "8:46: [subgraph-missing]", contains: "no such file"},

		// Test files: every problem of the cases at once, a duplicate name too.
		{name: "test cases with a duplicate name and a bad status", file: "cases.cue", src: hostileHeader + hostileNode +
			"tests: [{name: \"t\", turns: [{input: \"hi\", expect: status: \"finished\"}]}, {name: \"t\", turns: [{input: \"hi\"}]}]\n",
			exit: 1, at: "9:60: [test-invalid-value]", contains: `status must be one of completed, interrupted, error; got "finished"`,
			also: `9:82: [test-duplicate-name] test "t" is declared twice`, validateOnly: true},

		// Paths that are not graph files.
		{name: "a directory named like a file", file: "dir.cue", setup: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, exit: 2, contains: "dir.cue"},
		{name: "a subgraph that is a directory", file: "subdir.cue", setup: func(t *testing.T, path string) {
			if err := os.Mkdir(filepath.Join(filepath.Dir(path), "child.cue"), 0o755); err != nil {
				t.Fatal(err)
			}
			src := hostileHeader + "nodes: a: {type: \"subgraph\", config: graph: \"child.cue\", next: \"END\"}\n"
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}, exit: 1, at: "8:46: [subgraph-missing]", contains: `subgraph file "child.cue": `, also: "child.cue: is a directory"},
		{name: "a symlink loop", file: "loop1.cue", setup: func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "loop2.cue")
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path, other); err != nil {
				t.Fatal(err)
			}
		}, exit: 2, contains: "too many levels of symbolic links"},
		{name: "a file that does not exist", file: "nope.cue", setup: func(*testing.T, string) {}, exit: 2, contains: "nope.cue"},
	}
	if len(tests) < 40 {
		t.Fatalf("want at least 40 kinds of mistake, have %d", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			if tt.setup != nil {
				tt.setup(t, path)
			} else if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			limits := []string{"--max-eval-time", "2s", "--max-eval-memory", "256MiB"}
			commands := [][]string{append([]string{"validate", path}, limits...)}
			if !tt.validateOnly {
				commands = append(commands, append([]string{"run", path, "-i", "hi", "--data-dir", filepath.Join(dir, "data")}, limits...))
			}
			for _, args := range commands {
				out, errOut, code := run(t, args...)
				all := out + errOut
				if code != tt.exit {
					t.Fatalf("%s: exit %d, want %d\n%s", args[0], code, tt.exit, all)
				}
				want := tt.contains
				if tt.at != "" {
					want = path + ":" + tt.at
				}
				if !strings.Contains(all, want) || !strings.Contains(all, tt.contains) || !strings.Contains(all, tt.also) {
					t.Fatalf("%s: output lacks %q and %q:\n%s", args[0], want, tt.contains, all)
				}
				for _, bad := range []string{"panic", "goroutine ", "runtime/debug", ".go:"} {
					if strings.Contains(all, bad) {
						t.Fatalf("%s: output holds %q:\n%s", args[0], bad, all)
					}
				}
			}
		})
	}
}
