package load

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// A schema is a CUE schema compiled for checking plain data in Go: the
// subset of CUE that graph and config schemas are written in (basic types,
// literals, bounds, regular expressions, disjunctions with a default, closed
// and open structs with pattern fields, open lists, and references to
// definitions of the same file). Check accepts a value only
// when the evaluator would accept it too and then returns what the
// evaluator would decode; a schema written with anything else does not
// compile, and a value the check rejects or is unsure of is left to the
// evaluator, which reports the problem.
type schema struct {
	op schemaOp
	// scalar: the kinds allowed, the literal required (when hasLit) and
	// the bounds.
	kinds  kindSet
	lit    any
	hasLit bool
	bounds []bound
	// struct
	fields   []*schemaField
	byName   map[string]*schemaField
	patterns []schemaPattern
	open     bool
	// list: the schemas of the first elements, which must be there, and
	// of the others (nil: any)
	prefix []*schema
	elem   *schema
	// disjunction: the alternatives and the index of the default (-1: none)
	alts []*schema
	def  int
}

type schemaOp uint8

const (
	opAny schemaOp = iota
	opScalar
	opStruct
	opList
	opDisj
)

type kindSet uint8

const (
	kString kindSet = 1 << iota
	kInt
	kFloat
	kBool
	kNull
	kNumber = kInt | kFloat
)

type schemaField struct {
	name       string
	constraint token.Token // token.ILLEGAL (regular), token.OPTION (?) or token.NOT (!)
	s          *schema
}

type schemaPattern struct {
	label *schema // a scalar schema the label (a string) must satisfy
	value *schema
}

type bound struct {
	op token.Token
	// num is the operand of a numeric bound, re that of =~ and !~, lit that of !=.
	num float64
	re  *regexp.Regexp
	lit any
}

// errUnsupported marks a schema written with CUE this checker does not know.
var errUnsupported = errors.New("schema uses CUE beyond plain checking")

// schemaCompiler compiles the definitions of one schema file.
type schemaCompiler struct {
	defs     map[string]ast.Expr
	compiled map[string]*schema
	busy     map[string]bool
}

// compileSchemaFile compiles the definition name of a CUE file made of
// definitions only.
func compileSchemaFile(src, name string) (*schema, error) {
	f, err := parser.ParseFile("schema.cue", src)
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	c := &schemaCompiler{defs: map[string]ast.Expr{}, compiled: map[string]*schema{}, busy: map[string]bool{}}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.Field:
			id, ok := d.Label.(*ast.Ident)
			if !ok || !strings.HasPrefix(id.Name, "#") || d.Constraint != token.ILLEGAL {
				return nil, errUnsupported
			}
			if _, dup := c.defs[id.Name]; dup {
				return nil, errUnsupported
			}
			c.defs[id.Name] = d.Value
		case *ast.CommentGroup:
		default:
			return nil, errUnsupported
		}
	}
	return c.ref(name)
}

// compileSchemaExpr compiles a single CUE expression as the body of a
// definition (so its structs are closed).
func compileSchemaExpr(src string) (*schema, error) {
	e, err := parser.ParseExpr("schema", src)
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	c := &schemaCompiler{defs: map[string]ast.Expr{}, compiled: map[string]*schema{}, busy: map[string]bool{}}
	return c.expr(e)
}

func (c *schemaCompiler) ref(name string) (*schema, error) {
	if s, ok := c.compiled[name]; ok {
		return s, nil
	}
	e, ok := c.defs[name]
	if !ok || c.busy[name] {
		return nil, errUnsupported // undefined, or recursive
	}
	c.busy[name] = true
	s, err := c.expr(e)
	c.busy[name] = false
	if err != nil {
		return nil, err
	}
	c.compiled[name] = s
	return s, nil
}

func (c *schemaCompiler) expr(e ast.Expr) (*schema, error) {
	switch e := e.(type) {
	case *ast.Ident:
		return c.ident(e.Name)
	case *ast.BasicLit:
		v, ok := plainLit(e, false)
		if !ok {
			return nil, errUnsupported
		}
		return literalSchema(v), nil
	case *ast.ParenExpr:
		return c.expr(e.X)
	case *ast.UnaryExpr:
		return c.unary(e)
	case *ast.BinaryExpr:
		return c.binary(e)
	case *ast.StructLit:
		return c.structLit(e)
	case *ast.ListLit:
		return c.listLit(e)
	}
	return nil, errUnsupported
}

