// Package compile turns a loaded graph (runtime/graph) into a compiled graph the
// engine can run: it resolves every state field's reducer and initial value,
// compiles routing expressions against the typed state, builds each node through
// its registered node type, and runs the semantic checks that the schema cannot
// express (unknown targets, unreachable nodes, cycles without an exit, enum
// violations, unset environment variables, …).
//
// Every problem is reported, not only the first, as a diagnostic with a stable
// code at the file:line:col of the offending value. Positions of problems
// inside expressions and templates point at the offending token.
//
// A mistake is reported once, where it is, and not again through its
// consequences: graph analysis follows a misspelt target to the node it most
// likely means (so the intended node is not also "unreachable"), reports an
// unreachable region at its entry node only, and reports a missing path to END
// at the nodes where paths stop (or, for a cycle that never exits, at the edge
// that closes it), not at
// every node upstream of them.
package compile

import (
	"time"

	"fmt"
	"os"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/reducer"
)

// Diagnostic codes reported by the compiler.
const (
	CodeUnknownTarget       = "unknown-target"
	CodeUnknownStart        = "unknown-start"
	CodeMissingDefault      = "missing-default"
	CodeUnreachableNode     = "unreachable-node"
	CodeNoPathToEnd         = "no-path-to-end"
	CodeCycleWithoutExit    = "cycle-without-exit"
	CodeExprError           = "expr-error"
	CodeUnknownName         = "unknown-name"
	CodeTemplateError       = "template-error"
	CodeUnknownReducer      = "unknown-reducer"
	CodeInvalidReducer      = "invalid-reducer"
	CodeInvalidType         = "invalid-type"
	CodeInvalidDefault      = "invalid-default"
	CodeInvalidEnum         = "invalid-enum"
	CodeEnumViolation       = "enum-violation"
	CodeDuplicateName       = "duplicate-name"
	CodeReservedName        = "reserved-name"
	CodeWaitForUnreachable  = "wait-for-unreachable"
	CodeEnvUnset            = "env-unset"
	CodeInvalidConfig       = "invalid-config"
	reservedStart           = "START"
	defaultMapItemName      = "item"
	customReducerNamePrefix = "expr:"
)

// What a map over an empty list does (Map.OnEmpty).
const (
	// MapContinue goes on as if the map's target had run for no item.
	MapContinue = "continue"
	// MapError fails the run.
	MapError = "error"
)

// Options tune compilation.
type Options struct {
	// LookupEnv reports whether an environment variable is set; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Registry holds the node types the graph's nodes are built with (the
	// child graphs of subgraph nodes too); nil means node.Default().
	Registry *node.Registry

	// includes lists the files of the subgraph nodes being compiled around
	// this graph, outermost first, to find include cycles.
	includes []string
}

// Graph is a compiled graph, ready to run.
type Graph struct {
	// Spec is the loaded graph this was compiled from.
	Spec *graph.Graph
	// Env is the typed expression environment of the graph's state and vars.
	Env *expression.Env
	// Fields holds the compiled state fields by name.
	Fields map[string]*Field
	// FieldOrder lists the field names in declaration order.
	FieldOrder []string
	// Nodes holds the compiled nodes by name.
	Nodes map[string]*Node
	// NodeOrder lists the node names in declaration order.
	NodeOrder []string
	// Start is the entry node.
	Start string
	// Registry is the registry the graph was compiled against; the engine
	// creates its services.
	Registry *node.Registry
}

// Field is a compiled state field.
type Field struct {
	Spec *graph.Field
	// Reducer is the builtin named by the field, the type's default
	// (reducer.Default), or a custom reducer compiled from the field's expression.
	Reducer *reducer.Reducer
	// Initial is the normalized default, or the type's zero value.
	Initial any
}

// Node is a compiled node.
type Node struct {
	Name string
	Spec *graph.Node
	// Impl is the node built by its type's constructor. It is nil for a node
	// whose type is not registered: the loader reports those, not Compile.
	Impl node.Node
	// Next lists the nodes run after this one; it may contain graph.End.
	Next []string
	// Routes are the compiled conditional edges, in order.
	Routes []Route
	// Default is the target when no route matches.
	Default string
	// Map is the compiled fan-out, or nil.
	Map *Map
	// WaitFor makes the node a join over the named nodes.
	WaitFor []string
	// Sources lists the nodes that hand control to this node by next/routes/default/map/catch.
	Sources []string
	// Cache is the compiled cache policy, or nil when the node always runs.
	Cache *Cache
	// Subgraph is the child graph a node of type subgraph runs, or nil.
	Subgraph *Subgraph
}

