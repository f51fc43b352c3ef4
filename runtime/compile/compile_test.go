package compile

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func field(t *testing.T, name, typ string, set ...func(*graph.Field)) *graph.Field {
	t.Helper()
	ty, err := graph.ParseType(typ)
	if err != nil {
		t.Fatal(err)
	}
	f := &graph.Field{Name: name, Type: ty, TypeText: typ}
	for _, s := range set {
		s(f)
	}
	return f
}

func withDefault(v any) func(*graph.Field) {
	return func(f *graph.Field) { f.Default, f.HasDefault = v, true }
}

func withEnum(vals ...any) func(*graph.Field) { return func(f *graph.Field) { f.Enum = vals } }

func withReducer(name string) func(*graph.Field) { return func(f *graph.Field) { f.Reducer = name } }

// noop builds a node of the test type that needs no config.
func noop(name string, next ...string) *graph.Node {
	return &graph.Node{Name: name, Type: "compiletest_noop", Next: next}
}

func routed(name string, def string, routes ...graph.Route) *graph.Node {
	return &graph.Node{Name: name, Type: "compiletest_noop", Routes: routes, Default: def}
}

func baseState(t *testing.T) []*graph.Field {
	return []*graph.Field{
		field(t, "goal", "string", withEnum("install", "repair")),
		field(t, "count", "int"),
		field(t, "items", "list<string>"),
		field(t, "messages", "messages"),
	}
}

func newGraph(t *testing.T, start string, nodes ...*graph.Node) *graph.Graph {
	return &graph.Graph{File: "g.cue", Name: "g", Start: start, State: baseState(t), Nodes: nodes, Pos: map[string]diag.Pos{}}
}

