package load_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/node"
)

// sameAsEvaluated loads files both ways and fails unless the graphs and the
// diagnostics are equal. It returns whether the files loaded without the
// evaluator.
func sameAsEvaluated(t *testing.T, files []load.SourceFile) bool {
	t.Helper()
	want, wantDiags := load.LoadEvaluated(files)
	got, gotDiags := load.Source(files[0].Name, files[0].Data, files[1:]...)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s: graph differs from the evaluator's\ngot:  %s\nwant: %s", files[0].Name, g, w)
	}
	if !reflect.DeepEqual(gotDiags, wantDiags) {
		t.Errorf("%s: diagnostics differ from the evaluator's\ngot:  %v\nwant: %v", files[0].Name, gotDiags, wantDiags)
	}
	return load.LoadsPlain(files)
}

// TestPlainLoadsAsEvaluated loads every graph file of the repository (with
// its tests) without and with the evaluator: the results must be equal,
// and most of the files must take the plain path.
func TestPlainLoadsAsEvaluated(t *testing.T) {
	root := filepath.Join("..", "..")
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		lower := strings.ToLower(p)
		if (strings.HasSuffix(lower, ".cue") || strings.HasSuffix(lower, ".yaml") || strings.HasSuffix(lower, ".yml")) && !load.IsTestFile(p) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	plain := 0
	for _, p := range paths {
		var files []load.SourceFile
		for _, f := range append([]string{p}, load.TestFiles(p)...) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, load.SourceFile{Name: f, Data: data})
		}
		if sameAsEvaluated(t, files) {
			plain++
		}
	}
	t.Logf("%d of %d graph files loaded without the evaluator", plain, len(paths))
	if plain == 0 {
		t.Fatal("no graph file of the repository loaded without the evaluator")
	}
}