func (c *schemaCompiler) ident(name string) (*schema, error) {
	kinds := map[string]kindSet{
		"string": kString, "int": kInt, "float": kFloat, "number": kNumber, "bool": kBool, "null": kNull,
	}
	switch {
	case name == "_":
		return &schema{op: opAny}, nil
	case name == "uint":
		return &schema{op: opScalar, kinds: kInt, bounds: []bound{{op: token.GEQ}}}, nil
	case kinds[name] != 0:
		return &schema{op: opScalar, kinds: kinds[name]}, nil
	case strings.HasPrefix(name, "#"):
		return c.ref(name)
	}
	return nil, errUnsupported
}

func literalSchema(v any) *schema {
	return &schema{op: opScalar, kinds: kindOf(v), lit: v, hasLit: true}
}

func kindOf(v any) kindSet {
	switch v.(type) {
	case string:
		return kString
	case int64:
		return kInt
	case float64:
		return kFloat
	case bool:
		return kBool
	case nil:
		return kNull
	}
	return 0
}

func (c *schemaCompiler) unary(e *ast.UnaryExpr) (*schema, error) {
	if e.Op == token.SUB {
		lit, ok := e.X.(*ast.BasicLit)
		if !ok {
			return nil, errUnsupported
		}
		v, ok := plainLit(lit, true)
		if !ok {
			return nil, errUnsupported
		}
		return literalSchema(v), nil
	}
	operand, err := c.expr(e.X)
	if err != nil || operand.op != opScalar || !operand.hasLit {
		return nil, errUnsupported
	}
	b := bound{op: e.Op}
	switch e.Op {
	case token.GTR, token.GEQ, token.LSS, token.LEQ:
		n, ok := number(operand.lit)
		if !ok {
			return nil, errUnsupported
		}
		b.num = n
		return &schema{op: opScalar, kinds: kNumber, bounds: []bound{b}}, nil
	case token.MAT, token.NMAT:
		s, ok := operand.lit.(string)
		if !ok {
			return nil, errUnsupported
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, errUnsupported
		}
		b.re = re
		return &schema{op: opScalar, kinds: kString, bounds: []bound{b}}, nil
	case token.NEQ:
		b.lit = operand.lit
		return &schema{op: opScalar, kinds: kString | kNumber | kBool | kNull, bounds: []bound{b}}, nil
	}
	return nil, errUnsupported
}

func (c *schemaCompiler) binary(e *ast.BinaryExpr) (*schema, error) {
	switch e.Op {
	case token.OR:
		var alts []*schema
		def := -1
		for _, x := range disjuncts(e) {
			marked := false
			if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.MUL {
				x, marked = u.X, true
			}
			s, err := c.expr(x)
			if err != nil {
				return nil, err
			}
			if marked {
				if def >= 0 || s.op != opScalar || !s.hasLit {
					return nil, errUnsupported
				}
				def = len(alts)
			}
			if s.op == opDisj {
				return nil, errUnsupported
			}
			alts = append(alts, s)
		}
		return &schema{op: opDisj, alts: alts, def: def}, nil
	case token.AND:
		x, err := c.expr(e.X)
		if err != nil {
			return nil, err
		}
		y, err := c.expr(e.Y)
		if err != nil {
			return nil, err
		}
		return conjoin(x, y)
	}
	return nil, errUnsupported
}

// disjuncts flattens a | b | c.
func disjuncts(e ast.Expr) []ast.Expr {
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.OR {
		return append(disjuncts(b.X), disjuncts(b.Y)...)
	}
	return []ast.Expr{e}
}

