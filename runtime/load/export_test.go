package load

import (
	"cuelang.org/go/cue/ast"
	"github.com/graphctl/graphctl/runtime/graphschema"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// LoadEvaluated loads files with the CUE evaluator alone.
func LoadEvaluated(files []SourceFile) (*graph.Graph, diag.List) {
	return loadWith(node.Default(), files, true)
}

// LoadsPlain reports whether files load without the CUE evaluator.
func LoadsPlain(files []SourceFile) bool {
	l := &loader{
		idx:          &posIndex{pos: map[string]diag.Pos{}, literals: map[string]string{}, labels: map[string]diag.Pos{}, srcs: map[string][]byte{}},
		userFiles:    map[string]bool{},
		plainConfigs: map[string]*schema{},
		registry:     node.Default(),
	}
	var asts []*ast.File
	for _, f := range files {
		data := normalizeSource(f.Name, f.Data)
		l.idx.srcs[f.Name] = data
		af, d := parseFile(f.Name, data)
		if d.HasErrors() {
			return false
		}
		asts = append(asts, af)
	}
	for _, af := range asts {
		l.idx.indexFile(af)
	}
	if len(l.idx.diags) > 0 {
		return false
	}
	return l.loadPlain(asts, &graph.Graph{})
}

// UnsupportedConfigSchemas lists the node types of reg whose config schema
// is beyond plain checking.
func UnsupportedConfigSchemas(reg *node.Registry) []string {
	var out []string
	for _, name := range reg.Names() {
		t, _ := reg.Lookup(name)
		if s, err := compileSchemaExpr(graphschema.ConfigSchema(t)); err != nil || s.op != opStruct {
			out = append(out, name)
		}
	}
	return out
}

// ConfigFields lists the fields a node type's config schema declares, as
// far as it is within plain checking.
func ConfigFields(t node.Type) []string {
	s, err := compileSchemaExpr(graphschema.ConfigSchema(t))
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range s.fields {
		out = append(out, f.name)
	}
	return out
}
