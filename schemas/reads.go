package schemas

import (
	"encoding/json"
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/graphschema"
	"github.com/graphctl/graphctl/runtime/node"
)

// How a node type reads a string of its config.
const (
	// ReadsLiteral: the string is used as written.
	ReadsLiteral = "literal"
	// ReadsExpression: an expr-lang expression over the state, e.g. `len(messages) > 0`.
	ReadsExpression = "expression"
	// ReadsTemplate: text with ${expr} interpolations, e.g. "Hello ${name}".
	ReadsTemplate = "template"
	// ReadsField: the name of a state field.
	ReadsField = "field"
)

// ReadsWords says what each way of reading a string means, for documents.
var ReadsWords = map[string]string{
	ReadsLiteral:    "used as written",
	ReadsExpression: "an expression over the state (expr-lang), e.g. `len(messages) > 0`",
	ReadsTemplate:   "a template: text with ${expr} interpolations, e.g. \"Hello ${name}\"",
	ReadsField:      "the name of a state field",
}

// patternKey is the key the probe gives a struct whose keys are free
// (`[string]: …`); paths through it are reported with "*".
const patternKey = "probe_key"

// ConfigReads tells how a node type reads the strings of its config, by
// config path ("text", "set.*", "namespace.*"): it builds the type once with
// a sample config (every string a made-up name, every other value valid)
// against a graph with no state fields, and records which strings the
// constructor compiles as expressions or templates and which it looks up as
// state fields. Strings it does neither with are literal. The probe learns
// from the constructor itself, so the answer cannot drift from the code.
//
// overrides replace top-level values of the sample, for a type that needs a
// real value somewhere to go on (the tool node needs a registered tool).
func ConfigReads(t node.Type, overrides map[string]any) (map[string][]string, error) {
	ctx := cuecontext.New()
	v := ctx.CompileString("#C: "+graphschema.ConfigSchema(t), cue.Filename("nodetype/"+t.Name+".cue"))
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("schemas: config schema of node type %q: %w", t.Name, err)
	}
	schema := v.LookupPath(cue.ParsePath("#C"))
	sample, _ := sampleOf(ctx, schema, "").(map[string]any)
	if sample == nil {
		sample = map[string]any{}
	}
	for k, v := range overrides {
		sample[k] = v
	}
	// Against a graph with no fields, which shows the strings looked up as
	// fields, then against one declaring every made-up name, so that code
	// behind a field lookup (the expression of set's value) runs too; with
	// the whole sample, then without each optional key in turn, for what a
	// node reads only when another key is absent (messages_field when no
	// query is given).
	reads := map[string][]string{}
	var fields []*graph.Field
	for _, name := range sampleStrings(sample) {
		fields = append(fields, &graph.Field{Name: name, Type: graph.Type{Kind: graph.Any}, TypeText: "any"})
	}
	configs := []map[string]any{sample}
	if it, err := schema.Fields(cue.Optional(true)); err == nil {
		for it.Next() {
			key := graphschema.SelectorName(it.Selector())
			if _, has := sample[key]; !has || it.Selector().ConstraintType() != cue.OptionalConstraint || overrides[key] != nil {
				continue
			}
			without := make(map[string]any, len(sample))
			for k, v := range sample {
				if k != key {
					without[k] = v
				}
			}
			configs = append(configs, without)
		}
	}
	for _, cfg := range configs {
		p := &probe{cfg: cfg, reads: reads, learnFields: true}
		p.build(t)
		p.g.State = fields
		p.learnFields = false
		p.build(t)
	}
	p := &probe{reads: reads}
	out := map[string][]string{}
	for path, hows := range p.reads {
		out[strings.ReplaceAll(path, patternKey, "*")] = hows
	}
	return out, nil
}