// conjoin is x & y for scalar schemas, lists and _.
func conjoin(x, y *schema) (*schema, error) {
	switch {
	case x == nil || x.op == opAny:
		return y, nil
	case y == nil || y.op == opAny:
		return x, nil
	case x.op == opList && y.op == opList:
		return conjoinLists(x, y)
	case x.op != opScalar || y.op != opScalar || x.hasLit && y.hasLit:
		return nil, errUnsupported
	}
	out := &schema{op: opScalar, kinds: x.kinds & y.kinds, bounds: append(append([]bound{}, x.bounds...), y.bounds...)}
	for _, s := range []*schema{x, y} {
		if s.hasLit {
			out.lit, out.hasLit = s.lit, true
		}
	}
	if out.kinds == 0 {
		return nil, errUnsupported
	}
	return out, nil
}

// conjoinLists is x & y for open lists: each element satisfies both.
func conjoinLists(x, y *schema) (*schema, error) {
	out := &schema{op: opList}
	for i := 0; i < max(len(x.prefix), len(y.prefix)); i++ {
		el, err := conjoin(x.at(i), y.at(i))
		if err != nil {
			return nil, err
		}
		out.prefix = append(out.prefix, orAny(el))
	}
	el, err := conjoin(x.elem, y.elem)
	if err != nil {
		return nil, err
	}
	if el != nil && el.op != opAny {
		out.elem = el
	}
	return out, nil
}

// at is the schema of a list's element i (nil: any).
func (s *schema) at(i int) *schema {
	if i < len(s.prefix) {
		return s.prefix[i]
	}
	return s.elem
}

func orAny(s *schema) *schema {
	if s == nil {
		return &schema{op: opAny}
	}
	return s
}

func (c *schemaCompiler) structLit(e *ast.StructLit) (*schema, error) {
	s := &schema{op: opStruct, byName: map[string]*schemaField{}}
	for _, d := range e.Elts {
		switch d := d.(type) {
		case *ast.CommentGroup:
		case *ast.Ellipsis:
			if d.Type != nil {
				return nil, errUnsupported
			}
			s.open = true
		case *ast.Field:
			if err := c.field(s, d); err != nil {
				return nil, err
			}
		default:
			return nil, errUnsupported
		}
	}
	for _, f := range s.fields {
		for _, p := range s.patterns {
			if p.label.scalarOK(f.name) {
				return nil, errUnsupported // both would apply to f
			}
		}
	}
	return s, nil
}

func (c *schemaCompiler) field(s *schema, f *ast.Field) error {
	if len(f.Attrs) > 0 {
		return errUnsupported
	}
	value, err := c.expr(f.Value)
	if err != nil {
		return err
	}
	if pat, ok := f.Label.(*ast.ListLit); ok {
		if len(pat.Elts) != 1 || f.Constraint != token.ILLEGAL {
			return errUnsupported
		}
		label, err := c.expr(pat.Elts[0])
		if err != nil || label.op != opScalar || label.kinds&kString == 0 || label.hasLit {
			return errUnsupported
		}
		s.patterns = append(s.patterns, schemaPattern{label: label, value: value})
		return nil
	}
	name, ok := plainLabel(f.Label)
	if !ok {
		return errUnsupported
	}
	if _, dup := s.byName[name]; dup {
		return errUnsupported
	}
	sf := &schemaField{name: name, constraint: f.Constraint, s: value}
	switch f.Constraint {
	case token.ILLEGAL, token.OPTION, token.NOT:
	default:
		return errUnsupported
	}
	s.fields = append(s.fields, sf)
	s.byName[name] = sf
	return nil
}

