package load

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
)

const validCUE = `package graphs

dsl_version: "graphctl/v1"
name:        "small"
version:     "1.0.0"
description: "a small graph"

state: {
	messages: {type: "messages"}
	goal: {type: "string", enum: ["a", "b"], default: "a"}
	count: {type: "int", reducer: "add"}
	tags: {type: "list<string>", reducer: {expr: "old + new"}}
}

vars: {threshold: 0.5, names: ["x", "y"]}

start: "greet"

defaults: {recursion_limit: 40, model: "openai:gpt-4o", sources: {a: 1}}

nodes: {
	greet: {
		type: "loadtest_reply"
		config: text: "Hello"
		next: "route_goal"
		timeout: "30s"
		retry: {max_attempts: 3, initial_interval: "1s", backoff: 2, max_interval: "10s", jitter: true, on: ["timeout"]}
	}
	route_goal: {
		type: "loadtest_route"
		routes: [
			{when: "goal == 'a'", to: "set_a"},
			{when: "goal == 'b'", to: "fan"},
		]
		default: "END"
	}
	set_a: {
		type: "loadtest_set"
		config: set: goal: "'b'"
		next: ["fan", "greet2"]
		catch: [{on: ["tool_error"], to: "END"}]
	}
	fan: {
		type: "loadtest_reply"
		config: {text: "item", role: "system"}
		map: {over: "tags", to: "greet2"}
	}
	greet2: {
		type: "loadtest_reply"
		config: text: "Bye"
		wait_for: ["fan", "set_a"]
		next: "END"
	}
}

tests: [{name: "first", turns: [{user: "hi"}]}]
`

const validYAML = `dsl_version: graphctl/v1
name: small
version: "1.0.0"
description: a small graph
state:
  messages: {type: messages}
  goal:
    type: string
    enum: [a, b]
    default: a
  count: {type: int, reducer: add}
  tags:
    type: list<string>
    reducer: {expr: old + new}
vars:
  threshold: 0.5
  names: [x, "y"]
start: greet
defaults:
  recursion_limit: 40
  model: "openai:gpt-4o"
  sources: {a: 1}
nodes:
  greet:
    type: loadtest_reply
    config:
      text: Hello
    next: route_goal
    timeout: 30s
    retry:
      max_attempts: 3
      initial_interval: 1s
      backoff: 2
      max_interval: 10s
      jitter: true
      on: [timeout]
  route_goal:
    type: loadtest_route
    routes:
      - when: goal == 'a'
        to: set_a
      - when: "goal == 'b'"
        to: fan
    default: END
  set_a:
    type: loadtest_set
    config:
      set: {goal: "'b'"}
    next: [fan, greet2]
    catch:
      - on: [tool_error]
        to: END
  fan:
    type: loadtest_reply
    config: {text: item, role: system}
    map: {over: tags, to: greet2}
  greet2:
    type: loadtest_reply
    config: {text: Bye}
    wait_for: [fan, set_a]
    next: END
tests:
  - name: first
    turns:
      - user: hi
`

func mustLoad(t *testing.T, name, src string) *graph.Graph {
	t.Helper()
	g, d := Source(name, []byte(src))
	if len(d) > 0 {
		t.Fatalf("unexpected diagnostics:\n%v", d)
	}
	if g == nil {
		t.Fatal("nil graph without diagnostics")
	}
	return g
}

