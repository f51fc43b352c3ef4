// Package nodetest builds and runs node types outside a compiled graph, for the
// unit tests of the builtin node packages.
//
// Its Builder is a complete node.Builder over the real expression compiler: it
// applies the node type's CUE config schema (closed, with defaults), decodes
// strictly, compiles expressions and templates against the graph's typed
// state, and records every reported problem with its config path and code so
// that a test can assert "code X at path Y".
package nodetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// Codes reported by the Builder itself, the same as runtime/compile reports
// (node types report their own codes).
const (
	CodeExpression = "expr-error"
	CodeTemplate   = "template-error"
	CodeSchema     = "invalid-config"
)

// Problem is one reported error or warning.
type Problem struct {
	Path    string
	Code    string
	Message string
	Warning bool
}

// String formats the problem for test failure messages.
func (p Problem) String() string {
	kind := "error"
	if p.Warning {
		kind = "warning"
	}
	return fmt.Sprintf("%s at %q [%s]: %s", kind, p.Path, p.Code, p.Message)
}

// Graph builds a graph from "name: type" declarations such as
// "symptoms: list<string>". Vars become the graph's vars.
func Graph(vars map[string]any, fields ...string) (*graph.Graph, error) {
	g := &graph.Graph{Name: "test", Vars: vars, Pos: map[string]diag.Pos{}}
	for _, decl := range fields {
		name, typ, ok := strings.Cut(decl, ":")
		if !ok {
			return nil, fmt.Errorf("field declaration %q: want \"name: type\"", decl)
		}
		t, err := graph.ParseType(typ)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		g.State = append(g.State, &graph.Field{Name: strings.TrimSpace(name), Type: t, TypeText: strings.TrimSpace(typ)})
	}
	return g, nil
}

// Builder implements node.Builder for one node.
type Builder struct {
	name   string
	g      *graph.Graph
	env    *expression.Env
	config map[string]any

	mu       sync.Mutex
	problems []Problem
}

// NewBuilder returns a Builder for a node named name with the given config,
// which is used as given (no schema applied).
func NewBuilder(g *graph.Graph, name string, config map[string]any) *Builder {
	if config == nil {
		config = map[string]any{}
	}
	return &Builder{name: name, g: g, env: expression.NewEnv(g), config: config}
}

// NodeName implements node.Builder.
func (b *Builder) NodeName() string { return b.name }

// Graph implements node.Builder.
func (b *Builder) Graph() *graph.Graph { return b.g }

// Config implements node.Builder.
func (b *Builder) Config() map[string]any { return b.config }

