package compile

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
)

// srcPos returns the position of the rune at offset within src, where base is
// the position of src's first character. Columns count bytes, as the loader's
// do. Lines after the first keep base's column as their left margin, which is
// how multi-line strings are indented.
func srcPos(base diag.Pos, src string, offset int) diag.Pos {
	if offset <= 0 {
		return base
	}
	line, col := 0, 0
	for i, r := range []rune(src) {
		if i >= offset {
			break
		}
		if r == '\n' {
			line++
			col = 0
			continue
		}
		col += utf8.RuneLen(r)
	}
	if line == 0 {
		return base.Shift(col)
	}
	if base.Line == 0 {
		return base
	}
	base.Line += line
	base.Col += col
	return base
}

// posIn is srcPos for the value at path, going through the value's source
// text when it was written with escape sequences: a decoded character then
// stands for one or more source bytes (\" for ", \u00e9 for é).
func (c *compiler) posIn(base diag.Pos, path, src string, offset int) diag.Pos {
	raw, ok := c.g.Literals[path]
	if !ok || offset <= 0 {
		return srcPos(base, src, offset)
	}
	rest := raw
	for i := 0; i < offset && rest != ""; i++ {
		_, _, tail, err := strconv.UnquoteChar(rest, '"')
		if err != nil {
			return srcPos(base, src, offset)
		}
		rest = tail
	}
	return base.Shift(len(raw) - len(rest))
}

var unknownNameRE = regexp.MustCompile(`^unknown name ([A-Za-z_$][A-Za-z0-9_$]*)`)

// missingKeyRE matches expr-lang's error for a key an object of known keys
// does not have.
var missingKeyRE = regexp.MustCompile(`^unknown field ([A-Za-z_$][A-Za-z0-9_$]*)`)

// fieldHint suggests, for a field of state (state.x) or of a vars object
// (cfg.x) that does not exist, the one probably meant, or lists them; the
// field's name starts at rune offset of src.
func (c *compiler) fieldHint(src string, offset int, name string) string {
	r := []rune(src)
	if offset < 2 || offset > len(r) || r[offset-1] != '.' {
		return ""
	}
	start := offset - 1
	for start > 0 && (r[start-1] == '_' || unicode.IsLetter(r[start-1]) || unicode.IsDigit(r[start-1])) {
		start--
	}
	if start > 0 && r[start-1] == '.' { // a field of a field: not a top-level name
		return ""
	}
	var keys []string
	switch owner := string(r[start : offset-1]); {
	case owner == "state":
		for _, f := range c.g.State {
			keys = append(keys, f.Name)
		}
	default:
		obj, ok := c.g.Vars[owner].(map[string]any)
		if !ok {
			return ""
		}
		keys = sortedKeys(obj)
	}
	if hint := c.didYouMean(name, keys); hint != "" {
		return hint
	}
	if len(keys) == 0 {
		return ""
	}
	return " (its fields: " + listNames(keys) + ")"
}

// reportExprError reports a compile error of src (an expression or template at
// base) at its offending token. An unknown name gets code unknown-name with a
// suggestion among the environment's names; other problems get code.
func (c *compiler) reportExprError(base diag.Pos, path, src string, err error, env *expression.Env, code string) {
	var ce *expression.Error
	if !errors.As(err, &ce) {
		c.errorf(base, code, path, "%v", err)
		return
	}
	at := c.posIn(base, path, src, ce.Offset)
	what := "expression"
	if code == CodeTemplateError {
		what = "template"
	}
	if m := unknownNameRE.FindStringSubmatch(ce.Message); m != nil {
		if code == CodeExprError {
			code = CodeUnknownName
		}
		hint := c.mapItemHint(m[1], path)
		if hint == "" && c.canSuggest(0) {
			hint = c.didYouMean(m[1], userNames(env))
		}
		if hint == "" {
			hint = c.unknownNameHint(m[1])
		}
		c.errorf(at, code, path, "%s %q: unknown name %q%s", what, shorten(src), m[1], hint)
		return
	}
	msg := goTypeWords.Replace(ce.Message)
	if m := missingKeyRE.FindStringSubmatch(ce.Message); m != nil {
		msg += c.fieldHint(src, ce.Offset, m[1])
	}
	if strings.Contains(msg, "must yield int, but yields float") {
		msg += " (/ always yields a float: write int(a / b), or declare the field a float)"
	}
	if strings.Contains(msg, "must yield list, but yields") && !strings.Contains(msg, "yields list") && !strings.HasSuffix(path, ".map.over") {
		// A value written to a list field, where an appending reducer
		// would take one item from a node's own update.
		msg += " (a list field is written a list: [" + shorten(src) + "] for one item)"
	}
	c.errorf(at, code, path, "%s %q: %s%s%s", what, shorten(src), msg, exprSyntaxHint(msg, src, ce.Offset), hiddenFunction(src, ce.Offset, ce.Message, env))
}

