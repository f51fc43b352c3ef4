package compile

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/node"
)

// SubgraphType is the node type that runs another graph file as one node.
const SubgraphType = "subgraph"

// Diagnostic codes of subgraph nodes.
const (
	CodeSubgraphMissing = "subgraph-missing"
	CodeSubgraphCycle   = "subgraph-cycle"
	CodeSubgraphMapping = "subgraph-mapping"
)

// subgraphConfig is the config of a subgraph node.
type subgraphConfig struct {
	Graph   string            `json:"graph"`
	Input   map[string]string `json:"input"`
	Output  map[string]string `json:"output"`
	Persist bool              `json:"persist"`
}

// Subgraph is a compiled subgraph node: the child graph it runs and how
// values move between the parent's state and the child's.
type Subgraph struct {
	// File is the child graph's path as loaded (relative to the including
	// file's directory, joined with it).
	File string
	// Graph is the compiled child graph.
	Graph *Graph
	// Input sets the child's fields from the parent's state when the child
	// starts: each Field is a child field.
	Input []Mapping
	// Output writes the child's final state back to the parent: each Field
	// is a parent field.
	Output []Mapping
	// Persist keeps the child's state from one run of the node to the next
	// on the same thread (LangGraph's checkpointer=True): every run goes on
	// in one namespace per task, "node:task". Otherwise each run starts the
	// child from a fresh state in a namespace of its own.
	Persist bool
}

// Mapping moves one value between parent and child state.
type Mapping struct {
	// Field is the field written (in the child for inputs, in the parent
	// for outputs).
	Field string
	// Expr computes the value from the other side's state; nil for a shared
	// key, copied by name.
	Expr *expression.Program
}

// SharedKeys lists the fields the two graphs both declare with the same
// type, in the child's declaration order.
func SharedKeys(parent, child *graph.Graph) []string {
	var out []string
	for _, cf := range child.State {
		if pf := parent.Field(cf.Name); pf != nil && pf.Type.String() == cf.Type.String() {
			out = append(out, cf.Name)
		}
	}
	return out
}

func init() { node.MustRegister(subgraphNodeType) }

// RegisterSubgraph adds the subgraph node type to r: a registry made with
// node.NewRegistry holds it only when added (node.Default() and its clones
// hold it already).
func RegisterSubgraph(r *node.Registry) error { return r.Register(subgraphNodeType) }

// subgraphNodeType is the node type of subgraph nodes.
var subgraphNodeType = node.Type{
	Name: SubgraphType,
	Description: "Runs another graph file as one node (a subgraph): input maps parent state into the child, " +
		"output maps the child's final state back; without them, the fields both declare with the same type are shared",
	Config: `{
	// graph is the child graph file, relative to the including file.
	graph!: string
	// input sets child fields (keys) from expressions over the parent's state (values).
	input?: [string]: string
	// output sets parent fields (keys) from expressions over the child's final state (values).
	output?: [string]: string
	// persist keeps the child's state from one run of the node to the next on the same thread (false: each run starts the child afresh).
	persist?: bool
}`,
	New: func(b node.Builder) (node.Node, error) {
		// The compiler builds subgraph nodes itself (see compileSubgraph);
		// other builders (schema probes) only learn how keys are read.
		var cfg subgraphConfig
		if err := b.Decode(&cfg); err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(cfg.Input)) {
			b.Expr("input."+k, cfg.Input[k], "")
		}
		for _, k := range slices.Sorted(maps.Keys(cfg.Output)) {
			b.Expr("output."+k, cfg.Output[k], "")
		}
		return subgraphPlaceholder, nil
	},
}

// subgraphPlaceholder is the Impl of a subgraph node: the engine runs the
// child graph itself and never calls it.
var subgraphPlaceholder = node.Func(func(context.Context, *node.Input) (node.Update, error) {
	return nil, errors.New("a subgraph node runs only inside the engine")
})