func TestSourceDecodesEveryField(t *testing.T) {
	g := mustLoad(t, "small.cue", validCUE)
	if g.Name != "small" || g.Version != "1.0.0" || g.Description != "a small graph" || g.Start != "greet" || g.DSLVersion != graph.DSLVersion {
		t.Errorf("header: got name=%q version=%q desc=%q start=%q dsl=%q", g.Name, g.Version, g.Description, g.Start, g.DSLVersion)
	}
	if len(g.Hash) != 64 {
		t.Errorf("hash %q is not a hex sha256", g.Hash)
	}
	wantDefaults := graph.Defaults{RecursionLimit: 40, MaxConcurrency: DefaultMaxConcurrency,
		Raw: map[string]any{"recursion_limit": int64(40), "model": "openai:gpt-4o", "sources": map[string]any{"a": int64(1)}}}
	if !reflect.DeepEqual(g.Defaults, wantDefaults) {
		t.Errorf("defaults = %+v, want %+v", g.Defaults, wantDefaults)
	}
	if want := map[string]any{"threshold": 0.5, "names": []any{"x", "y"}}; !reflect.DeepEqual(g.Vars, want) {
		t.Errorf("vars = %#v, want %#v", g.Vars, want)
	}

	var names []string
	for _, f := range g.State {
		names = append(names, f.Name)
	}
	if want := []string{"messages", "goal", "count", "tags"}; !slices.Equal(names, want) {
		t.Errorf("state order = %v, want %v", names, want)
	}
	goal := g.Field("goal")
	if goal.Type.Kind != graph.String || !goal.HasDefault || goal.Default != "a" || !reflect.DeepEqual(goal.Enum, []any{"a", "b"}) {
		t.Errorf("goal field = %+v", goal)
	}
	if f := g.Field("tags"); f.ReducerExpr != "old + new" || f.Reducer != "" || f.Type.String() != "list<string>" {
		t.Errorf("tags field = %+v", f)
	}
	if f := g.Field("count"); f.Reducer != "add" {
		t.Errorf("count reducer = %q", f.Reducer)
	}

	names = names[:0]
	for _, n := range g.Nodes {
		names = append(names, n.Name)
	}
	if want := []string{"greet", "route_goal", "set_a", "fan", "greet2"}; !slices.Equal(names, want) {
		t.Errorf("node order = %v, want %v", names, want)
	}
	greet := g.Node("greet")
	if greet.Timeout != 30*time.Second || !slices.Equal(greet.Next, []string{"route_goal"}) {
		t.Errorf("greet = %+v", greet)
	}
	wantRetry := &graph.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Second, Backoff: 2, MaxInterval: 10 * time.Second, Jitter: true, On: []string{"timeout"}}
	if !reflect.DeepEqual(greet.Retry, wantRetry) {
		t.Errorf("retry = %+v, want %+v", greet.Retry, wantRetry)
	}
	// Schema defaults are filled into the config.
	if want := map[string]any{"text": "Hello", "role": "assistant"}; !reflect.DeepEqual(greet.Config, want) {
		t.Errorf("greet config = %#v, want %#v", greet.Config, want)
	}
	if want := map[string]any{"set": map[string]any{"goal": "'b'"}, "limit": int64(3)}; !reflect.DeepEqual(g.Node("set_a").Config, want) {
		t.Errorf("set_a config = %#v, want %#v", g.Node("set_a").Config, want)
	}
	rg := g.Node("route_goal")
	if len(rg.Routes) != 2 || rg.Routes[1].When != "goal == 'b'" || rg.Routes[1].To != "fan" || rg.Default != "END" {
		t.Errorf("route_goal = %+v", rg)
	}
	if got, want := rg.Routes[0].WhenPos, (diag.Pos{File: "small.cue", Line: 32, Col: 12}); got != want {
		t.Errorf("when pos = %v, want %v", got, want)
	}
	sa := g.Node("set_a")
	if !slices.Equal(sa.Next, []string{"fan", "greet2"}) || len(sa.Catch) != 1 || sa.Catch[0].To != "END" || sa.Catch[0].On[0] != "tool_error" {
		t.Errorf("set_a = %+v", sa)
	}
	if m := g.Node("fan").Map; m == nil || m.Over != "tags" || m.To != "greet2" || m.As != "item" {
		t.Errorf("fan map = %+v", m)
	}
	if w := g.Node("greet2").WaitFor; !slices.Equal(w, []string{"fan", "set_a"}) {
		t.Errorf("wait_for = %v", w)
	}
	if len(g.Tests) != 1 || g.Tests[0]["name"] != "first" || g.TestsPos[0] != (diag.Pos{File: "small.cue", Line: 56, Col: 9}) {
		t.Errorf("tests = %v at %v", g.Tests, g.TestsPos)
	}
}