// got renders the diagnostics as sorted "code path" lines.
func got(l diag.List) []string {
	out := make([]string, 0, len(l))
	for _, d := range l {
		out = append(out, d.Code+" "+d.Path)
	}
	sort.Strings(out)
	return out
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name  string
		graph func(t *testing.T) *graph.Graph
		env   map[string]string
		want  []string
		// contains is a substring the first diagnostic's message must have.
		contains string
	}{
		{
			name:  "valid chain",
			graph: func(t *testing.T) *graph.Graph { return newGraph(t, "a", noop("a", "b"), noop("b", graph.End)) },
		},
		{
			name: "unknown next target with suggestion",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", noop("a", "reviw"), noop("review", graph.End))
			},
			want:     []string{"unknown-target nodes.a.next"},
			contains: `did you mean "review"?`,
		},
		{
			name: "unknown route and default targets",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", routed("a", "nowhere", graph.Route{When: "count > 1", To: "elsewhere"}))
			},
			want: []string{"unknown-target nodes.a.default", "unknown-target nodes.a.routes.0.to"},
		},
		{
			name: "END in wait_for and map.to",
			graph: func(t *testing.T) *graph.Graph {
				a := noop("a", "b")
				a.Map = &graph.MapRoute{Over: "items", To: graph.End}
				b := noop("b", graph.End)
				b.WaitFor = []string{graph.End}
				return newGraph(t, "a", a, b)
			},
			want: []string{"unknown-target nodes.a.map.to", "unknown-target nodes.b.wait_for.0"},
		},
		{
			name: "unknown catch target",
			graph: func(t *testing.T) *graph.Graph {
				a := noop("a", graph.End)
				a.Catch = []graph.Catch{{On: []string{"timeout"}, To: "fallbak"}}
				return newGraph(t, "a", a, noop("fallback", graph.End))
			},
			want:     []string{"unknown-target nodes.a.catch.0.to"},
			contains: `"fallback"`,
		},
		{
			name:     "unknown start",
			graph:    func(t *testing.T) *graph.Graph { return newGraph(t, "strat", noop("start", graph.End)) },
			want:     []string{"unknown-start start"},
			contains: `did you mean "start"?`,
		},
		{
			name: "missing default",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", routed("a", "", graph.Route{When: "count > 1", To: graph.End}))
			},
			want: []string{"missing-default nodes.a.routes"},
		},
		{
			name: "unreachable region reported once",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", noop("a", graph.End), noop("orphan", "child"), noop("child", graph.End))
			},
			want:     []string{"unreachable-node nodes.orphan"},
			contains: `"child"`,
		},
		{
			name: "unreachable cycle",
			graph: func(t *testing.T) *graph.Graph {
				x := routed("x", "y", graph.Route{When: "count > 3", To: graph.End})
				return newGraph(t, "a", noop("a", graph.End), x, noop("y", "x"))
			},
			want: []string{"unreachable-node nodes.x"},
		},
		{
			name: "dead end",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", noop("a", "b"), noop("b"))
			},
			want:     []string{"no-path-to-end nodes.b"},
			contains: "leads nowhere",
		},
		{
			name: "cycle of next edges",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", noop("a", "b"), noop("b", "c"), noop("c", "a"))
			},
			want:     []string{"cycle-without-exit nodes.c.next"},
			contains: `node "c" goes back to "a", closing cycle a -> b -> c -> a`,
		},
		{
			name: "cycle with unconditional exit still loops",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", noop("a", "b", "done"), noop("b", "a"), noop("done", graph.End))
			},
			want: []string{"cycle-without-exit nodes.b.next"},
		},
		{
			name: "cycle whose routes stay inside",
			graph: func(t *testing.T) *graph.Graph {
				a := routed("a", "b", graph.Route{When: "count > 1", To: "b"})
				return newGraph(t, "a", a, noop("b", "a"))
			},
			want: []string{"cycle-without-exit nodes.b.next"},
		},
		{
			name: "self loop",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", noop("a", "a"))
			},
			want:     []string{"cycle-without-exit nodes.a.next"},
			contains: `node "a" goes back to itself, closing cycle a -> a`,
		},
		{
			name: "cycle with conditional exit is fine",
			graph: func(t *testing.T) *graph.Graph {
				a := routed("a", "b", graph.Route{When: "count > 3", To: graph.End})
				return newGraph(t, "a", a, noop("b", "a"))
			},
		},
		{
			name: "cycle with catch exit is fine",
			graph: func(t *testing.T) *graph.Graph {
				a := noop("a", "b")
				a.Catch = []graph.Catch{{On: []string{"error"}, To: "fail"}}
				return newGraph(t, "a", a, noop("b", "a"), noop("fail", graph.End))
			},
		},
		{
			name: "route condition not bool",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", routed("a", graph.End, graph.Route{When: "count + 1", To: graph.End}))
			},
			want: []string{"expr-error nodes.a.routes.0.when"},
		},
		{
			name: "route condition unknown name",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", routed("a", graph.End, graph.Route{When: "gaol == 'install'", To: graph.End}))
			},
			want:     []string{"unknown-name nodes.a.routes.0.when"},
			contains: `did you mean "goal"?`,
		},
		{
			name: "map over not a list",
			graph: func(t *testing.T) *graph.Graph {
				a := noop("a", graph.End)
				a.Map = &graph.MapRoute{Over: "count", To: "b"}
				return newGraph(t, "a", a, &graph.Node{Name: "b", Type: "compiletest_text", Config: map[string]any{"text": "${item}"}, Next: []string{graph.End}})
			},
			want: []string{"expr-error nodes.a.map.over"},
		},
		{
			name: "map item visible to target only",
			graph: func(t *testing.T) *graph.Graph {
				a := noop("a", "c")
				a.Map = &graph.MapRoute{Over: "items", To: "b", As: "it"}
				b := &graph.Node{Name: "b", Type: "compiletest_text", Config: map[string]any{"text": "${it}"}, Next: []string{graph.End}}
				c := &graph.Node{Name: "c", Type: "compiletest_text", Config: map[string]any{"text": "${it}"}, Next: []string{graph.End}}
				return newGraph(t, "a", a, b, c)
			},
			want: []string{"template-error nodes.c.config.text"},
		},
		{
			name: "template unknown field",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", &graph.Node{Name: "a", Type: "compiletest_text", Config: map[string]any{"text": "Goal: ${gaol}"}, Next: []string{graph.End}})
			},
			want:     []string{"template-error nodes.a.config.text"},
			contains: `did you mean "goal"?`,
		},
		{
			name: "config expression error",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", &graph.Node{Name: "a", Type: "compiletest_when", Config: map[string]any{"when": "count >"}, Next: []string{graph.End}})
			},
			want: []string{"expr-error nodes.a.config.when"},
		},
		{
			name: "unknown config key",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", &graph.Node{Name: "a", Type: "compiletest_noop", Config: map[string]any{"nested": map[string]any{"deep": 1}}, Next: []string{graph.End}})
			},
			want: []string{"invalid-config nodes.a.config.nested.deep"},
		},
		{
			name: "config value of wrong type",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", &graph.Node{Name: "a", Type: "compiletest_noop", Config: map[string]any{"limit": "ten"}, Next: []string{graph.End}})
			},
			want: []string{"invalid-config nodes.a.config.limit"},
		},
		{
			name: "constructor reports through the builder",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", &graph.Node{Name: "a", Type: "compiletest_noop", Config: map[string]any{"limit": int64(1000)}, Next: []string{graph.End}})
			},
			want:     []string{"invalid-config nodes.a.config.limit"},
			contains: "at most 100",
		},
		{
			name: "constructor error",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", &graph.Node{Name: "a", Type: "compiletest_broken", Next: []string{graph.End}})
			},
			want:     []string{"invalid-config nodes.a.config"},
			contains: "model registry is empty",
		},
		{
			name: "unknown node type is left to the loader",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", &graph.Node{Name: "a", Type: "no_such_type", Next: []string{graph.End}})
			},
		},
		{
			name: "unknown reducer",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", noop("a", graph.End))
				g.State = append(g.State, field(t, "tags", "list<string>", withReducer("unoin")))
				return g
			},
			want:     []string{"unknown-reducer state.tags.reducer"},
			contains: `did you mean "union"?`,
		},
		{
			name: "reducer does not fit type",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", noop("a", graph.End))
				g.State = append(g.State, field(t, "name", "string", withReducer("add")))
				return g
			},
			want:     []string{"invalid-reducer state.name.reducer"},
			contains: `"keep"`,
		},
		{
			name: "custom reducer expression error",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", noop("a", graph.End))
				g.State = append(g.State, field(t, "total", "int", func(f *graph.Field) { f.ReducerExpr = "old + nwe" }))
				return g
			},
			want:     []string{"unknown-name state.total.reducer.expr"},
			contains: `did you mean "new"?`,
		},
		{
			name: "invalid type",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", noop("a", graph.End))
				g.State = append(g.State, &graph.Field{Name: "x", TypeText: "lst<string>"})
				return g
			},
			want: []string{"invalid-type state.x.type"},
		},
		{
			name: "default of wrong type",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", noop("a", graph.End))
				g.State = append(g.State, field(t, "n", "int", withDefault("three")))
				return g
			},
			want: []string{"invalid-default state.n.default"},
		},
		{
			name: "default outside enum",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", noop("a", graph.End))
				g.State = append(g.State, field(t, "mode", "string", withEnum("a", "b"), withDefault("c")))
				return g
			},
			want: []string{"invalid-default state.mode.default"},
		},
		{
			name: "enum value of wrong type",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", noop("a", graph.End))
				g.State = append(g.State, field(t, "level", "int", withEnum(int64(1), "two")))
				return g
			},
			want: []string{"invalid-enum state.level.enum.1"},
		},
		{
			name: "enum violation in route",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", routed("a", graph.End, graph.Route{When: "goal == 'instal'", To: graph.End}))
			},
			want:     []string{"enum-violation nodes.a.routes.0.when"},
			contains: `did you mean "install"?`,
		},
		{
			name: "enum violation reversed, via state and in",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", routed("a", graph.End,
					graph.Route{When: "'fix' != state.goal", To: graph.End},
					graph.Route{When: "goal in ['install', 'diagnose']", To: graph.End}))
			},
			want: []string{"enum-violation nodes.a.routes.0.when", "enum-violation nodes.a.routes.1.when"},
		},
		{
			name: "enum values compare fine",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "a", routed("a", graph.End, graph.Route{When: "goal == 'install' || goal in ['repair'] || goal == ''", To: graph.End}))
			},
		},
		{
			name: "reserved names",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "START", noop("START", "a"), noop("a", graph.End))
			},
			want: []string{"reserved-name nodes.START"},
		},
		{
			name: "node named like a state field is fine",
			graph: func(t *testing.T) *graph.Graph {
				return newGraph(t, "goal", noop("goal", graph.End))
			},
		},
		{
			// Test cases are checked by runtime/graphtest, all at once: a
			// duplicate name does not stop the graph from compiling.
			name: "duplicate test names are not the compiler's",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", noop("a", graph.End))
				g.Tests = []map[string]any{{"name": "greets"}, {"name": "asks"}, {"name": "greets"}}
				return g
			},
		},
		{
			name: "wait_for a node that cannot lead to the join",
			graph: func(t *testing.T) *graph.Graph {
				join := noop("join", graph.End)
				join.WaitFor = []string{"left", "right"}
				return newGraph(t, "a", noop("a", "left", "right"), noop("left", "join"), noop("right", graph.End), join)
			},
			want: []string{"wait-for-unreachable nodes.join.wait_for.1"},
		},
		{
			name: "join of a fan-out",
			graph: func(t *testing.T) *graph.Graph {
				join := noop("join", graph.End)
				join.WaitFor = []string{"left", "right"}
				return newGraph(t, "a", noop("a", "left", "right"), noop("left", "join"), noop("right", "join"), join)
			},
		},
		{
			name: "unset environment variables warn",
			graph: func(t *testing.T) *graph.Graph {
				g := newGraph(t, "a", &graph.Node{Name: "a", Type: "compiletest_noop",
					Config: map[string]any{"key": map[string]any{"env": "API_KEY"}}, Next: []string{graph.End}})
				g.Defaults.Raw = map[string]any{"model": map[string]any{"env": "COMPILETEST_MODEL"}, "token": map[string]any{"env": "TOKEN"}}
				return g
			},
			env:  map[string]string{"TOKEN": "x"},
			want: []string{"env-unset defaults.model", "env-unset nodes.a.config.key"},
		},
		{
			name: "every problem, not the first",
			graph: func(t *testing.T) *graph.Graph {
				a := routed("a", "", graph.Route{When: "modle != ''", To: "bb"})
				return newGraph(t, "a", a, noop("b", graph.End))
			},
			want: []string{"missing-default nodes.a.routes", "unknown-name nodes.a.routes.0.when", "unknown-target nodes.a.routes.0.to"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{LookupEnv: func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }}
			cg, diags := Compile(tt.graph(t), opts)
			if g := got(diags); !slices.Equal(g, tt.want) && !(len(g) == 0 && len(tt.want) == 0) {
				t.Fatalf("diagnostics:\n  %s\nwant:\n  %s\n%s", strings.Join(g, "\n  "), strings.Join(tt.want, "\n  "), diags.Error())
			}
			if tt.contains != "" && !strings.Contains(diags[0].Message, tt.contains) {
				t.Errorf("message %q does not contain %q", diags[0].Message, tt.contains)
			}
			if diags.HasErrors() != (cg == nil) {
				t.Errorf("graph returned = %v with errors = %v", cg != nil, diags.HasErrors())
			}
		})
	}
}