// Decode implements node.Builder: a strict JSON decode that rejects unknown keys.
func (b *Builder) Decode(v any) error {
	raw, err := json.Marshal(b.config)
	if err != nil {
		return fmt.Errorf("node %q: encode config: %w", b.name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("node %q: decode config: %w", b.name, err)
	}
	return nil
}

// Expr implements node.Builder.
func (b *Builder) Expr(path, src string, want graph.Kind) node.Expr {
	p, err := b.env.Compile(src, want)
	if err != nil {
		b.Errorf(path, CodeExpression, "%v", err)
		return nil
	}
	return p
}

// Template implements node.Builder.
func (b *Builder) Template(path, src string) node.Template {
	t, err := b.env.CompileTemplate(src)
	if err != nil {
		b.Errorf(path, CodeTemplate, "%v", err)
		return nil
	}
	return t
}

// Errorf implements node.Builder.
func (b *Builder) Errorf(path, code, format string, args ...any) {
	b.report(Problem{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Warnf implements node.Builder.
func (b *Builder) Warnf(path, code, format string, args ...any) {
	b.report(Problem{Path: path, Code: code, Message: fmt.Sprintf(format, args...), Warning: true})
}

func (b *Builder) report(p Problem) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, p)
}

// Failed implements node.Builder.
func (b *Builder) Failed() bool {
	for _, p := range b.Problems() {
		if !p.Warning {
			return true
		}
	}
	return false
}

// Problems returns every reported problem in report order.
func (b *Builder) Problems() []Problem {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Problem(nil), b.problems...)
}

// Has reports whether an error (not a warning) with code was reported at path.
func (b *Builder) Has(path, code string) bool {
	for _, p := range b.Problems() {
		if !p.Warning && p.Path == path && p.Code == code {
			return true
		}
	}
	return false
}

// Build looks up a registered node type, applies its CUE config schema to
// config (closed, defaults filled in) and calls its constructor. A schema
// violation is reported as CodeSchema at the config root and the constructor
// is not called.
func Build(g *graph.Graph, typeName, nodeName string, config map[string]any) (node.Node, *Builder, error) {
	t, ok := node.Lookup(typeName)
	if !ok {
		return nil, nil, fmt.Errorf("node type %q is not registered", typeName)
	}
	applied, err := ApplySchema(t.Config, config)
	if err != nil {
		b := NewBuilder(g, nodeName, config)
		b.Errorf("", CodeSchema, "%v", err)
		return nil, b, nil
	}
	b := NewBuilder(g, nodeName, applied)
	n, err := t.New(b)
	if err != nil {
		return nil, b, fmt.Errorf("build node %q of type %q: %w", nodeName, typeName, err)
	}
	if b.Failed() && n != nil {
		return nil, b, fmt.Errorf("node %q: constructor reported errors but returned a node", nodeName)
	}
	if !b.Failed() && n == nil {
		return nil, b, fmt.Errorf("node %q: constructor returned no node and reported nothing", nodeName)
	}
	return n, b, nil
}

// ApplySchema unifies config with the CUE struct schema as a closed
// definition, checks that the result is concrete, and returns it decoded with
// defaults filled in.
func ApplySchema(schema string, config map[string]any) (map[string]any, error) {
	if strings.TrimSpace(schema) == "" {
		schema = "{}"
	}
	if config == nil {
		config = map[string]any{}
	}
	ctx := cuecontext.New()
	def := ctx.CompileString("#Config: " + schema).LookupPath(cue.ParsePath("#Config"))
	if err := def.Err(); err != nil {
		return nil, fmt.Errorf("config schema %s: %w", schema, err)
	}
	v := def.Unify(ctx.Encode(config))
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, fmt.Errorf("config does not match schema: %w", err)
	}
	out := map[string]any{}
	if err := v.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode config: %w", err)
	}
	return out, nil
}

// Scope builds a run scope: every declared field at its value in state, or
// its default, or its type's zero value; "state"; and the graph's vars.
func Scope(g *graph.Graph, state map[string]any) map[string]any {
	st := map[string]any{}
	for _, f := range g.State {
		v, ok := state[f.Name]
		switch {
		case ok:
		case f.HasDefault:
			v = f.Default
		default:
			v = f.Type.Zero()
		}
		st[f.Name] = v
	}
	scope := map[string]any{}
	for k, v := range g.Vars {
		scope[k] = v
	}
	for k, v := range st {
		scope[k] = v
	}
	scope["state"] = st
	return scope
}

// Recorder collects emitted events; it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []event.Event
}

// Sink returns an event.Sink that records into r.
func (r *Recorder) Sink() event.Sink {
	return func(e event.Event) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, e)
	}
}

// Events returns the recorded events.
func (r *Recorder) Events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

// OfType returns the recorded events of one type.
func (r *Recorder) OfType(typ string) []event.Event {
	var out []event.Event
	for _, e := range r.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// Run runs n once with the scope built from state and returns its update and
// the events it emitted.
func Run(ctx context.Context, g *graph.Graph, n node.Node, nodeName string, state map[string]any) (node.Update, []event.Event, error) {
	rec := &Recorder{}
	scope := Scope(g, state)
	in := &node.Input{
		Node: nodeName, ThreadID: "t1", RunID: "r1", Step: 1, Attempt: 1,
		State: scope["state"].(map[string]any), Scope: scope,
		Emit: rec.Sink(), Services: &node.Services{},
	}
	up, err := n.Run(ctx, in)
	return up, rec.Events(), err
}