func TestPositions(t *testing.T) {
	g := mustLoad(t, "small.cue", validCUE)
	lines := strings.Split(validCUE, "\n")
	tests := []struct {
		path string
		// text is what the source holds at the position.
		text string
	}{
		{"nodes.greet", "greet:"},
		{"nodes.route_goal.routes.0.when", "goal == 'a'\""},
		{"nodes.route_goal.routes.1.to", "fan\""},
		{"nodes.set_a.config.set.goal", "'b'\""},
		{"nodes.set_a.next.1", "greet2\""},
		{"state.tags.reducer.expr", "old + new\""},
		{"defaults.recursion_limit", "40,"},
		{"vars.names.1", "y\"]"},
		{"tests.0", "{name"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, ok := g.Pos[tt.path]
			if !ok {
				t.Fatalf("no position for %s", tt.path)
			}
			got := lines[p.Line-1][p.Col-1:]
			if !strings.HasPrefix(got, tt.text) {
				t.Errorf("at %v: source is %q, want prefix %q", p, got, tt.text)
			}
		})
	}
}

func TestYAMLPositions(t *testing.T) {
	g := mustLoad(t, "small.yaml", validYAML)
	lines := strings.Split(validYAML, "\n")
	for path, text := range map[string]string{
		"nodes.route_goal.routes.0.when": "goal == 'a'",
		"nodes.route_goal.routes.1.when": "goal == 'b'\"",
		"nodes.greet":                    "greet:",
		"nodes.greet.timeout":            "30s",
		"defaults.model":                 "openai:gpt-4o\"",
	} {
		p, ok := g.Pos[path]
		if !ok {
			t.Errorf("no position for %s", path)
			continue
		}
		if got := lines[p.Line-1][p.Col-1:]; !strings.HasPrefix(got, text) {
			t.Errorf("%s at %v: source is %q, want prefix %q", path, p, got, text)
		}
	}
}

func TestCUEAndYAMLAgree(t *testing.T) {
	c := mustLoad(t, "small.cue", validCUE)
	y := mustLoad(t, "small.yaml", validYAML)
	if c.Hash != y.Hash {
		t.Errorf("hashes differ: cue %s, yaml %s", c.Hash, y.Hash)
	}
	for _, g := range []*graph.Graph{c, y} {
		g.File, g.Pos, g.TestsPos = "", nil, nil
		for _, f := range g.State {
			f.Pos = diag.Pos{}
		}
		for _, n := range g.Nodes {
			n.Pos = diag.Pos{}
			for i := range n.Routes {
				n.Routes[i].WhenPos, n.Routes[i].ToPos = diag.Pos{}, diag.Pos{}
			}
			for i := range n.Catch {
				n.Catch[i].Pos = diag.Pos{}
			}
			if n.Map != nil {
				n.Map.OverPos, n.Map.ToPos = diag.Pos{}, diag.Pos{}
			}
		}
	}
	if !reflect.DeepEqual(c, y) {
		t.Errorf("CUE and YAML graphs differ:\ncue:  %+v\nyaml: %+v", c, y)
	}
}

func TestHashIgnoresTestsButNotContent(t *testing.T) {
	base := mustLoad(t, "a.cue", validCUE)
	noTests := mustLoad(t, "a.cue", strings.Replace(validCUE, `tests: [{name: "first", turns: [{user: "hi"}]}]`, "", 1))
	changed := mustLoad(t, "a.cue", strings.Replace(validCUE, `text: "Bye"`, `text: "Ciao"`, 1))
	if base.Hash != noTests.Hash {
		t.Error("tests changed the hash")
	}
	if base.Hash == changed.Hash {
		t.Error("a config change left the hash unchanged")
	}
}

func TestDefaultsWhenAbsent(t *testing.T) {
	g := mustLoad(t, "gen.cue", string(GenerateGraph(2, "loadtest_route", "")))
	if g.Defaults.RecursionLimit != DefaultRecursionLimit || g.Defaults.MaxConcurrency != DefaultMaxConcurrency || g.Defaults.Raw == nil {
		t.Errorf("defaults = %+v", g.Defaults)
	}
	if len(g.Nodes) != 2 || g.Nodes[1].Next[0] != graph.End {
		t.Errorf("nodes = %+v", g.Nodes)
	}
}

