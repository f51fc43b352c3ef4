// Package schemas owns the CUE schema of a graph file and derives from it the
// documents tools need: the full CUE schema including every registered node
// type's config (`graphctl schema --format cue`), a JSON Schema of the same
// (for editors), and the field list of a node type's config (`graphctl nodes`).
//
// The graph schema is graph.cue, embedded in the binary as GraphCUE. Its
// top-level definition #Graph is what runtime/load unifies user files with.
package schemas

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/encoding/jsonschema"

	"github.com/graphctl/graphctl/runtime/node"
)

// GraphCUE is the CUE source of the graph-file schema (definition #Graph).
//
//go:embed graph.cue
var GraphCUE string

// GraphFilename is the file name the embedded schema is compiled under. Errors
// positioned in it are never shown to users.
const GraphFilename = "graphctl:schemas/graph.cue"

// ConfigSchema returns the CUE expression a node type's config must satisfy:
// its declared Config, or an empty struct when the type takes no config.
func ConfigSchema(t node.Type) string {
	if strings.TrimSpace(t.Config) == "" {
		return "{}"
	}
	return t.Config
}

// Full returns one CUE document: the graph schema plus #NodeConfig, holding
// each node type's config schema by type name, and a refinement of #Node that
// ties a node's type to its config. `cue vet -d '#Graph'` can check graph
// files with it.
func Full(types []node.Type) (string, error) {
	var b strings.Builder
	b.WriteString(GraphCUE)
	b.WriteString("\n// #NodeConfig holds the config schema of each registered node type.\n#NodeConfig: {\n")
	for _, t := range types {
		fmt.Fprintf(&b, "\t%s: %s\n", literal.String.Quote(t.Name), ConfigSchema(t))
	}
	b.WriteString("}\n")
	if len(types) > 0 {
		b.WriteString("\n// A node's config is checked against the schema of its type.\n#Node: ")
		for i, t := range types {
			if i > 0 {
				b.WriteString(" | ")
			}
			q := literal.String.Quote(t.Name)
			fmt.Fprintf(&b, "{type!: %s, config?: #NodeConfig[%s]}", q, q)
		}
		b.WriteString("\n")
	}
	src := []byte(b.String())
	formatted, err := format.Source(src)
	if err != nil {
		return "", fmt.Errorf("schemas: formatting the full schema: %w", err)
	}
	ctx := cuecontext.New()
	v := ctx.CompileBytes(formatted, cue.Filename("schema.cue"))
	if err := v.Err(); err != nil {
		return "", fmt.Errorf("schemas: the full schema does not compile (a node type's config schema is invalid?): %w", err)
	}
	if err := v.Validate(); err != nil {
		return "", fmt.Errorf("schemas: the full schema is invalid: %w", err)
	}
	return string(formatted), nil
}

// JSONSchema returns a JSON Schema (draft 2020-12) of a whole graph file,
// including the config schema of each of the given node types.
//
// The graph schema and each config schema are generated separately with
// CUE's JSON Schema generator, then joined: a node's schema gains one
// if/then pair per node type ("if type is X then config matches X's schema").
// Generating from the full CUE document at once is avoided because the
// generator does not terminate on the #Node disjunction.
func JSONSchema(types []node.Type) ([]byte, error) {
	ctx := cuecontext.New()
	root := ctx.CompileString(GraphCUE, cue.Filename(GraphFilename))
	if err := root.Err(); err != nil {
		return nil, fmt.Errorf("schemas: compiling the graph schema: %w", err)
	}
	doc, err := generate(ctx, root.LookupPath(cue.ParsePath("#Graph")))
	if err != nil {
		return nil, fmt.Errorf("schemas: JSON Schema of the graph: %w", err)
	}
	nodeSchema, err := findNodeSchema(doc)
	if err != nil {
		return nil, err
	}
	// Open structs ({...}) are generated as "const": {}; state them as
	// objects. (The graph schema has no closed empty struct.)
	openObjects(doc)
	var rules []any
	for _, t := range types {
		v := ctx.CompileString("#C: "+ConfigSchema(t)+"\n", cue.Filename("graphctl:nodetype/"+t.Name+".cue"))
		if err := v.Err(); err != nil {
			return nil, fmt.Errorf("schemas: config schema of node type %q: %w", t.Name, err)
		}
		cfg, err := generate(ctx, v.LookupPath(cue.ParsePath("#C")))
		if err != nil {
			return nil, fmt.Errorf("schemas: JSON Schema of node type %q: %w", t.Name, err)
		}
		delete(cfg, "$schema")
		if ConfigSchema(t) != "{}" { // a type without config takes exactly {}
			openObjects(cfg)
		}
		rules = append(rules, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"type": map[string]any{"const": t.Name}}, "required": []any{"type"}},
			"then": map[string]any{"properties": map[string]any{"config": cfg}},
		})
	}
	if len(types) > 0 {
		names := make([]any, len(types))
		for i, t := range types {
			names[i] = t.Name
		}
		rules = append(rules, map[string]any{"properties": map[string]any{"type": map[string]any{"enum": names}}})
		nodeSchema["allOf"] = rules
	}
	doc["title"] = "graphctl graph file"
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("schemas: encoding the JSON Schema: %w", err)
	}
	return out, nil
}

