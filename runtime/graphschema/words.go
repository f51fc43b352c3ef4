package graphschema

import (
	"encoding/json"
	"fmt"
	"strings"

	"cuelang.org/go/cue"
)

// This file says in a graph file's own terms what a schema value accepts, so
// that no diagnostic or document shows CUE's syntax for it ("*5 | int & >0",
// "[string, ...string]", "=~\"^…$\"") or CUE's words ("struct", "_|_").

// IdentifierPattern is the schema's pattern of node and graph names.
const IdentifierPattern = `^[a-zA-Z_][a-zA-Z0-9_-]*$`

// IdentifierWords says what IdentifierPattern means.
const IdentifierWords = "an identifier (letters, digits, _ and -, not starting with a digit or -)"

// Describe says what values a schema value accepts, e.g. "an int greater
// than 0 (default 5)" or `one of "auto", "model", "rules"`.
func Describe(v cue.Value) string {
	s := DescribeNoDefault(v)
	if d, ok := v.Default(); ok && IsConcrete(d) {
		// An open list "defaults" to its required items; [] says nothing.
		if lit := Literal(d); lit != s && lit != "[]" {
			s += " (default " + lit + ")"
		}
	}
	return s
}

// DescribeNoDefault is Describe without the default.
func DescribeNoDefault(v cue.Value) string {
	op, args := v.Expr()
	if op == cue.SelectorOp { // a reference to a definition: what it holds
		v = v.Eval()
		op, args = v.Expr()
	}
	switch op {
	case cue.OrOp:
		return describeOr(args)
	case cue.AndOp:
		return describeAnd(v)
	case cue.NoOp:
		// A value with a default stands for its other branch here.
		if len(args) == 1 {
			if aop, _ := args[0].Expr(); aop != cue.NoOp {
				return DescribeNoDefault(args[0])
			}
			v = args[0]
		}
	default:
		if isBoundOp(op) {
			return describeBound(v)
		}
	}
	return describeValue(v)
}

// describeOr describes a disjunction: "one of" its literals, or its
// branches joined with "or".
func describeOr(args []cue.Value) string {
	allLiterals := true
	parts := make([]string, 0, len(args))
	for _, a := range args {
		allLiterals = allLiterals && IsConcrete(a)
		parts = appendNew(parts, DescribeNoDefault(a))
	}
	if allLiterals {
		return "one of " + strings.Join(parts, ", ")
	}
	return joinOr(parts)
}

// describeAnd describes a conjunction: its base value with its bounds.
func describeAnd(v cue.Value) string {
	base, bounds := "", []string(nil)
	for _, a := range flattenAnd(v) {
		aop, _ := a.Expr()
		switch {
		case isBoundOp(aop):
			bounds = append(bounds, boundWords(a))
		case base == "" || base == "a number":
			base = DescribeNoDefault(a)
		}
	}
	if base == "" {
		base = KindWords(v.IncompleteKind())
	}
	if strings.HasPrefix(base, "an identifier") {
		return base
	}
	bounds = dropImpliedBound(bounds)
	if len(bounds) == 0 {
		return base
	}
	if strings.HasPrefix(bounds[0], "at ") {
		base += ","
	}
	return base + " " + strings.Join(bounds, " and ")
}

// describeBound describes a bound alone, such as >0 or =~"^a".
func describeBound(v cue.Value) string {
	w := boundWords(v)
	if strings.HasPrefix(w, "an identifier") || strings.HasPrefix(w, "matching") {
		return strings.TrimPrefix(w, "matching ")
	}
	return KindWords(v.IncompleteKind()) + " " + w
}

// describeValue describes a value that is no operation: a literal, a list,
// a struct or a kind.
func describeValue(v cue.Value) string {
	elem := v.LookupPath(cue.MakePath(cue.AnyIndex))
	if IsConcrete(v) && !elem.Exists() && v.IncompleteKind() != cue.StructKind {
		return Literal(v)
	}
	switch k := v.IncompleteKind(); k {
	case cue.ListKind:
		return describeList(v, elem)
	case cue.StructKind:
		return describeStruct(v)
	default:
		return KindWords(k)
	}
}

// describeList describes a list whose items are elem.
func describeList(v, elem cue.Value) string {
	if !elem.Exists() {
		return "a list"
	}
	list := "a list of " + plural(DescribeNoDefault(elem))
	if v.LookupPath(cue.MakePath(cue.Index(0))).Exists() {
		list = "a non-empty " + strings.TrimPrefix(list, "a ")
	}
	return list
}

// describeStruct describes a struct by its required and optional fields, or
// by what its pattern maps names to.
func describeStruct(v cue.Value) string {
	req, opt, pattern := structFields(v)
	if pattern.Exists() && len(req)+len(opt) == 0 {
		if pattern.IncompleteKind() == cue.TopKind {
			return "an object (any keys and values)"
		}
		return "an object mapping names to " + plural(DescribeNoDefault(pattern))
	}
	if IsConcrete(v) && len(req)+len(opt) == 0 {
		return Literal(v)
	}
	switch {
	case len(req) > 0 && len(opt) > 0:
		return "an object with " + strings.Join(req, ", ") + ", and optionally " + strings.Join(opt, ", ")
	case len(req) > 0:
		return "an object with " + strings.Join(req, ", ")
	case len(opt) > 0:
		return "an object with " + strings.Join(opt, ", ") + " (all optional)"
	}
	return "an object"
}

