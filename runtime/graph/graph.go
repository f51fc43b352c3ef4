// Package graph is the in-memory model of a graph file: its state schema, nodes,
// routing and tests, each element carrying the position it was declared at so
// that later stages can report problems at the right file:line:col.
//
// The model is produced by runtime/load from CUE or YAML and consumed by
// runtime/compile. It holds no behaviour beyond small accessors.
package graph

import (
	"time"

	"github.com/graphctl/graphctl/runtime/diag"
)

// DSLVersion is the graph-file format version this build of graphctl reads.
const DSLVersion = "graphctl/v1"

// End is the name of the virtual terminal node.
const End = "END"

// Graph is one graph file, loaded but not yet compiled.
type Graph struct {
	// File is the path the graph was loaded from.
	File string
	// Hash is the hex SHA-256 of the graph's canonical JSON form (tests excluded).
	Hash string

	DSLVersion  string
	Name        string
	Version     string
	Description string

	// State lists the state fields in declaration order.
	State []*Field
	// Vars are named constants available to every expression and template.
	Vars map[string]any
	// Start is the entry node.
	Start string
	// Nodes lists the nodes in declaration order.
	Nodes []*Node
	// Defaults holds graph-wide settings.
	Defaults Defaults
	// Tests are the declarative test cases of the graph, kept as decoded JSON.
	Tests []map[string]any
	// TestsPos is the position of each test case, by index.
	TestsPos []diag.Pos

	// Pos maps a document path ("nodes.extract.config.fields.model") to the position
	// of the value there. It lets any stage report a problem at a config value.
	Pos map[string]diag.Pos
	// Literals maps the path of a single-line string value written with escape
	// sequences to its source text between the quotes, so that an offset in
	// the decoded string maps back to its column in the file.
	Literals map[string]string
}

// Defaults are graph-wide run settings.
type Defaults struct {
	// RecursionLimit bounds the number of super-steps in one run (default 25).
	RecursionLimit int
	// MaxConcurrency bounds how many nodes of one super-step run at once (default 8).
	MaxConcurrency int
	// CallRetry is how every model and tool call of a node is retried on a
	// transient failure (defaults.call_retry); nil leaves the callers' default.
	CallRetry *RetryPolicy
	// Raw holds every key of the defaults block as decoded JSON, for node types
	// that read their own graph-wide settings (the keys node packages declare
	// with RegisterDefaultsKey).
	Raw map[string]any
}

// Field is one declared state field.
type Field struct {
	Name     string
	Type     Type
	TypeText string
	Reducer  string
	// ReducerExpr is a user-defined reducer: an expression over old and new.
	ReducerExpr string
	Default     any
	HasDefault  bool
	Enum        []any
	Description string
	Pos         diag.Pos
}

// Node is one declared node.
type Node struct {
	Name string
	Type string
	// Config is the node type's configuration as decoded JSON (maps, lists, strings,
	// float64 or int64 numbers, bools).
	Config map[string]any

	// Next lists the nodes to run after this one; more than one is a parallel fan-out.
	Next []string
	// Routes are ordered conditional edges; the first whose When holds wins.
	Routes []Route
	// Default is the target when no route matches. Required with Routes.
	Default string
	// Map fans out one task per item of a list into a node (LangGraph's Send).
	Map *MapRoute
	// WaitFor makes the node a join: it runs once all the named nodes have completed.
	WaitFor []string

	Timeout time.Duration
	Retry   *RetryPolicy
	// CallRetry is how each model and tool call the node makes is retried on
	// a transient failure (call_retry); nil means the graph's defaults.call_retry.
	CallRetry *RetryPolicy
	Catch     []Catch
	// Cache makes the node reuse the update stored for an equal key; nil
	// means the node always runs.
	Cache *Cache

	Description string
	Pos         diag.Pos
}

// Cache is a node's cache policy (cache: {key, ttl}).
type Cache struct {
	// Key is an expression over the state; equal values share a stored update.
	Key    string
	KeyPos diag.Pos
	// TTL is how long a stored update is reused; zero means forever.
	TTL time.Duration
}

// Route is one conditional edge.
type Route struct {
	When    string
	To      string
	WhenPos diag.Pos
	ToPos   diag.Pos
}

// MapRoute fans out over the items of a list.
type MapRoute struct {
	// Over is an expression yielding a list.
	Over string
	// To is the node each item is sent to.
	To string
	// As is the name under which the item is visible to the target node (default "item").
	As string
	// OnEmpty says what an empty list does: "continue" (the default) goes on
	// as if the target had run for no item, so joins after it run with an
	// empty result; "error" fails the run.
	OnEmpty string
	OverPos diag.Pos
	ToPos   diag.Pos
}

// RetryPolicy says how a failing node is retried.
type RetryPolicy struct {
	MaxAttempts     int
	InitialInterval time.Duration
	Backoff         float64
	MaxInterval     time.Duration
	Jitter          bool
	// On lists the error codes that are retried; empty means every retryable error.
	On []string
	// MaxRetryAfter bounds how long a call waits when the server asks it to
	// come back later (Retry-After); call retry policies only.
	MaxRetryAfter time.Duration
}

// Catch routes a node's failure with a matching error code to another node.
type Catch struct {
	On  []string
	To  string
	Pos diag.Pos
}

// Field returns the declared state field with the given name, or nil.
func (g *Graph) Field(name string) *Field {
	for _, f := range g.State {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Node returns the declared node with the given name, or nil.
func (g *Graph) Node(name string) *Node {
	for _, n := range g.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// PosOf returns the position recorded for a document path, walking up to the
// nearest enclosing path that has one. It never returns a position outside the file.
func (g *Graph) PosOf(path string) diag.Pos {
	for p := path; ; {
		if pos, ok := g.Pos[p]; ok {
			return pos
		}
		i := lastDot(p)
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return diag.Pos{File: g.File, Line: 1, Col: 1}
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// Targets returns every node name this node can hand control to, including END.
func (n *Node) Targets() []string {
	var out []string
	out = append(out, n.Next...)
	for _, r := range n.Routes {
		out = append(out, r.To)
	}
	if n.Default != "" {
		out = append(out, n.Default)
	}
	if n.Map != nil {
		out = append(out, n.Map.To)
	}
	for _, c := range n.Catch {
		out = append(out, c.To)
	}
	return out
}