// listLit compiles an open list: [...T] or [A, B, ...T].
func (c *schemaCompiler) listLit(e *ast.ListLit) (*schema, error) {
	if len(e.Elts) == 0 {
		return nil, errUnsupported
	}
	el, ok := e.Elts[len(e.Elts)-1].(*ast.Ellipsis)
	if !ok {
		return nil, errUnsupported // a closed list
	}
	s := &schema{op: opList}
	for _, x := range e.Elts[:len(e.Elts)-1] {
		p, err := c.expr(x)
		if err != nil {
			return nil, err
		}
		s.prefix = append(s.prefix, p)
	}
	if el.Type != nil {
		elem, err := c.expr(el.Type)
		if err != nil {
			return nil, err
		}
		if elem.op != opAny {
			s.elem = elem
		}
	}
	return s, nil
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// check returns v as the evaluator decodes it once unified with s, schema
// defaults filled in (as toGo with defaults), and whether it is sure that v
// is valid.
func (s *schema) check(v any) (any, bool) {
	switch s.op {
	case opAny:
		return plainGo(v), true
	case opScalar:
		return v, s.scalarOK(v)
	case opStruct:
		o, ok := v.(*object)
		if !ok {
			return nil, false
		}
		return s.checkStruct(o)
	case opList:
		l, ok := v.([]any)
		if !ok || len(l) < len(s.prefix) {
			return nil, false
		}
		out := make([]any, len(l))
		for i, e := range l {
			el := s.at(i)
			if el == nil {
				out[i] = plainGo(e)
				continue
			}
			if out[i], ok = el.check(e); !ok {
				return nil, false
			}
		}
		return out, true
	case opDisj:
		var found any
		n := 0
		for _, a := range s.alts {
			out, ok := a.check(v)
			if !ok {
				continue
			}
			if n > 0 && !reflect.DeepEqual(out, found) {
				return nil, false // ambiguous: left to the evaluator
			}
			found, n = out, n+1
		}
		return found, n > 0
	}
	return nil, false
}

func (s *schema) scalarOK(v any) bool {
	k := kindOf(v)
	if k == 0 || s.kinds&k == 0 {
		return false
	}
	if s.hasLit && s.lit != v {
		return false
	}
	for _, b := range s.bounds {
		if !b.holds(v) {
			return false
		}
	}
	return true
}

func (b bound) holds(v any) bool {
	switch b.op {
	case token.MAT, token.NMAT:
		str, ok := v.(string)
		return ok && b.re.MatchString(str) == (b.op == token.MAT)
	case token.NEQ:
		return kindOf(v) == kindOf(b.lit) && v != b.lit
	}
	n, ok := number(v)
	if !ok {
		return false
	}
	switch b.op {
	case token.GTR:
		return n > b.num
	case token.GEQ:
		return n >= b.num
	case token.LSS:
		return n < b.num
	case token.LEQ:
		return n <= b.num
	}
	return false
}

func (s *schema) checkStruct(o *object) (any, bool) {
	out := make(map[string]any, len(o.keys)+len(s.fields))
	for _, k := range o.keys {
		v := o.vals[k]
		f := s.byName[k]
		var pat *schema
		for _, p := range s.patterns {
			if p.label.scalarOK(k) {
				if pat != nil {
					return nil, false // several patterns apply
				}
				pat = p.value
			}
		}
		var (
			dv any
			ok bool
		)
		switch {
		case f != nil && pat != nil:
			return nil, false
		case f != nil:
			dv, ok = f.s.check(v)
		case pat != nil:
			dv, ok = pat.check(v)
		case s.open:
			dv, ok = plainGo(v), true
		}
		if !ok {
			return nil, false
		}
		out[k] = dv
	}
	for _, f := range s.fields {
		if _, given := o.vals[f.name]; given {
			continue
		}
		switch f.constraint {
		case token.NOT:
			return nil, false // missing required field
		case token.OPTION:
			// The evaluator decodes an optional field that has a default
			// (a marked one, or [] for a list) with that default.
			switch {
			case f.s.op == opDisj && f.s.def >= 0:
				out[f.name] = f.s.alts[f.s.def].lit
			case f.s.op == opList && len(f.s.prefix) == 0:
				out[f.name] = []any{}
			case f.s.op == opList:
				return nil, false // unsure what the evaluator makes of it
			}
		default:
			d, ok := f.s.defaultValue()
			if !ok {
				return nil, false // not concrete
			}
			out[f.name] = d
		}
	}
	return out, true
}

// defaultValue is the concrete value of a schema the user gave no value for.
func (s *schema) defaultValue() (any, bool) {
	switch s.op {
	case opScalar:
		return s.lit, s.hasLit
	case opDisj:
		if s.def >= 0 {
			return s.alts[s.def].lit, true
		}
	case opStruct:
		return s.checkStruct(newObject(0))
	case opList:
		return []any{}, len(s.prefix) == 0
	}
	return nil, false
}
