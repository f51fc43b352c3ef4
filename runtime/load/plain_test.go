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
		{"too large yaml", "g.yaml", "a: \"" + strings.Repeat("x", 5<<20) + "\"\n", false},
		{"too large", "g.cue", "a: \"" + strings.Repeat("x", 5<<20) + "\"\n", false},
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
