package runtime_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node"
)

// privateType is the node type only privateRegistry holds: it writes its
// config's text, followed by the greeting service when the run has one.
const privateType = "registrytest_private"

// greetingKey is the key of privateRegistry's service.
var greetingKey = node.NewKey[*greeting]("registrytest.greeting")

// greeting is a per-engine service that records whether it was closed.
type greeting struct {
	text   string
	closed bool
}

func (g *greeting) Close() error { g.closed = true; return nil }

// privateRegistry returns a registry of its own: the subgraph node type,
// privateType, and a greeting service whose instances it records in made.
func privateRegistry(t *testing.T, made *[]*greeting) *node.Registry {
	t.Helper()
	reg := node.NewRegistry()
	if err := compile.RegisterSubgraph(reg); err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(node.Type{
		Name:        privateType,
		Description: "Writes its text and the greeting service's.",
		Config:      `{text: string}`,
		New: func(b node.Builder) (node.Node, error) {
			var cfg struct{ Text string }
			if err := b.Decode(&cfg); err != nil {
				return nil, err
			}
			return node.Func(func(_ context.Context, in *node.Input) (node.Update, error) {
				if r, _ := node.RegistryKey.Get(in.Services); r != reg {
					return nil, errors.New("the services do not name the graph's registry")
				}
				g, ok := greetingKey.Get(in.Services)
				if !ok {
					return nil, errors.New("no greeting service")
				}
				return node.Update{"out": cfg.Text + g.text}, nil
			}), nil
		},
	})
	err := node.RegisterServiceIn(reg, greetingKey, func() *greeting {
		g := &greeting{text: ", from the registry's service"}
		*made = append(*made, g)
		return g
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

const privateGraph = `dsl_version: "graphctl/v1"
name: "private"
state: out: {type: "string"}
start: "a"
nodes: a: {type: "` + privateType + `", config: text: "hello", next: "END"}
`

// TestPrivateRegistryCompilesAndRuns: a graph whose node type only a
// registry of its own holds loads, compiles and runs with that registry (the
// engine creating and closing the registry's service), and the default
// registry neither holds the type nor loads the graph.
func TestPrivateRegistryCompilesAndRuns(t *testing.T) {
	var made []*greeting
	reg := privateRegistry(t, &made)
	g, diags := runtime.Loader{Registry: reg}.LoadSource("private.cue", []byte(privateGraph))
	if g == nil {
		t.Fatalf("the graph does not compile with its registry:\n%v", diags)
	}
	if g.Registry != reg {
		t.Error("the compiled graph does not name the registry it was compiled against")
	}
	eng := engine.New(g, memory.New(), engine.Options{})
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: map[string]any{}}, nil)
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("run: %v %+v", err, res)
	}
	if got, want := res.State["out"], "hello, from the registry's service"; got != want {
		t.Errorf("out = %q, want %q", got, want)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if len(made) != 1 || !made[0].closed {
		t.Errorf("the engine made %d greeting services (want 1) and closed them: %v", len(made), len(made) == 1 && made[0].closed)
	}

	if _, ok := node.Lookup(privateType); ok {
		t.Errorf("the default registry holds %q", privateType)
	}
	for _, typ := range node.Types() {
		if typ.Name == privateType {
			t.Errorf("node.Types lists %q", privateType)
		}
	}
	if g, _ := runtime.LoadSource("private.cue", []byte(privateGraph)); g != nil {
		t.Error("the default registry compiled a graph using a type it does not hold")
	}
}

// TestPrivateRegistryGivenServiceWins: a service given to the engine under
// a registry's key is used instead of the registry's own, which is then
// neither made nor closed.
func TestPrivateRegistryGivenServiceWins(t *testing.T) {
	var made []*greeting
	reg := privateRegistry(t, &made)
	g, diags := runtime.Loader{Registry: reg}.LoadSource("private.cue", []byte(privateGraph))
	if g == nil {
		t.Fatalf("the graph does not compile:\n%v", diags)
	}
	mine := &greeting{text: ", from the caller"}
	eng := engine.New(g, memory.New(), engine.Options{Extra: greetingKey.Bind(node.Extra{}, mine)})
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: map[string]any{}}, nil)
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("run: %v %+v", err, res)
	}
	if got, want := res.State["out"], "hello, from the caller"; got != want {
		t.Errorf("out = %q, want %q", got, want)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if len(made) != 0 || mine.closed {
		t.Errorf("made %d services of the registry, closed the caller's: %v; want 0, false", len(made), mine.closed)
	}
}

// TestTypeMissingFromRegistry: a graph using a node type its registry does
// not hold (here one the default registry holds) fails validation at the
// type's file:line:col, naming the type.
func TestTypeMissingFromRegistry(t *testing.T) {
	src := `dsl_version: "graphctl/v1"
name: "g"
state: out: {type: "string"}
start: "a"
nodes: {
	a: {type: "` + privateType + `", config: text: "hi", next: "b"}
	b: {type: "runtimetest_say", config: text: "hi", next: "END"}
}
`
	var made []*greeting
	g, diags := runtime.Loader{Registry: privateRegistry(t, &made)}.LoadSource("g.cue", []byte(src))
	if g != nil {
		t.Fatal("a graph using a type missing from its registry compiled")
	}
	if len(diags) != 1 {
		t.Fatalf("want one diagnostic, got %v", diags)
	}
	d := diags[0]
	if d.Code != "unknown-node-type" || d.Pos().String() != "g.cue:7:13" || !strings.Contains(d.Message, `"runtimetest_say"`) {
		t.Errorf("got %s [%s] %s; want g.cue:7:13 [unknown-node-type] naming \"runtimetest_say\"", d.Pos(), d.Code, d.Message)
	}
	if _, ok := node.Lookup("runtimetest_say"); !ok {
		t.Error("the default registry lost runtimetest_say")
	}
}

// TestPrivateRegistryReachesSubgraphs: a subgraph node's child graph is
// loaded and compiled against the parent's registry, and runs with it.
func TestPrivateRegistryReachesSubgraphs(t *testing.T) {
	dir := t.TempDir()
	parent := `dsl_version: "graphctl/v1"
name: "parent"
state: out: {type: "string"}
start: "child"
nodes: child: {type: "subgraph", config: graph: "child.cue", next: "END"}
`
	for name, src := range map[string]string{"parent.cue": parent, "child.cue": privateGraph} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var made []*greeting
	g, diags, err := runtime.Loader{Registry: privateRegistry(t, &made)}.Load(filepath.Join(dir, "parent.cue"))
	if err != nil || g == nil {
		t.Fatalf("the parent does not compile with the registry: %v\n%v", err, diags)
	}
	eng := engine.New(g, memory.New(), engine.Options{})
	defer eng.Close()
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: map[string]any{}}, nil)
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("run: %v %+v", err, res)
	}
	if got, want := res.State["out"], "hello, from the registry's service"; got != want {
		t.Errorf("out = %q, want %q", got, want)
	}
	_, diags, err = runtime.Load(filepath.Join(dir, "parent.cue"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diags.Error(), privateType) {
		t.Errorf("with the default registry, the child's type is not reported:\n%v", diags)
	}
}
