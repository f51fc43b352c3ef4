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
// including the config schema of each of the given node types, generated from
// the full CUE schema.
func JSONSchema(types []node.Type) ([]byte, error) {
	src, err := Full(types)
	if err != nil {
		return nil, err
	}
	ctx := cuecontext.New()
	root := ctx.CompileString(src, cue.Filename("schema.cue"))
	if err := root.Err(); err != nil {
		return nil, fmt.Errorf("schemas: compiling the full schema: %w", err)
	}
	g := root.LookupPath(cue.ParsePath("#Graph"))
	expr, err := jsonschema.Generate(g, &jsonschema.GenerateConfig{Version: jsonschema.VersionDraft2020_12})
	if err != nil {
		return nil, fmt.Errorf("schemas: generating the JSON Schema: %w", err)
	}
	v := ctx.BuildExpr(expr)
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("schemas: building the generated JSON Schema: %w", err)
	}
	raw, err := v.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("schemas: encoding the JSON Schema: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schemas: the generated JSON Schema is not a JSON object: %w", err)
	}
	doc["title"] = "graphctl graph file"
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("schemas: encoding the JSON Schema: %w", err)
	}
	return out, nil
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