// structFields lists a struct's required fields with what they accept, its
// optional fields (those with a default too) by name, and its pattern
// constraint (the value of any string key unless a pattern says otherwise).
func structFields(v cue.Value) (req, opt []string, pattern cue.Value) {
	pattern = v.LookupPath(cue.MakePath(cue.AnyString))
	it, err := v.Fields(cue.Optional(true), cue.Patterns(true))
	if err != nil {
		return nil, nil, pattern
	}
	for it.Next() {
		if it.Selector().ConstraintType()&cue.PatternConstraint != 0 {
			pattern = it.Value()
			continue
		}
		name := SelectorName(it.Selector())
		if _, hasDefault := it.Value().Default(); it.Selector().ConstraintType() == cue.OptionalConstraint || hasDefault {
			opt = append(opt, name)
			continue
		}
		req = append(req, fmt.Sprintf("%s (%s)", name, DescribeNoDefault(it.Value())))
	}
	return req, opt, pattern
}

// dropImpliedBound drops "at least 0" (uint's bound) when another lower
// bound is given.
func dropImpliedBound(bounds []string) []string {
	lower := 0
	for _, b := range bounds {
		if strings.HasPrefix(b, "at least ") || strings.HasPrefix(b, "greater than ") {
			lower++
		}
	}
	if lower < 2 {
		return bounds
	}
	out := bounds[:0:0]
	for _, b := range bounds {
		if b != "at least 0" {
			out = append(out, b)
		}
	}
	return out
}

// flattenAnd lists the conjuncts of a conjunction, nested ones included.
func flattenAnd(v cue.Value) []cue.Value {
	op, args := v.Expr()
	if op != cue.AndOp {
		return []cue.Value{v}
	}
	var out []cue.Value
	for _, a := range args {
		out = append(out, flattenAnd(a)...)
	}
	return out
}

func isBoundOp(op cue.Op) bool {
	switch op {
	case cue.LessThanOp, cue.LessThanEqualOp, cue.GreaterThanOp, cue.GreaterThanEqualOp,
		cue.NotEqualOp, cue.RegexMatchOp, cue.NotRegexMatchOp:
		return true
	}
	return false
}

// boundWords says what a bound such as >=1 or =~"re" requires.
func boundWords(v cue.Value) string {
	op, args := v.Expr()
	if len(args) != 1 {
		return fmt.Sprint(v)
	}
	arg := Literal(args[0])
	switch op {
	case cue.LessThanOp:
		return "less than " + arg
	case cue.LessThanEqualOp:
		return "at most " + arg
	case cue.GreaterThanOp:
		return "greater than " + arg
	case cue.GreaterThanEqualOp:
		return "at least " + arg
	case cue.NotEqualOp:
		return "other than " + arg
	case cue.RegexMatchOp:
		if s, err := args[0].String(); err == nil && s == IdentifierPattern {
			return IdentifierWords
		}
		return "matching the pattern " + arg
	case cue.NotRegexMatchOp:
		return "not matching the pattern " + arg
	}
	return fmt.Sprint(v)
}

// KindWords names a CUE kind in the graph file's terms.
func KindWords(k cue.Kind) string {
	switch k {
	case cue.StringKind:
		return "a string"
	case cue.IntKind:
		return "an int"
	case cue.FloatKind, cue.NumberKind:
		return "a number"
	case cue.BoolKind:
		return "a bool (true or false)"
	case cue.NullKind:
		return "null"
	case cue.StructKind:
		return "an object"
	case cue.ListKind:
		return "a list"
	case cue.BottomKind:
		return "nothing"
	case cue.TopKind:
		return "any value"
	}
	var parts []string
	for _, one := range []cue.Kind{cue.StringKind, cue.IntKind, cue.FloatKind, cue.BoolKind, cue.NullKind, cue.StructKind, cue.ListKind} {
		if k&one != 0 && !(one == cue.FloatKind && k&cue.IntKind != 0) {
			parts = append(parts, KindWords(one))
		}
	}
	if k&cue.NumberKind == cue.NumberKind {
		parts = appendNew(parts[:0:0], "a number")
		for _, one := range []cue.Kind{cue.StringKind, cue.BoolKind, cue.NullKind, cue.StructKind, cue.ListKind} {
			if k&one != 0 {
				parts = append(parts, KindWords(one))
			}
		}
	}
	if len(parts) == 0 {
		return "any value"
	}
	return joinOr(parts)
}

// plural turns "a string" into "strings" and "an object with …" into
// "objects with …"; other phrases become "items that are …".
func plural(s string) string {
	if strings.Contains(s, ", ") || strings.Contains(s, " or ") {
		return "values that are " + s
	}
	for _, art := range []string{"a ", "an "} {
		if rest, ok := strings.CutPrefix(s, art); ok {
			word, tail, _ := strings.Cut(rest, " ")
			if tail != "" {
				tail = " " + tail
			}
			return word + "s" + tail
		}
	}
	return "items that are " + s
}

func joinOr(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// IsConcrete reports whether v is a complete value, lists and objects included.
func IsConcrete(v cue.Value) bool {
	return v.Exists() && v.Validate(cue.Concrete(true)) == nil
}

// Literal renders a concrete value on one line, as JSON would write it.
func Literal(v cue.Value) string {
	if b, err := v.MarshalJSON(); err == nil {
		return string(b)
	}
	return strings.Join(strings.Fields(fmt.Sprint(v)), " ")
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// SelectorName is a field's name without quotes or markers.
func SelectorName(sel cue.Selector) string {
	if sel.LabelType() == cue.StringLabel && sel.ConstraintType() < cue.PatternConstraint {
		return sel.Unquoted()
	}
	return sel.String()
}

// LiteralOf renders a Go value (decoded JSON) as JSON, for documents.
func LiteralOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