func TestFileLoadsSiblingTests(t *testing.T) {
	dir := t.TempDir()
	main := strings.Replace(validCUE, `tests: [{name: "first", turns: [{user: "hi"}]}]`, "", 1)
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	path := write("small.cue", main)
	testPath := write("small_test.cue", "package graphs\n\ntests: [\n\t{name: \"one\"},\n\t{name: \"two\", turns: []},\n]\n")
	write("other.yaml", validYAML)
	write("sub/deep.yml", validYAML)
	write("testdata/skip.cue", "x")
	write("node_modules/pkg/.travis.yml", "language: node_js")
	write("notes.txt", "x")

	g, d, err := File(path)
	if err != nil || len(d) > 0 {
		t.Fatalf("File: err=%v diags=%v", err, d)
	}
	if len(g.Tests) != 2 || g.Tests[1]["name"] != "two" {
		t.Fatalf("tests = %v", g.Tests)
	}
	if want := (diag.Pos{File: testPath, Line: 5, Col: 2}); g.TestsPos[1] != want {
		t.Errorf("test pos = %v, want %v", g.TestsPos[1], want)
	}
	if _, _, err := File(filepath.Join(dir, "missing.cue")); err == nil {
		t.Error("File of a missing path returned no error")
	}

	got, err := Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "other.yaml"), filepath.Join(dir, "small.cue"), filepath.Join(dir, "sub/deep.yml")}
	if !slices.Equal(got, want) {
		t.Errorf("Expand = %v, want %v", got, want)
	}
	if _, err := Expand([]string{filepath.Join(dir, "nope")}); err == nil {
		t.Error("Expand of a missing path returned no error")
	}
}

// Tests beside a graph are loaded whatever the two files' formats, a YAML
// test file is never taken for a graph, and two test files for one graph are
// an error rather than one of them being ignored.
func TestSiblingTestsInEitherFormat(t *testing.T) {
	graphCUE := strings.Replace(validCUE, `tests: [{name: "first", turns: [{user: "hi"}]}]`, "", 1)
	graphYAML := validYAML
	if i := strings.Index(graphYAML, "\ntests:"); i >= 0 {
		graphYAML = graphYAML[:i+1]
	}
	testsCUE := "package graphs\n\ntests: [{name: \"from cue\"}, {name: \"second\", turns: []}]\n"
	testsYAML := "tests:\n  - name: from yaml\n  - name: second\n    turns: []\n"
	tests := []struct {
		name          string
		files         map[string]string
		graph         string
		wantTest      string
		wantTestsFile string
		wantErr       string
	}{
		{"cue graph, cue tests", map[string]string{"g.cue": graphCUE, "g_test.cue": testsCUE}, "g.cue", "from cue", "g_test.cue", ""},
		{"cue graph, yaml tests", map[string]string{"g.cue": graphCUE, "g_test.yaml": testsYAML}, "g.cue", "from yaml", "g_test.yaml", ""},
		{"yaml graph, cue tests", map[string]string{"g.yaml": graphYAML, "g_test.cue": testsCUE}, "g.yaml", "from cue", "g_test.cue", ""},
		{"yaml graph, yml tests", map[string]string{"g.yaml": graphYAML, "g_test.yml": testsYAML}, "g.yaml", "from yaml", "g_test.yml", ""},
		{"two test files", map[string]string{"g.yaml": graphYAML, "g_test.cue": testsCUE, "g_test.yaml": testsYAML}, "g.yaml", "", "", "g.yaml has 2 test files (g_test.cue, g_test.yaml): keep its tests in one of them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			files, err := Expand([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{filepath.Join(dir, tt.graph)}; !slices.Equal(files, want) {
				t.Fatalf("Expand = %v, want only the graph %v", files, want)
			}
			g, d, err := File(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" {
				if !d.HasErrors() || !strings.Contains(d.Error(), tt.wantErr) {
					t.Fatalf("diagnostics %v, want %q", d, tt.wantErr)
				}
				return
			}
			if len(d) > 0 {
				t.Fatalf("diagnostics: %v", d)
			}
			if len(g.Tests) != 2 || g.Tests[0]["name"] != tt.wantTest || g.Tests[1]["name"] != "second" {
				t.Fatalf("tests = %v", g.Tests)
			}
			if got := g.TestsPos[1].File; got != filepath.Join(dir, tt.wantTestsFile) {
				t.Errorf("second test positioned in %s, want %s", got, tt.wantTestsFile)
			}
		})
	}
}