// compileSubgraph loads and compiles the child graph of a subgraph node and
// type-checks its mappings against both schemas.
func (c *compiler) compileSubgraph(n *graph.Node) *Subgraph {
	b := &builder{c: c, n: n, env: c.nodeEnv(n)}
	var cfg subgraphConfig
	if err := b.Decode(&cfg); err != nil {
		return nil
	}
	if cfg.Graph == "" {
		b.Errorf("graph", CodeInvalidConfig, "node %q: graph must name the child graph file", n.Name)
		return nil
	}
	if !load.HasGraphExtension(cfg.Graph) {
		// Any other file would be read as CUE and its first word reported
		// as an unknown reference, in a file that is no graph.
		b.Errorf("graph", CodeInvalidConfig, "node %q: subgraph %q is not a graph file: name a .cue, .yaml or .yml file", n.Name, cfg.Graph)
		return nil
	}
	file := cfg.Graph
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(c.g.File), file)
	}
	abs := absPath(file)
	chain := append(append([]string(nil), c.opts.includes...), absPath(c.g.File))
	for i, inc := range chain {
		if inc == abs {
			names := make([]string, 0, len(chain)-i+1)
			for _, p := range chain[i:] {
				names = append(names, filepath.Base(p))
			}
			names = append(names, filepath.Base(abs))
			b.Errorf("graph", CodeSubgraphCycle, "node %q: subgraph %q includes itself: %s", n.Name, cfg.Graph, strings.Join(names, " → "))
			return nil
		}
	}
	if _, err := os.Stat(file); err != nil {
		b.Errorf("graph", CodeSubgraphMissing, "node %q: subgraph file %q: %v", n.Name, cfg.Graph, describeStatError(err))
		return nil
	}
	childSpec, diags, err := load.Loader{Registry: c.opts.Registry}.File(file)
	if err != nil {
		b.Errorf("graph", CodeSubgraphMissing, "node %q: subgraph file %q: %v", n.Name, cfg.Graph, err)
		return nil
	}
	c.diags = append(c.diags, diags...)
	if childSpec == nil {
		return nil
	}
	var child *Graph
	if !diags.HasErrors() {
		var more []diag.Diagnostic
		child, more = Compile(childSpec, Options{LookupEnv: c.opts.LookupEnv, Registry: c.opts.Registry, includes: chain})
		c.diags = append(c.diags, more...)
	}
	// The mappings are checked against the child's schema even when the
	// child has errors of its own, so that every problem shows at once.
	childEnv := expression.NewEnv(childSpec)
	sg := &Subgraph{File: file, Graph: child, Persist: cfg.Persist}
	shared := SharedKeys(c.g, childSpec)
	if cfg.Input == nil {
		for _, k := range shared {
			sg.Input = append(sg.Input, Mapping{Field: k})
		}
	} else {
		env := c.nodeEnv(n)
		for _, k := range slices.Sorted(maps.Keys(cfg.Input)) {
			f := childSpec.Field(k)
			if f == nil {
				b.Errorf("input."+k, CodeSubgraphMapping, "node %q: input names %q, which the subgraph %s does not declare%s",
					n.Name, k, filepath.Base(file), suggestField(k, childSpec))
				continue
			}
			path := "nodes." + n.Name + ".config.input." + k
			if p := c.compileExpr(env, path, b.posOf("input."+k), cfg.Input[k], f.Type.Kind); p != nil {
				sg.Input = append(sg.Input, Mapping{Field: k, Expr: p})
			} else {
				b.failed = true
			}
		}
	}
	if cfg.Output == nil {
		if len(shared) == 0 {
			b.Warnf("graph", CodeSubgraphMapping, "node %q: the subgraph %s shares no field with this graph and the node has no output mapping, so its result is dropped",
				n.Name, filepath.Base(file))
		}
		for _, k := range shared {
			sg.Output = append(sg.Output, Mapping{Field: k})
		}
	} else {
		for _, k := range slices.Sorted(maps.Keys(cfg.Output)) {
			f := c.g.Field(k)
			if f == nil {
				b.Errorf("output."+k, CodeSubgraphMapping, "node %q: output names %q, which this graph's state does not declare%s",
					n.Name, k, suggestField(k, c.g))
				continue
			}
			path := "nodes." + n.Name + ".config.output." + k
			if p := c.compileExpr(childEnv, path, b.posOf("output."+k), cfg.Output[k], f.Type.Kind); p != nil {
				sg.Output = append(sg.Output, Mapping{Field: k, Expr: p})
			} else {
				b.failed = true
			}
		}
	}
	if b.failed || child == nil {
		return nil
	}
	return sg
}

func suggestField(name string, g *graph.Graph) string {
	names := make([]string, len(g.State))
	for i, f := range g.State {
		names[i] = f.Name
	}
	sort.Strings(names)
	return diag.DidYouMean(name, names)
}

func describeStatError(err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return "no such file"
	}
	return err.Error()
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return filepath.Clean(a)
	}
	return filepath.Clean(p)
}
