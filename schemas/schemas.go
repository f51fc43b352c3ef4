// Package schemas owns the published schema documents of a graph file, derived
// from the graph schema (runtime/graphschema) and the registered node types:
// the full CUE schema including every node type's config (`graphctl schema
// --format cue`), a JSON Schema of the same (for editors), the field list of a
// node type's config (`graphctl nodes`), and the generated tables of
// docs/graph-file.md, which its tests keep in step.
package schemas

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/encoding/jsonschema"

	"github.com/graphctl/graphctl/runtime/graphschema"
	"github.com/graphctl/graphctl/runtime/node"
)

// Full returns one CUE document: the graph schema plus #NodeConfig, holding
// each node type's config schema by type name, and a refinement of #Node that
// ties a node's type to its config. `cue vet -d '#Graph'` can check graph
// files with it.
func Full(types []node.Type) (string, error) {
	var b strings.Builder
	b.WriteString(graphschema.Source())
	b.WriteString("\n// #NodeConfig holds the config schema of each registered node type.\n#NodeConfig: {\n")
	for _, t := range types {
		fmt.Fprintf(&b, "\t%s: %s\n", literal.String.Quote(t.Name), graphschema.ConfigSchema(t))
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
//
// Each config property's description says how the node reads its strings
// (see ConfigReads): reads gives the findings by node type name; a type
// missing from it is probed with no overrides.
func JSONSchema(types []node.Type, reads ReadsByType) ([]byte, error) {
	ctx := cuecontext.New()
	root := ctx.CompileString(graphschema.Source(), cue.Filename(graphschema.GraphFilename))
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
		v := ctx.CompileString("#C: "+graphschema.ConfigSchema(t)+"\n", cue.Filename("graphctl:nodetype/"+t.Name+".cue"))
		if err := v.Err(); err != nil {
			return nil, fmt.Errorf("schemas: config schema of node type %q: %w", t.Name, err)
		}
		cfg, err := generate(ctx, v.LookupPath(cue.ParsePath("#C")))
		if err != nil {
			return nil, fmt.Errorf("schemas: JSON Schema of node type %q: %w", t.Name, err)
		}
		delete(cfg, "$schema")
		if err := describeReads(t, cfg, reads); err != nil {
			return nil, err
		}
		if graphschema.ConfigSchema(t) != "{}" { // a type without config takes exactly {}
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

// ReadsByType holds ConfigReads findings by node type name.
type ReadsByType map[string]map[string][]string

// describeReads adds to the description of each property of a config's JSON
// Schema how the node reads the strings there.
func describeReads(t node.Type, cfg map[string]any, reads ReadsByType) error {
	r, ok := reads[t.Name]
	if !ok {
		var err error
		if r, err = ConfigReads(t, nil); err != nil {
			return err
		}
	}
	fields, err := ConfigFields(t, r)
	if err != nil {
		return err
	}
	props, _ := cfg["properties"].(map[string]any)
	for _, f := range fields {
		prop, _ := props[f.Name].(map[string]any)
		if prop == nil || f.Reads == "" {
			continue
		}
		text := "A string here is read as: " + f.Reads + " (" + readsGlossary(f.Reads) + ")."
		if d, _ := prop["description"].(string); d != "" {
			text = d + "\n" + text
		}
		prop["description"] = text
	}
	return nil
}

// readsGlossary explains the ways of reading a string that a reads text names.
func readsGlossary(reads string) string {
	var out []string
	for _, how := range []string{ReadsTemplate, ReadsExpression, ReadsField, ReadsLiteral} {
		if strings.Contains(reads, how) {
			out = append(out, how+": "+ReadsWords[how])
		}
	}
	return strings.Join(out, "; ")
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
	Name string `json:"name"`
	// Type says what the field accepts in the graph file's terms, e.g. "an
	// int greater than 0" or `one of "assistant", "system"`.
	Type string `json:"type"`
	// Schema is the field's CUE schema, e.g. `*5 | int & >0`.
	Schema string `json:"schema"`
	// Required says whether the field must be given.
	Required bool `json:"required"`
	// Default is the field's default value as JSON, or "".
	Default string `json:"default,omitempty"`
	// Reads says how the node reads the field's strings (see ConfigReads):
	// "template", "expression", "field", "literal", or for a list or an
	// object, how its items or keys and values are read. Empty for a field
	// holding no strings.
	Reads string `json:"reads,omitempty"`
	// Description is the schema's comment on the field, if any.
	Description string `json:"description,omitempty"`
}

// ConfigFields lists the top-level fields of a node type's config schema in
// declaration order, with how each field's strings are read (reads, from
// ConfigReads; nil leaves Reads empty).
func ConfigFields(t node.Type, reads map[string][]string) ([]ConfigField, error) {
	ctx := cuecontext.New()
	v := ctx.CompileString("#C: "+graphschema.ConfigSchema(t), cue.Filename("nodetype/"+t.Name+".cue"))
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
			Type:     graphschema.DescribeNoDefault(fv),
			Schema:   typeText(fv),
		}
		if d, ok := fv.Default(); ok && graphschema.IsConcrete(d) {
			f.Default = graphschema.Literal(d)
			f.Required = false
		}
		if reads != nil {
			f.Reads = readsText(fv, reads, f.Name)
		}
		for _, doc := range fv.Doc() {
			f.Description = strings.TrimSpace(doc.Text())
		}
		out = append(out, f)
	}
	return out, nil
}

// readsText says how the strings of a config field are read, from the
// probe's findings under its path; fields of a string type that the node
// neither compiles nor looks up are read literally.
func readsText(v cue.Value, reads map[string][]string, key string) string {
	var parts []string
	for _, path := range sortedPaths(reads, key) {
		hows := reads[path]
		rest := strings.TrimPrefix(strings.TrimPrefix(path, key), ".")
		switch {
		case rest == "":
			parts = append(parts, strings.Join(hows, " or "))
		case rest == "*" || strings.HasSuffix(rest, ".*"):
			// A field lookup under a free key is about the key.
			prefix := strings.TrimSuffix(strings.TrimSuffix(rest, "*"), ".")
			if prefix != "" {
				prefix += " "
			}
			var values []string
			for _, h := range hows {
				if h == ReadsField {
					parts = append(parts, prefix+"keys: "+ReadsField)
				} else {
					values = append(values, h)
				}
			}
			if len(values) > 0 {
				parts = append(parts, prefix+"values: "+strings.Join(values, " or "))
			}
		case rest == "0" || strings.HasPrefix(rest, "0."):
			item := strings.TrimPrefix(strings.TrimPrefix(rest, "0"), ".")
			if item == "" {
				parts = append(parts, "each item: "+strings.Join(hows, " or "))
			} else {
				parts = append(parts, "each item's "+strings.ReplaceAll(item, ".0.", "[]. ")+": "+strings.Join(hows, " or "))
			}
		default:
			parts = append(parts, strings.ReplaceAll(rest, "*", "KEY")+": "+strings.Join(hows, " or "))
		}
	}
	if len(parts) == 0 {
		if v.IncompleteKind()&cue.StringKind != 0 {
			return ReadsLiteral
		}
		if elem := v.LookupPath(cue.MakePath(cue.AnyIndex)); elem.Exists() && elem.IncompleteKind() == cue.StringKind {
			return "each item: " + ReadsLiteral
		}
	}
	return strings.Join(parts, "; ")
}

// sortedPaths lists the probed paths at or under key.
func sortedPaths(reads map[string][]string, key string) []string {
	var out []string
	for path := range reads {
		if path == key || strings.HasPrefix(path, key+".") {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out
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