// sampleOf builds a value the schema accepts, with a made-up name for every
// string that may be any string.
func sampleOf(ctx *cue.Context, v cue.Value, path string) any {
	name := "probe_" + strings.NewReplacer(".", "_", "*", "x").Replace(path)
	accepts := func(x any) bool {
		return v.Unify(ctx.Encode(x)).Validate(cue.Concrete(true)) == nil
	}
	k := v.IncompleteKind()
	switch {
	case k&cue.StringKind != 0 && accepts(name):
		return name
	case k&cue.StructKind != 0:
		out := map[string]any{}
		if it, err := v.Fields(cue.Optional(true)); err == nil {
			for it.Next() {
				key := graphschema.SelectorName(it.Selector())
				if x := sampleOf(ctx, it.Value(), join(path, key)); x != nil {
					out[key] = x
				}
			}
		}
		if pv := v.LookupPath(cue.MakePath(cue.AnyString)); pv.Exists() {
			if x := sampleOf(ctx, pv, join(path, patternKey)); x != nil {
				out[patternKey] = x
			}
		}
		if k == cue.StructKind || accepts(out) {
			return out // best effort: fields that depend on each other may not all fit
		}
	case k&cue.ListKind != 0:
		if ev := v.LookupPath(cue.MakePath(cue.AnyIndex)); ev.Exists() {
			list := []any{sampleOf(ctx, ev, join(path, "0"))}
			if accepts(list) {
				return list
			}
		}
		if first := v.LookupPath(cue.MakePath(cue.Index(0))); first.Exists() {
			list := []any{sampleOf(ctx, first, join(path, "0"))}
			if accepts(list) {
				return list
			}
		}
	}
	if d, ok := v.Default(); ok && graphschema.IsConcrete(d) {
		var x any
		if b, err := d.MarshalJSON(); err == nil && json.Unmarshal(b, &x) == nil {
			return x
		}
	}
	if op, args := v.Expr(); op == cue.OrOp {
		for _, a := range args {
			if graphschema.IsConcrete(a) {
				var x any
				if b, err := a.MarshalJSON(); err == nil && json.Unmarshal(b, &x) == nil {
					return x
				}
			}
		}
	}
	for _, x := range []any{1, 1.5, true, name, map[string]any{}, []any{}} {
		if accepts(x) {
			return x
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// probe is the Builder a node type is built with by ConfigReads.
type probe struct {
	cfg   map[string]any
	reads map[string][]string
	g     graph.Graph
	// learnFields is set while the graph declares no fields.
	learnFields bool
}

// build runs the constructor; a constructor confused by made-up values
// teaches nothing more, even by panicking.
func (p *probe) build(t node.Type) {
	defer func() { _ = recover() }()
	_, _ = t.New(p)
}

// sampleStrings lists the strings and keys of a sample config.
func sampleStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case map[string]any:
		for k, item := range x {
			out = append(out, k)
			out = append(out, sampleStrings(item)...)
		}
	case []any:
		for _, item := range x {
			out = append(out, sampleStrings(item)...)
		}
	}
	return out
}

func (p *probe) NodeName() string                     { return "probe" }
func (p *probe) Graph() *graph.Graph                  { return &p.g }
func (p *probe) Config() map[string]any               { return p.cfg }
func (p *probe) Warnf(string, string, string, ...any) {}
func (p *probe) Failed() bool                         { return false }

func (p *probe) Decode(v any) error {
	b, err := json.Marshal(p.cfg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (p *probe) Expr(path, src string, _ graph.Kind) node.Expr {
	p.note(path, ReadsExpression)
	return probeValue(src)
}

func (p *probe) Template(path, src string) node.Template {
	p.note(path, ReadsTemplate)
	return probeValue(src)
}

func (p *probe) Errorf(path, code, _ string, _ ...any) {
	if code == "unknown-field" && p.learnFields {
		p.note(path, ReadsField)
	}
}

func (p *probe) note(path, how string) {
	for _, h := range p.reads[path] {
		if h == how {
			return
		}
	}
	p.reads[path] = append(p.reads[path], how)
}

// probeValue stands for a compiled expression or template.
type probeValue string

func (v probeValue) Eval(map[string]any) (any, error)      { return nil, nil }
func (v probeValue) Render(map[string]any) (string, error) { return "", nil }
func (v probeValue) Source() string                        { return string(v) }
