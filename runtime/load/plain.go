package load

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	cuelit "cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
)

// A graph file that is plain data — fields, strings, numbers, booleans, null,
// lists and structs, with no references, imports, comprehensions, operators,
// definitions or constraints — evaluates in time and memory bounded by its
// size: there is nothing to expand. Such a file is decoded here from its
// syntax tree, without the CUE evaluator. Everything else (and anything this
// decoder is unsure of) is left to the evaluator.

// object is a decoded struct: its fields in the order they were written.
type object struct {
	keys []string
	vals map[string]any
}

func newObject(n int) *object {
	return &object{keys: make([]string, 0, n), vals: make(map[string]any, n)}
}

// get returns the field name and whether it is present.
func (o *object) get(name string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[name]
	return v, ok
}

// set adds or replaces a field, keeping the order of first appearance.
func (o *object) set(name string, v any) {
	if _, ok := o.vals[name]; !ok {
		o.keys = append(o.keys, name)
	}
	o.vals[name] = v
}

// plainFile decodes the declarations of a file that is plain data.
func plainFile(f *ast.File) (*object, bool) {
	o := newObject(len(f.Decls))
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.Package, *ast.CommentGroup:
		case *ast.Field:
			if !plainField(o, d) {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return o, true
}

// plainField decodes one field into o; the values of a label written twice
// are unified.
func plainField(o *object, f *ast.Field) bool {
	if f.Constraint != token.ILLEGAL || len(f.Attrs) > 0 {
		return false
	}
	name, ok := plainLabel(f.Label)
	if !ok {
		return false
	}
	v, ok := plainExpr(f.Value)
	if !ok {
		return false
	}
	if prev, dup := o.vals[name]; dup {
		if v, ok = mergePlain(prev, v); !ok {
			return false
		}
	}
	o.set(name, v)
	return true
}

// plainLabel returns the name of a field label that is an identifier or a
// string without interpolation.
func plainLabel(l ast.Label) (string, bool) {
	switch l := l.(type) {
	case *ast.Ident:
		if l.Name == "" || strings.HasPrefix(l.Name, "#") || strings.HasPrefix(l.Name, "_") {
			return "", false
		}
		return l.Name, true
	case *ast.BasicLit:
		if l.Kind != token.STRING || !strings.HasPrefix(l.Value, `"`) {
			return "", false
		}
		s, err := cuelit.Unquote(l.Value)
		return s, err == nil
	}
	return "", false
}

// plainExpr decodes a value: string, int64, float64, bool, nil, []any or
// *object.
func plainExpr(e ast.Expr) (any, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		return plainLit(e, false)
	case *ast.UnaryExpr:
		if lit, ok := e.X.(*ast.BasicLit); ok && e.Op == token.SUB && (lit.Kind == token.INT || lit.Kind == token.FLOAT) {
			return plainLit(lit, true)
		}
	case *ast.StructLit:
		o := newObject(len(e.Elts))
		for _, d := range e.Elts {
			switch d := d.(type) {
			case *ast.CommentGroup:
			case *ast.Field:
				if !plainField(o, d) {
					return nil, false
				}
			default:
				return nil, false
			}
		}
		return o, true
	case *ast.ListLit:
		out := make([]any, 0, len(e.Elts))
		for _, el := range e.Elts {
			v, ok := plainExpr(el)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	}
	return nil, false
}

// Numbers decoded without the evaluator: decimal integers and decimal
// floats. Other spellings (0x10, 1_000, 1Ki, .5) are left to it.
var (
	plainInt   = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	plainFloat = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
)

func plainLit(l *ast.BasicLit, negate bool) (any, bool) {
	switch l.Kind {
	case token.STRING:
		if !strings.HasPrefix(strings.TrimLeft(l.Value, "#"), `"`) {
			return nil, false // bytes
		}
		s, err := cuelit.Unquote(l.Value)
		return s, err == nil
	case token.INT:
		if !plainInt.MatchString(l.Value) {
			return nil, false
		}
		// The magnitude must fit in an int64: the evaluator decodes
		// -9223372036854775808, whose magnitude does not, as a float.
		i, err := strconv.ParseInt(l.Value, 10, 64)
		if err != nil || negate && i == 0 { // -0 is left to the evaluator
			return nil, false
		}
		if negate {
			i = -i
		}
		return i, true
	case token.FLOAT:
		if !plainFloat.MatchString(l.Value) {
			return nil, false
		}
		f, err := strconv.ParseFloat(l.Value, 64)
		if err != nil || negate && f == 0 || !exactEnough(l.Value, f) {
			return nil, false // -0 is left to the evaluator
		}
		if negate {
			f = -f
		}
		return f, true
	case token.TRUE:
		return true, true
	case token.FALSE:
		return false, true
	case token.NULL:
		return nil, true
	}
	return nil, false
}

// exactEnough reports whether the float64 f parsed from the decimal lit
// keeps what the evaluator compares: lit has at most 15 significant digits
// and f is zero or normal. Two such decimals that differ parse to different
// floats in the same order, so equality (a label written twice) and bounds
// (backoff: >=1) decide as the evaluator's exact decimals do; a longer
// literal such as 0.99999999999999999999 rounds to a float (1) that would
// pass a bound the decimal fails.
func exactEnough(lit string, f float64) bool {
	mant := lit
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant = lit[:i]
	}
	digits := strings.Trim(strings.Replace(mant, ".", "", 1), "0")
	if len(digits) > 15 {
		return false
	}
	if f == 0 {
		return digits == "" // else it underflowed
	}
	return math.Abs(f) >= 0x1p-1022
}

// mergePlain unifies two decoded values as the evaluator would for plain
// data: structs merge field by field, equal scalars are one. It reports
// false for anything else (a conflict, or lists), which is left to the
// evaluator.
func mergePlain(a, b any) (any, bool) {
	ao, aok := a.(*object)
	bo, bok := b.(*object)
	if aok && bok {
		out := newObject(len(ao.keys) + len(bo.keys))
		for _, k := range ao.keys {
			out.set(k, ao.vals[k])
		}
		for _, k := range bo.keys {
			v := bo.vals[k]
			if prev, ok := out.vals[k]; ok {
				m, ok := mergePlain(prev, v)
				if !ok {
					return nil, false
				}
				v = m
			}
			out.set(k, v)
		}
		return out, true
	}
	if aok || bok {
		return nil, false
	}
	switch a.(type) {
	case []any:
		return nil, false
	}
	if _, ok := b.([]any); ok {
		return nil, false
	}
	return a, a == b
}

// plainGo turns a decoded value into JSON-like Go values (map[string]any
// for structs).
func plainGo(v any) any {
	switch v := v.(type) {
	case *object:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			m[k] = plainGo(v.vals[k])
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = plainGo(e)
		}
		return out
	}
	return v
}