// mapItemHint explains an unknown name at path that is a map's item name:
// the item is seen only by the map's target, under its map's as. It
// returns "" for any other name.
func (c *compiler) mapItemHint(name, path string) string {
	node := ""
	if rest, ok := strings.CutPrefix(path, "nodes."); ok {
		node, _, _ = strings.Cut(rest, ".")
	}
	if items := c.mapItems[node]; name == defaultMapItemName && len(items) > 0 {
		return fmt.Sprintf(": node %q sees its map item as %s (the as of the map that sends it items)", node, quoteList(items))
	}
	for _, n := range c.g.Nodes {
		if n.Map == nil {
			continue
		}
		as := mapItemName(n.Map)
		if as == name && n.Map.To != node {
			return fmt.Sprintf(": %q is the item of node %q's map, seen only in the config of its target %q", name, n.Name, n.Map.To)
		}
	}
	return ""
}

// maxQuoted bounds the characters of an expression a message repeats; the
// position points into the file for the rest.
const maxQuoted = 120

// shorten returns src, cut to maxQuoted characters with "…" when longer.
func shorten(src string) string {
	if r := []rune(src); len(r) > maxQuoted {
		return string(r[:maxQuoted]) + "…"
	}
	return src
}

// goTypeWords names expr-lang's Go types as a graph file's types.
var goTypeWords = strings.NewReplacer(
	"map[string]interface {}", "object", "[]interface {}", "list", "interface {}", "any",
	"float64", "float", "int64", "int",
)

// userNames lists the names an expression can use, without the builtin "state".
func userNames(env *expression.Env) []string {
	names := env.Names()
	out := names[:0:0]
	for _, n := range names {
		if n != "state" {
			out = append(out, n)
		}
	}
	return out
}

// compileExpr compiles an expression at path, reporting problems there, and
// checks its comparisons against enum fields. It returns nil after a problem.
func (c *compiler) compileExpr(env *expression.Env, path string, base diag.Pos, src string, want graph.Kind) *expression.Program {
	prog, err := env.Compile(src, want)
	if err != nil {
		c.reportExprError(base, path, src, err, env, CodeExprError)
		return nil
	}
	if !c.checkEnumLiterals(base, path, src) {
		return nil
	}
	c.warnMessageKeys(base, path, src, src, 0)
	return prog
}

// checkEnumLiterals reports string literals compared with an enum field
// (==, != or in) that are not among the field's values; "" is always allowed,
// since it is the value of a field not set yet. It reports false when
// it found any.
func (c *compiler) checkEnumLiterals(base diag.Pos, path, src string) bool {
	if len(c.enums) == 0 {
		return true
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return true // compile errors are reported by the compiler
	}
	v := &enumVisitor{enums: c.enums}
	ast.Walk(&tree.Node, v)
	for _, bad := range v.bad {
		c.errorf(c.posIn(base, path, src, bad.offset), CodeEnumViolation, path,
			"%q is not a value of state field %q (one of %s)%s",
			bad.value, bad.field, listNames(c.enums[bad.field]), c.didYouMean(bad.value, c.enums[bad.field]))
	}
	return len(v.bad) == 0
}

type enumHit struct {
	field, value string
	offset       int
}

// enumVisitor finds string literals compared with enum fields.
type enumVisitor struct {
	enums map[string][]string
	bad   []enumHit
}

// Visit implements ast.Visitor.
func (v *enumVisitor) Visit(n *ast.Node) {
	b, ok := (*n).(*ast.BinaryNode)
	if !ok {
		return
	}
	switch b.Operator {
	case "==", "!=":
		v.compare(b.Left, b.Right)
		v.compare(b.Right, b.Left)
	case "in":
		field := v.enumField(b.Left)
		if field == "" {
			return
		}
		if arr, ok := b.Right.(*ast.ArrayNode); ok {
			for _, item := range arr.Nodes {
				v.literal(field, item)
			}
		}
	}
}

func (v *enumVisitor) compare(side, other ast.Node) {
	if field := v.enumField(side); field != "" {
		v.literal(field, other)
	}
}

func (v *enumVisitor) literal(field string, n ast.Node) {
	s, ok := n.(*ast.StringNode)
	if !ok || s.Value == "" {
		return // "" is the value of a field not set yet
	}
	for _, e := range v.enums[field] {
		if e == s.Value {
			return
		}
	}
	v.bad = append(v.bad, enumHit{field: field, value: s.Value, offset: s.Location().From})
}

// enumField returns the enum field n names, as `goal` or `state.goal`, or "".
func (v *enumVisitor) enumField(n ast.Node) string {
	var name string
	switch x := n.(type) {
	case *ast.IdentifierNode:
		name = x.Value
	case *ast.MemberNode:
		id, ok := x.Node.(*ast.IdentifierNode)
		prop, ok2 := x.Property.(*ast.StringNode)
		if !ok || !ok2 || id.Value != "state" {
			return ""
		}
		name = prop.Value
	default:
		return ""
	}
	if _, ok := v.enums[name]; ok {
		return name
	}
	return ""
}