func TestPlainLoadsAsEvaluatedCases(t *testing.T) {
	const hdr = "dsl_version: \"graphctl/v1\"\nname: \"g\"\nstart: \"a\"\n"
	tests := []struct {
		name  string
		file  string
		src   string
		plain bool // whether it must load without the evaluator
	}{
		{"generated", "g.cue", string(load.GenerateGraph(50, "reply", `{text: "step ${count}"}`)), true},
		{"config defaults", "g.cue", hdr + "nodes: a: {type: \"loadtest_reply\", config: text: \"hi\", next: \"END\"}\n", true},
		{"config default given", "g.cue", hdr + "nodes: a: {type: \"loadtest_reply\", config: {text: \"hi\", role: \"system\"}}\n", true},
		{"pattern config and disjunction default", "g.cue", hdr + "nodes: a: {type: \"loadtest_set\", config: {set: {x: \"y\"}}}\n", true},
		{"pattern config bound", "g.cue", hdr + "nodes: a: {type: \"loadtest_set\", config: {set: {}, limit: 5}}\n", true},
		{"pattern config bound violated", "g.cue", hdr + "nodes: a: {type: \"loadtest_set\", config: {set: {}, limit: 0}}\n", false},
		{"pattern config float", "g.cue", hdr + "nodes: a: {type: \"loadtest_set\", config: {set: {}, limit: 5.0}}\n", false},
		{"non-empty list", "g.cue", hdr + "nodes: a: {type: \"loadtest_words\", config: {namespace: [\"n\", \"m\"], max: 100, mode: \"slow\", token: {env: \"T\"}, tags: [\"x\"]}}\n", true},
		{"non-empty list given empty", "g.cue", hdr + "nodes: a: {type: \"loadtest_words\", config: {namespace: []}}\n", false},
		{"non-empty list of the wrong kind", "g.cue", hdr + "nodes: a: {type: \"loadtest_words\", config: {namespace: [1]}}\n", false},
		{"uint bound", "g.cue", hdr + "nodes: a: {type: \"loadtest_words\", config: {namespace: [\"n\"], max: 101}}\n", false},
		{"required field of an optional struct", "g.cue", hdr + "nodes: a: {type: \"loadtest_words\", config: {namespace: [\"n\"], token: {}}}\n", false},
		{"builtin schema with a non-empty list", "g.cue", hdr + "nodes: a: {type: \"rag_retrieve\", config: {namespace: [\"docs\"], query: \"q\", top_k: 50}}\n", true},
		{"builtin schema bound", "g.cue", hdr + "nodes: a: {type: \"rag_retrieve\", config: {namespace: [\"docs\"], query: \"q\", top_k: 51}}\n", false},
		{"builtin schema missing list", "g.cue", hdr + "nodes: a: {type: \"memory_store\", config: {from: \"x\"}}\n", false},
		{"no config", "g.cue", hdr + "nodes: a: {type: \"loadtest_route\"}\n", true},
		{"config for a type without one", "g.cue", hdr + "nodes: a: {type: \"loadtest_route\", config: {x: 1}}\n", false},
		{"missing config field", "g.cue", hdr + "nodes: a: {type: \"loadtest_reply\"}\n", false},
		{"unknown config field", "g.cue", hdr + "nodes: a: {type: \"loadtest_reply\", config: {text: \"x\", txt: 1}}\n", false},
		{"config enum", "g.cue", hdr + "nodes: a: {type: \"loadtest_reply\", config: {text: \"x\", role: \"user\"}}\n", false},
		{"every node field", "g.cue", hdr + `state: {
	items: {type: "list<string>", default: ["a"], enum: ["a", "b"], description: "d"}
	n: {type: "int", reducer: {expr: "old + new"}, default: -2}
	f: {type: "float", default: 1.5e2}
	o: {type: "object", default: {x: null, y: true}}
}
vars: {greeting: "hi", nested: {k: [1, 2.5]}}
defaults: {recursion_limit: 7, max_concurrency: 2, llm: "ollama:x", call_retry: {max_attempts: 2, backoff: 2, jitter: true}}
nodes: {
	a: {
		type: "loadtest_route"
		description: """
			multi
			line
			"""
		routes: [{when: "state.n > 1", to: "b"}]
		default: "c"
		timeout: "30s"
		retry: {max_attempts: 3, initial_interval: "1s", backoff: 1.5, max_interval: "10s", on: ["timeout"]}
		call_retry: {max_retry_after: "5s"}
		catch: [{on: ["tool_error"], to: "c"}]
		cache: {key: "state.n", ttl: "10m"}
	}
	b: {type: "loadtest_route", map: {over: "state.items", to: "c"}, next: ["c"]}
	c: {type: "loadtest_route", map: {over: "state.items", to: "a", as: "x", on_empty: "error"}, wait_for: ["a", "b"], next: "END"}
	"d-e": {type: "loadtest_route", wait_for: []}
}
tests: [{name: "t", input: {n: 1}}]
`, true},
		{"escapes and raw strings", "g.cue", hdr + "nodes: a: {type: \"loadtest_reply\", config: text: \"tab\\there \\u00e9\", description: #\"raw \\n\"#}\n", true},
		{"fields split across the file", "g.cue", hdr + "nodes: a: {type: \"loadtest_route\"}\nnodes: b: {type: \"loadtest_route\"}\nnodes: a: next: \"b\"\n", true},
		{"conflicting values", "g.cue", hdr + "nodes: a: {type: \"loadtest_route\"}\nnodes: a: type: \"loadtest_reply\"\n", false},
		{"reference", "g.cue", hdr + "x: \"a\"\nnodes: a: {type: \"loadtest_route\", next: x}\n", false},
		{"negative zero", "g.cue", hdr + "vars: {a: -0, b: -0.0}\nnodes: {}\n", false},
		{"hex number", "g.cue", hdr + "vars: n: 0x10\nnodes: {}\n", false},
		{"bad duration", "g.cue", hdr + "nodes: a: {type: \"loadtest_route\", timeout: \"5 sec\"}\n", false},
		{"bad state type", "g.cue", hdr + "state: x: {type: \"lst<string>\"}\nnodes: {}\n", false},
		{"unknown node type", "g.cue", hdr + "nodes: a: {type: \"nope\"}\n", false},
		{"bad node name", "g.cue", hdr + "nodes: \"1a\": {type: \"loadtest_route\"}\n", false},
		{"wrong dsl version", "g.cue", "dsl_version: \"graphctl/v2\"\nname: \"g\"\nstart: \"a\"\nnodes: {}\n", false},
		{"missing name", "g.cue", "dsl_version: \"graphctl/v1\"\nstart: \"a\"\nnodes: {}\n", false},
		{"yaml", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nstate:\n  n: {type: int, default: 3}\nnodes:\n  a:\n    type: loadtest_reply\n    config:\n      text: |\n        hello\n        world\n    next: END\n", true},
		{"yaml alias", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a: &n\n    type: loadtest_route\n  b: *n\n", true},
		{"yaml duplicate node", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nnodes:\n  a:\n    type: loadtest_route\n  a:\n    type: loadtest_route\n", false},
		{"yaml number key", "g.yaml", "dsl_version: graphctl/v1\nname: g\nstart: a\nvars:\n  0: x\nnodes: {}\n", true},
		{"repeated label", "g.cue", hdr + "nodes: a: {type: \"loadtest_reply\", config: {text: \"x\", text: \"x\"}}\n", true},
		{"repeated label conflict", "g.cue", hdr + "nodes: a: {type: \"loadtest_reply\", config: {text: \"x\", text: \"y\"}}\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := []load.SourceFile{{Name: tt.file, Data: []byte(tt.src)}}
			if plain := sameAsEvaluated(t, files); plain != tt.plain {
				t.Errorf("loaded without the evaluator: %v, want %v", plain, tt.plain)
			}
		})
	}
}

func TestPlainLoadsWithTests(t *testing.T) {
	graphSrc := "dsl_version: \"graphctl/v1\"\nname: \"g\"\nstart: \"a\"\nnodes: a: {type: \"loadtest_route\", next: \"END\"}\n"
	files := []load.SourceFile{
		{Name: "g.cue", Data: []byte(graphSrc)},
		{Name: "g_test.yaml", Data: []byte("tests:\n  - name: one\n    input: {}\n")},
	}
	if !sameAsEvaluated(t, files) {
		t.Error("a graph and its tests did not load without the evaluator")
	}
}

func TestBounded(t *testing.T) {
	tests := []struct {
		name, file, src string
		want            bool
	}{
		{"plain", "g.cue", string(load.GenerateGraph(3, "reply", `{text: "hi"}`)), true},
		{"yaml", "g.yaml", "a: [1, 2]\nb: {c: d}\n", true},
		{"comprehension", "g.cue", "a: [for i in [1, 2] {i}]\n", false},
		{"import", "g.cue", "import \"list\"\na: list.Range(0, 9, 1)\n", false},
		{"reference", "g.cue", "a: 1\nb: a\n", false},
		{"multiplication", "g.cue", "a: \"x\" * 1000\n", false},
		{"definition", "g.cue", "#D: {a: int}\nb: #D\n", false},
		// A file that does not parse is reported without being evaluated.
		{"syntax error", "g.cue", "a: {\n", true},
		{"package clause and comments", "g.cue", "package graphs\n\n// c\na: {b: [1, -2.5, true, null, 'x', \"\"\"\n\ty\n\t\"\"\"]}\n", true},
		{"keywords as labels", "g.cue", "for: 1\nif: {in: true, let: false}\n", true},
		{"keyword as a value", "g.cue", "a: for\n", false},
		{"interpolation", "g.cue", "a: 1\nb: \"\\(a)\"\n", false},
		{"constraint", "g.cue", "a?: 1\n", false},
		{"open struct", "g.cue", "a: {...}\n", false},
		{"attribute", "g.cue", "a: 1 @go(A)\n", false},
		{"selector", "g.cue", "a: {b: 1}\nc: a.b\n", false},
		{"call", "g.cue", "a: len(\"x\")\n", false},
		{"yaml aliases", "g.yaml", "a: &x {b: 1}\nc: *x\n", true},
		{"1,000 nodes", "g.cue", string(load.GenerateGraph(1000, "reply", `{text: "hi"}`)), true},
		{"long yaml list", "g.yaml", "a: [" + strings.Repeat("1,", 30000) + "1]\n", false},
		{"long yaml block list", "g.yaml", "a:\n" + strings.Repeat("- 1\n", 30000), false},
		{"many yaml fields", "g.yaml", "a:\n" + strings.Repeat("  k: 1\n", 30000), false},
		{"long list", "g.cue", "a: [" + strings.Repeat("1,", 30000) + "1]\n", false},
		{"many fields", "g.cue", strings.Repeat("a: 1\n", 30000), false},
		{"too large yaml", "g.yaml", "a: \"" + strings.Repeat("x", 3<<20) + "\"\n", false},
		{"too large", "g.cue", "a: \"" + strings.Repeat("x", 3<<20) + "\"\n", false},
		// Past load.MaxFileSize a file is reported as too large without being parsed.
		{"past the largest graph file", "g.cue", "a: \"" + strings.Repeat("x", load.MaxFileSize) + "\"\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := load.Bounded([]load.SourceFile{{Name: tt.file, Data: []byte(tt.src)}}); got != tt.want {
				t.Errorf("Bounded = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBuiltinConfigSchemasArePlainChecked: graphs of plain data whose nodes
// are all of builtin types load without the evaluator. A schema written
// with CUE beyond schemacheck.go still works, through the evaluator, but
// makes every graph using the type several times slower to load.
func TestBuiltinConfigSchemasArePlainChecked(t *testing.T) {
	if names := load.UnsupportedConfigSchemas(node.Default()); len(names) > 0 {
		t.Errorf("config schemas beyond plain checking: %v", names)
	}
}

// TestPlainLoadsAsEvaluatedHostile loads files written the way a newcomer
// or an attacker would write them, alone or with a test file, without and
// with the evaluator: the results must be equal, and each case must take
// the path it names.
func TestPlainLoadsAsEvaluatedHostile(t *testing.T) {
	const (
		hdr  = "dsl_version: \"graphctl/v1\"\nname: \"g\"\nstart: \"a\"\n"
		yhdr = "dsl_version: graphctl/v1\nname: g\nstart: a\n"
		node = "nodes: a: {type: \"route\", next: \"END\"}\n"
	)
	llm := func(cfg string) string {
		return hdr + "nodes: a: {type: \"llm\", config: {" + cfg + "}, next: \"END\"}\n"
	}
	tests := []struct {
		name      string
		file, src string
		// testFile and testSrc, when set, are the graph's test file.
		testFile, testSrc string
		plain             bool
	}{
		// Numbers.
		{name: "int64 minimum", file: "g.cue", src: hdr + "vars: x: -9223372036854775808\nnodes: {}\n"},
		{name: "int64 minimum as a default", file: "g.cue", src: hdr + "state: x: {type: \"any\", default: -9223372036854775808}\nnodes: {}\n"},
		{name: "int64 maximum", file: "g.cue", src: hdr + "vars: x: 9223372036854775807\nnodes: {}\n", plain: true},
		{name: "integer beyond int64", file: "g.cue", src: hdr + "vars: x: 99999999999999999999\nnodes: {}\n"},
		{name: "float written twice, equal only as float64", file: "g.cue", src: hdr + "vars: {x: 1.0, x: 1.00000000000000000001}\nnodes: {}\n"},
		{name: "float written twice, equal decimals", file: "g.cue", src: hdr + "vars: {x: 1.0, x: 1.00, y: 1e2, y: 100.0}\nnodes: {}\n", plain: true},
		{name: "config float written twice, equal only as float64", file: "g.cue", src: llm("temperature: 0.5, temperature: 0.50000000000000000001")},
		{name: "float rounding onto a bound", file: "g.cue", src: hdr + "nodes: a: {type: \"route\", retry: {backoff: 0.99999999999999999999}}\n"},
		{name: "float of 15 digits", file: "g.cue", src: hdr + "nodes: a: {type: \"route\", retry: {backoff: 1.23456789012345}}\n", plain: true},
		{name: "float underflowing to zero", file: "g.cue", src: hdr + "vars: x: 1e-400\nnodes: {}\n"},
		{name: "float overflowing", file: "g.cue", src: hdr + "vars: x: 1e400\nnodes: {}\n"},
		{name: "negative float below zero", file: "g.cue", src: llm("temperature: -0.00000000000000000000000000001")},
		{name: "exponent floats", file: "g.cue", src: llm("temperature: 1e1") + "vars: {a: 1E2, b: 1.5e-3, c: 0e0}\n", plain: true},
		{name: "int where a float is expected", file: "g.cue", src: llm("temperature: 1"), plain: true},
		{name: "float where an int is expected", file: "g.cue", src: llm("max_tokens: 1.0")},
		{name: "string where a number is expected", file: "g.cue", src: llm("temperature: \"0.5\"")},
		{name: "float recursion limit", file: "g.cue", src: hdr + "defaults: max_concurrency: 1.0\nnodes: {}\n"},
		{name: "yaml tagged int", file: "g.yaml", src: yhdr + "nodes:\n  a:\n    type: llm\n    config:\n      max_tokens: !!int \"3\"\n", plain: true},
		{name: "yaml tagged float", file: "g.yaml", src: yhdr + "vars:\n  x: !!float 3\nnodes: {}\n"},
		{name: "yaml nan and inf", file: "g.yaml", src: yhdr + "vars:\n  x: .nan\n  y: -.inf\nnodes: {}\n"},
		{name: "yaml octal and hex", file: "g.yaml", src: yhdr + "vars:\n  x: 0o17\n  y: 0x1F\n  z: 017\nnodes: {}\n"},
		{name: "yaml negative zero", file: "g.yaml", src: yhdr + "vars:\n  x: -0\n  y: -0.0\nnodes: {}\n"},
		// Strings.
		{name: "strings of every spelling", file: "g.cue", src: hdr + "vars: {a: \"\\u00e9\\U0001F600\\t\", b: #\"a\\nb\"#, c: ##\"a\"#b\"##, d: \"\\u0000\", e: \"${x}\"}\n" + node, plain: true},
		{name: "bytes literal", file: "g.cue", src: hdr + "vars: {a: 'abc'}\n" + node},
		{name: "interpolation", file: "g.cue", src: hdr + "vars: {a: \"x\", b: \"\\(a)y\"}\n" + node},
		{name: "raw interpolation", file: "g.cue", src: hdr + "vars: {b: #\"\\#(1)\"#}\n" + node},
		{name: "invalid utf-8", file: "g.cue", src: hdr + "vars: x: \"\xff\"\n" + node},
		{name: "nul byte", file: "g.yaml", src: yhdr + "vars:\n  x: \"a\x00b\"\nnodes: {}\n"},
		{name: "yaml escapes and block scalars", file: "g.yaml", src: yhdr + "vars:\n  a: \"\\x41\\u00e9\\0\\N\\_\"\n  b: 'it''s'\n  c: |+\n    keep\n\n  d: >-\n    x\n    y\n  e: \"\\\\(y)\"\nnodes: {}\n", plain: true},
		// Duplicates.
		{name: "top-level label twice, same value", file: "g.cue", src: hdr + "name: \"g\"\n" + node, plain: true},
		{name: "top-level label twice, different values", file: "g.cue", src: hdr + "name: \"h\"\n" + node},
		{name: "list written twice", file: "g.cue", src: llm("tools: [\"a\"], tools: [\"a\"]")},
		{name: "int and float written for one label", file: "g.cue", src: hdr + "vars: {x: 1, x: 1.0}\n" + node},
		{name: "null and struct written for one label", file: "g.cue", src: hdr + "vars: {x: null, x: {}}\n" + node},
		{name: "node declared twice", file: "g.cue", src: hdr + "nodes: {a: {type: \"route\"}, a: {type: \"route\"}}\n"},
		// A YAML key repeated in one mapping is a duplicate-key error, even with equal values.
		{name: "yaml key twice", file: "g.yaml", src: yhdr + "vars:\n  x: 1\n  x: 1\nnodes: {}\n"},
		{name: "yaml key twice, different values", file: "g.yaml", src: yhdr + "vars:\n  x: 1\n  x: 2\nnodes: {}\n"},
		// Unknown, missing and null fields; LangGraph habits.
		{name: "langgraph edges", file: "g.cue", src: hdr + "nodes: a: {type: \"route\"}\nedges: [{source: \"a\", target: \"END\"}]\n"},
		{name: "langgraph entry point", file: "g.cue", src: "dsl_version: \"graphctl/v1\"\nname: \"g\"\nentry_point: \"a\"\n" + node},
		{name: "langgraph node list", file: "g.yaml", src: yhdr + "nodes:\n  - name: a\n    type: llm\n"},
		{name: "langgraph conditional edges", file: "g.cue", src: hdr + "nodes: a: {type: \"route\", conditional_edges: {x: \"END\"}}\n"},
		{name: "unknown config field", file: "g.cue", src: llm("temprature: 1")},
		{name: "unknown state field key", file: "g.cue", src: hdr + "state: x: {type: \"int\", defualt: 1}\n" + node},
		{name: "unknown test key", file: "g.cue", src: hdr + node + "tests: [{name: \"t\", whatever: 1}]\n", plain: true},
		{name: "missing type", file: "g.cue", src: hdr + "nodes: a: {next: \"END\"}\n"},
		{name: "missing nodes", file: "g.cue", src: hdr, plain: true},
		{name: "null nodes", file: "g.cue", src: hdr + "nodes: null\n"},
		{name: "null config", file: "g.cue", src: hdr + "nodes: a: {type: \"llm\", config: null}\n"},
		{name: "yaml empty config", file: "g.yaml", src: yhdr + "nodes:\n  a:\n    type: llm\n    config:\n"},
		{name: "state field of a bare type name", file: "g.cue", src: hdr + "state: {messages: \"list\"}\n" + node},
		// File shapes.
		{name: "empty", file: "g.cue", src: ""},
		{name: "only comments", file: "g.cue", src: "// a\n// b\n"},
		{name: "empty yaml", file: "g.yaml", src: ""},
		{name: "byte order mark", file: "g.cue", src: "\ufeff" + hdr + node, plain: true},
		{name: "yaml byte order mark", file: "g.yaml", src: "\ufeff" + yhdr + "nodes: {}\n", plain: true},
		{name: "crlf", file: "g.cue", src: strings.ReplaceAll(hdr+"nodes: a: {type: \"route\", description: \"\"\"\n\tx\n\t\"\"\"}\n", "\n", "\r\n"), plain: true},
		{name: "yaml crlf", file: "g.yaml", src: strings.ReplaceAll(yhdr+"nodes:\n  a:\n    type: reply\n    config:\n      text: |\n        x\n", "\n", "\r\n"), plain: true},
		{name: "yaml tabs for indentation", file: "g.yaml", src: yhdr + "nodes:\n\ta:\n\t\ttype: route\n"},
		{name: "top-level list", file: "g.cue", src: "[1, 2]\n"},
		{name: "embedded struct", file: "g.cue", src: "{dsl_version: \"graphctl/v1\"}\nname: \"g\"\nstart: \"a\"\n" + node},
		{name: "embedded scalar", file: "g.cue", src: hdr + "vars: {\"x\", a: 1}\n" + node},
		{name: "package clause", file: "g.cue", src: "// c\npackage graphs\n\n" + hdr + node, plain: true},
		{name: "import", file: "g.cue", src: "import \"strings\"\n" + hdr + "vars: x: strings.ToUpper(\"a\")\n" + node},
		{name: "attribute", file: "g.cue", src: hdr + "vars: {x: 1 @a(), @b()}\n" + node},
		{name: "file attribute", file: "g.cue", src: "@if(x)\npackage g\n" + hdr + node},
		{name: "optional field", file: "g.cue", src: hdr + "vars: {x?: 1}\n" + node},
		{name: "required field", file: "g.cue", src: hdr + "vars: {x!: 1}\n" + node},
		{name: "definition", file: "g.cue", src: hdr + "#X: {type: \"route\"}\nnodes: a: #X\n"},
		{name: "hidden field", file: "g.cue", src: hdr + "_x: \"route\"\nnodes: a: type: _x\n"},
		{name: "let clause", file: "g.cue", src: hdr + "let x = \"route\"\nnodes: a: type: x\n"},
		{name: "keywords as labels", file: "g.cue", src: hdr + "vars: {for: 1, if: 2, in: 3, let: 4, package: 8, import: 9}\n" + node, plain: true},
		{name: "comments everywhere", file: "g.cue", src: hdr + "nodes: { // c\n a: // c\n { // c\n type: // c\n \"route\" // c\n } // c\n } // c\nvars: x: [ // c\n 1, // c\n // c\n 2 // c\n ]\n", plain: true},
		{name: "deep nesting", file: "g.cue", src: hdr + "vars: x: " + strings.Repeat("{a: ", 500) + "1" + strings.Repeat("}", 500) + "\n" + node, plain: true},
		{name: "long string", file: "g.cue", src: hdr + "vars: x: \"" + strings.Repeat("x", 100000) + "\"\n" + node, plain: true},
		// YAML.
		{name: "yaml merge key", file: "g.yaml", src: yhdr + "vars:\n  base: &b {x: 1, y: 2}\n  d:\n    <<: *b\n    y: 3\nnodes: {}\n", plain: true},
		{name: "yaml merge key into a node", file: "g.yaml", src: yhdr + "x-base: &b\n  type: llm\nnodes:\n  a:\n    <<: *b\n"},
		{name: "yaml multi-document", file: "g.yaml", src: yhdr + "nodes: {}\n---\nname: h\n"},
		{name: "yaml keys that are not strings", file: "g.yaml", src: yhdr + "vars:\n  1: x\n  true: y\n  null: z\n  1.5: v\nnodes: {}\n", plain: true},
		{name: "yaml complex key", file: "g.yaml", src: yhdr + "vars:\n  [a, b]: z\nnodes: {}\n"},
		{name: "yaml int node name", file: "g.yaml", src: yhdr + "nodes:\n  1:\n    type: route\n"},
		// A graph with its test file.
		{name: "test file", file: "g.cue", src: hdr + node, testFile: "g_test.cue", testSrc: "name: \"g\"\ntests: [{name: \"t\", input: x: 1}]\n", plain: true},
		{name: "test file of another package", file: "g.cue", src: "package one\n" + hdr + node, testFile: "g_test.cue", testSrc: "package two\ntests: [{name: \"t\"}]\n", plain: true},
		{name: "test file naming the graph otherwise", file: "g.cue", src: hdr + node, testFile: "g_test.cue", testSrc: "name: \"h\"\ntests: [{name: \"t\"}]\n"},
		{name: "tests in both files", file: "g.cue", src: hdr + node + "tests: [{name: \"t\"}]\n", testFile: "g_test.cue", testSrc: "tests: [{name: \"t\"}]\n"},
		{name: "test file declaring nodes in another order", file: "g.cue", src: hdr + node, testFile: "g_test.yaml", testSrc: "nodes:\n  b:\n    type: route\n  a:\n    next: END\ntests:\n  - name: t\n"},
		{name: "test file declaring state", file: "g.cue", src: hdr + "state: x: {type: \"int\"}\n" + node, testFile: "g_test.cue", testSrc: "state: {y: {type: \"int\"}, x: {default: 1}}\ntests: [{name: \"t\"}]\n"},
		{name: "empty test file", file: "g.cue", src: hdr + node, testFile: "g_test.yaml", testSrc: ""},
		{name: "test file with a byte order mark and crlf", file: "g.cue", src: hdr + node, testFile: "g_test.yaml", testSrc: "\ufefftests:\r\n  - name: t\r\n", plain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := []load.SourceFile{{Name: tt.file, Data: []byte(tt.src)}}
			if tt.testFile != "" {
				files = append(files, load.SourceFile{Name: tt.testFile, Data: []byte(tt.testSrc)})
			}
			if plain := sameAsEvaluated(t, files); plain != tt.plain {
				t.Errorf("loaded without the evaluator: %v, want %v", plain, tt.plain)
			}
		})
	}
}