// openObjects replaces every `"const": {}` in a generated schema, which is how
// the generator renders an open struct ({...}), with `"type": "object"`.
func openObjects(v any) {
	switch x := v.(type) {
	case map[string]any:
		if c, ok := x["const"].(map[string]any); ok && len(c) == 0 {
			delete(x, "const")
			x["type"] = "object"
		}
		for _, item := range x {
			openObjects(item)
		}
	case []any:
		for _, item := range x {
			openObjects(item)
		}
	}
}

// generate converts one CUE schema value to a JSON Schema object.
func generate(ctx *cue.Context, v cue.Value) (map[string]any, error) {
	expr, err := jsonschema.Generate(v, &jsonschema.GenerateConfig{Version: jsonschema.VersionDraft2020_12})
	if err != nil {
		return nil, fmt.Errorf("generating: %w", err)
	}
	built := ctx.BuildExpr(expr)
	if err := built.Err(); err != nil {
		return nil, fmt.Errorf("building the generated schema: %w", err)
	}
	raw, err := built.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the generated schema: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("the generated schema is not a JSON object: %w", err)
	}
	return doc, nil
}

// findNodeSchema returns the JSON Schema object that describes one node: the
// target of nodes' patternProperties/additionalProperties, following $ref.
func findNodeSchema(doc map[string]any) (map[string]any, error) {
	resolve := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/$defs/") {
			defs, _ := doc["$defs"].(map[string]any)
			m, _ = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		return m
	}
	props, _ := doc["properties"].(map[string]any)
	nodes := resolve(props["nodes"])
	if n := resolve(nodes["additionalProperties"]); n != nil {
		return n, nil
	}
	// Node names are a pattern: state it as propertyNames so that every
	// node's schema is nodes.additionalProperties, where editors look for it.
	if pp, ok := nodes["patternProperties"].(map[string]any); ok && len(pp) == 1 {
		for pattern, v := range pp {
			if n := resolve(v); n != nil {
				nodes["propertyNames"] = map[string]any{"pattern": pattern}
				nodes["additionalProperties"] = v
				delete(nodes, "patternProperties")
				return n, nil
			}
		}
	}
	return nil, fmt.Errorf("schemas: the generated JSON Schema has no schema for nodes")
}

// ConfigField describes one field of a node type's config.
type ConfigField struct {
	// Name is the field's key.
	Name string
	// Type is the field's CUE type, e.g. `string` or `"assistant" | "system"`.
	Type string
	// Required says whether the field must be given.
	Required bool
	// Default is the field's default value in CUE syntax, or "".
	Default string
}

// ConfigFields lists the top-level fields of a node type's config schema in
// declaration order.
func ConfigFields(t node.Type) ([]ConfigField, error) {
	ctx := cuecontext.New()
	v := ctx.CompileString("#C: "+ConfigSchema(t), cue.Filename("nodetype/"+t.Name+".cue"))
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("schemas: config schema of node type %q: %w", t.Name, err)
	}
	c := v.LookupPath(cue.ParsePath("#C"))
	it, err := c.Fields(cue.Optional(true))
	if err != nil {
		return nil, fmt.Errorf("schemas: config schema of node type %q is not a struct: %w", t.Name, err)
	}
	var out []ConfigField
	for it.Next() {
		sel := it.Selector()
		fv := it.Value()
		f := ConfigField{
			Name:     sel.Unquoted(),
			Required: sel.ConstraintType() != cue.OptionalConstraint,
		}
		if d, ok := fv.Default(); ok && d.IsConcrete() {
			f.Default = formatValue(d)
			f.Required = false
		}
		f.Type = typeText(fv)
		out = append(out, f)
	}
	return out, nil
}

// typeText renders a schema value as CUE, without the default marker, on one line.
func typeText(v cue.Value) string {
	op, args := v.Expr()
	if op == cue.OrOp {
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = formatValue(a)
		}
		return strings.Join(parts, " | ")
	}
	return formatValue(v)
}

func formatValue(v cue.Value) string {
	s := fmt.Sprint(v)
	return strings.Join(strings.Fields(s), " ")
}