// Cache is a node's compiled cache policy: runs whose Key evaluates to equal
// values share the update stored by the first, for TTL (zero: forever).
type Cache struct {
	Key *expression.Program
	TTL time.Duration
}

// Route is a compiled conditional edge.
type Route struct {
	When *expression.Program
	To   string
}

// Map is a compiled fan-out: one task per item of Over's list, sent to To with
// the item visible under As.
type Map struct {
	Over *expression.Program
	To   string
	As   string
	// OnEmpty is "continue" or "error" (see graph.MapRoute).
	OnEmpty string
}

// compiler holds the state of one compilation.
type compiler struct {
	g     *graph.Graph
	opts  Options
	diags diag.List
	env   *expression.Env
	out   *Graph
	// nodes indexes the declared nodes by name (first declaration wins).
	nodes map[string]*graph.Node
	// mapItems lists, per node, the extra names its config sees as a map target.
	mapItems map[string][]string
	// assumed lists, per node, the nodes its misspelt targets most likely mean;
	// graph analysis follows them so that a typo is reported once, not again as
	// an unreachable node.
	assumed map[string][]string
	// unresolved marks nodes with an unknown target that resembles no node;
	// graph analysis does not report consequences of those.
	unresolved map[string]bool
	// enums holds the string enum of each field that declares one.
	enums map[string][]string
	// names and namesEnd are the declared node names in declaration order,
	// without and with END, made once (nodeNames).
	names, namesEnd []string
	// order indexes out.NodeOrder (inOrder).
	order map[string]int
	// suggested counts the candidates did-you-mean hints have compared
	// names with (see suggestBudget).
	suggested int
}

// Compile checks g and compiles it. It reports every problem it finds; the
// returned Graph is nil when any of them is an error.
func Compile(g *graph.Graph, opts Options) (*Graph, diag.List) {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	opts.Registry = opts.Registry.OrDefault()
	c := &compiler{
		g:          g,
		opts:       opts,
		env:        expression.NewEnv(g),
		nodes:      map[string]*graph.Node{},
		mapItems:   map[string][]string{},
		assumed:    map[string][]string{},
		unresolved: map[string]bool{},
		enums:      map[string][]string{},
		out: &Graph{
			Spec:     g,
			Fields:   map[string]*Field{},
			Nodes:    map[string]*Node{},
			Start:    g.Start,
			Registry: opts.Registry,
		},
	}
	c.out.Env = c.env
	c.compileFields()
	c.checkVars()
	c.indexNodes()
	c.checkStart()
	for _, n := range g.Nodes {
		if c.nodes[n.Name] != n {
			continue // a duplicate, already reported
		}
		c.compileNode(n)
	}
	c.fillSources()
	c.analyze()
	c.checkConcurrentWrites()
	c.checkEnvRefs()
	c.checkInlineSecrets()
	c.diags.Sort()
	if c.diags.HasErrors() {
		return nil, c.diags
	}
	return c.out, c.diags
}

// pos returns the position of a document path: the loader's record for the
// path itself, else fallback when valid, else the nearest enclosing record.
func (c *compiler) pos(path string, fallback diag.Pos) diag.Pos {
	if p, ok := c.g.Pos[path]; ok {
		return p
	}
	if fallback.IsValid() {
		return fallback
	}
	return c.g.PosOf(path)
}

// nearest returns the position of the nearest enclosing document path that has
// one, else fallback when valid, else the start of the file.
func (c *compiler) nearest(path string, fallback diag.Pos) diag.Pos {
	for p := path; p != ""; {
		if pos, ok := c.g.Pos[p]; ok {
			return pos
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	if fallback.IsValid() {
		return fallback
	}
	return c.g.PosOf(path)
}

func (c *compiler) errorf(pos diag.Pos, code, path, format string, args ...any) {
	c.diags.Errorf(pos, code, path, format, args...)
}

// quoteList formats names as "a", "b" and "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	switch len(q) {
	case 0:
		return "none"
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
