// Package runtime is graphctl's library entry point: load a graph file (CUE or
// YAML), validate and compile it against the registered node types, and run it
// with the engine in runtime/engine.
//
//	g, diags, err := runtime.Load("graphs/slot_filling.cue")
//	if err != nil { ... }          // the file could not be read
//	if diags.HasErrors() { ... }   // every problem, as file:line:col: [code] message
//	eng := engine.New(g, checkpointer, engine.Options{Store: store})
//
// Teams that add node types register them with node.MustRegister (usually in
// an init function) before loading graphs that use them. An embedder or a
// test that wants its own set of node types loads with a Loader naming a
// node.Registry; the engine then creates that registry's services:
//
//	reg := node.Default().Clone()
//	reg.MustRegister(myType)
//	g, diags, err := runtime.Loader{Registry: reg}.Load("my.cue")
package runtime

import (
	"strings"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/node"
)

// Loader loads and compiles graph files against the node types of Registry.
// The zero Loader uses node.Default(), as Load and LoadSource do.
type Loader struct {
	// Registry holds the node types (and the services of their packages)
	// graphs may use; nil means node.Default().
	Registry *node.Registry
}

// Load reads, validates and compiles the graph file at path with the default
// registry; see Loader.Load.
func Load(path string) (*compile.Graph, diag.List, error) { return Loader{}.Load(path) }

// LoadSource is Load for a graph held in memory; see Loader.LoadSource.
func LoadSource(name string, src []byte) (*compile.Graph, diag.List) {
	return Loader{}.LoadSource(name, src)
}

// Load reads, validates and compiles the graph file at path. The error reports
// a file that could not be read; problems in the graph are diagnostics, and the
// graph is nil when any of them is an error.
func (ld Loader) Load(path string) (*compile.Graph, diag.List, error) {
	g, diags, err := load.Loader{Registry: ld.Registry}.File(path)
	if err != nil {
		return nil, nil, err
	}
	return ld.finish(g, diags)
}

// LoadSource is Load for a graph held in memory; name is used in diagnostics
// and decides the format (.cue, .yaml or .yml).
func (ld Loader) LoadSource(name string, src []byte) (*compile.Graph, diag.List) {
	g, diags := load.Loader{Registry: ld.Registry}.Source(name, src)
	cg, all, _ := ld.finish(g, diags)
	return cg, all
}

func (ld Loader) finish(g *graph.Graph, diags diag.List) (*compile.Graph, diag.List, error) {
	if g == nil {
		diags.Sort()
		return nil, diags, nil
	}
	// Semantic checks run even when the document has schema errors, so that a
	// file's problems are all reported at once; a semantic diagnostic about a
	// part (a node, a state field) that already has a schema error is left out,
	// as a likely consequence of it.
	loadFailed := diags.HasErrors()
	cg, more := compile.Compile(g, compile.Options{Registry: ld.Registry})
	if loadFailed {
		broken := map[string]bool{}
		for _, d := range diags {
			broken[part(d.Path)] = true
		}
		for _, d := range more {
			if !broken[part(d.Path)] {
				diags = append(diags, d)
			}
		}
	} else {
		diags = append(diags, more...)
	}
	diags.Sort()
	if diags.HasErrors() {
		return nil, diags, nil
	}
	return cg, diags, nil
}

// part returns the first two elements of a document path ("nodes.extract",
// "state.goal"), naming the declaration a diagnostic belongs to.
func part(path string) string {
	parts := strings.SplitN(path, ".", 3)
	if len(parts) >= 2 {
		return parts[0] + "." + parts[1]
	}
	return path
}