func TestCompiledGraph(t *testing.T) {
	g := newGraph(t, "a",
		routed("a", "b", graph.Route{When: "count > 2", To: "c"}),
		&graph.Node{Name: "b", Type: "compiletest_text", Config: map[string]any{"text": "n=${count}"}, Next: []string{"c", graph.End}},
		noop("c", graph.End),
	)
	g.State = append(g.State,
		field(t, "total", "int", withDefault(float64(5)), func(f *graph.Field) { f.ReducerExpr = "old + new * 2" }),
		field(t, "tags", "list<string>", withReducer("union")),
	)
	cg, diags := Compile(g, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if want := []string{"goal", "count", "items", "messages", "total", "tags"}; !slices.Equal(cg.FieldOrder, want) {
		t.Errorf("field order %v, want %v", cg.FieldOrder, want)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(cg.NodeOrder, want) {
		t.Errorf("node order %v, want %v", cg.NodeOrder, want)
	}
	if got := cg.Nodes["c"].Sources; !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("sources of c: %v", got)
	}
	if got := cg.Fields["messages"].Reducer.Name; got != "messages" {
		t.Errorf("messages reducer %q", got)
	}
	if got := cg.Fields["tags"].Reducer.Name; got != "union" {
		t.Errorf("tags reducer %q", got)
	}
	if got := cg.Fields["count"].Initial; got != 0 {
		t.Errorf("count initial %#v", got)
	}
	if got := cg.Fields["total"].Initial; got != 5 {
		t.Errorf("total initial %#v, want int 5", got)
	}
	res, err := cg.Fields["total"].Reducer.Reduce(5, 4)
	if err != nil || res.Value != 13 {
		t.Errorf("custom reducer: %#v, %v; want 13", res.Value, err)
	}
	ok, err := cg.Nodes["a"].Routes[0].When.Eval(map[string]any{"count": 3})
	if err != nil || ok != true {
		t.Errorf("route: %v, %v", ok, err)
	}
	out, err := cg.Nodes["b"].Impl.Run(context.Background(), &node.Input{Scope: map[string]any{"count": 7}})
	if err != nil || out["reply"] != "n=7" {
		t.Errorf("node b: %v, %v", out, err)
	}
	if cg.Nodes["a"].Impl == nil {
		t.Error("node a was not built")
	}
}

// TestExprPositions checks that expression problems are placed at the
// offending token, on one line and across lines.
func TestExprPositions(t *testing.T) {
	tests := []struct {
		name     string
		when     string
		line     int
		col      int
		wantCode string
	}{
		{"first token", "gaol == 'x'", 10, 5, "unknown-name"},
		{"later token", "count > 1 && modle == ''", 10, 18, "unknown-name"},
		{"enum literal", "goal == 'fix'", 10, 13, "enum-violation"},
		{"second line", "count > 1 &&\nmodle == ''", 11, 5, "unknown-name"},
		// Columns count bytes, as the loader's positions do: é is two.
		{"after multi-byte characters", "'éé' != '' && modle == ''", 10, 21, "unknown-name"},
		{"second line after multi-byte characters", "'é' != '' &&\n'é' != modle", 11, 13, "unknown-name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, "a", routed("a", graph.End, graph.Route{When: tt.when, To: graph.End}))
			g.Pos["nodes.a.routes.0.when"] = diag.Pos{File: "g.cue", Line: 10, Col: 5}
			_, diags := Compile(g, Options{})
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got:\n%s", diags.Error())
			}
			d := diags[0]
			if d.Code != tt.wantCode || d.Line != tt.line || d.Col != tt.col {
				t.Errorf("got %s at %d:%d, want %s at %d:%d", d.Code, d.Line, d.Col, tt.wantCode, tt.line, tt.col)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"review", "retrieve", "answer", "END"}
	tests := []struct{ in, want string }{
		{"reviw", "review"},
		{"ansewr", "answer"},
		{"end", "END"},
		{"zzz", ""},
	}
	for _, tt := range tests {
		if got := diag.Closest(tt.in, cands); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
