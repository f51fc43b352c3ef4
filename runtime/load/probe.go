package load

import (
	"sort"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"github.com/graphctl/graphctl/runtime/diag"
)

// Costly returns the positions, in source order, of the expressions of a
// graph's files whose evaluation can grow without bound: comprehensions,
// calls that build sequences (list.Range, list.Repeat, strings.Repeat) and
// multiplications (a string or list times a number). CUE evaluation cannot
// be interrupted or attributed to an expression while it runs, so when a
// supervisor (package load/evalguard) stops an evaluation at a time or
// memory limit, these are the places it names. Files that do not parse have
// none.
func Costly(files []SourceFile) []diag.Pos {
	var out []diag.Pos
	for _, f := range files {
		if isYAML(f.Name) || len(f.Data) > MaxFileSize {
			continue // YAML is data: nothing in it grows
		}
		data := normalizeSource(f.Name, f.Data)
		af, d := parseFile(f.Name, data)
		if d.HasErrors() || af == nil {
			continue
		}
		x := &posIndex{pos: map[string]diag.Pos{}, literals: map[string]string{}, labels: map[string]diag.Pos{}, srcs: map[string][]byte{f.Name: data}}
		ast.Walk(af, func(n ast.Node) bool {
			if costly(n) {
				out = append(out, x.at(n.Pos()))
				return false // the outermost costly expression names its parts
			}
			return true
		}, nil)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return false
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return out
}

func costly(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.Comprehension:
		return true
	case *ast.BinaryExpr:
		return n.Op == token.MUL
	case *ast.CallExpr:
		if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
			if name, _, err := ast.LabelName(sel.Sel); err == nil {
				switch name {
				case "Range", "Repeat":
					return true
				}
			}
		}
	}
	return false
}
