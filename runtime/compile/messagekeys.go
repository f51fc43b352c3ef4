package compile

import (
	"slices"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
)

// CodeMessageKey is the warning code of a key of a chat message that no
// message has, close to one they have (messages[-1].contnet): it reads as
// nil, so the expression compiles and is silently wrong.
const CodeMessageKey = "unknown-message-key"

// messageKeys are the keys a message of a messages field is read by: the
// ones a misspelt key is compared with.
var messageKeys = []string{"role", "content", "id", "name", "type", "tool_calls", "tool_call_id"}

// otherMessageKeys are the further keys LangGraph's messages carry, which
// are no mistake.
var otherMessageKeys = []string{"invalid_tool_calls", "additional_kwargs", "response_metadata", "usage_metadata", "example", "artifact", "status"}

// messageListBuiltins are the builtins whose predicate sees each item of their
// first argument as # (written .key).
var messageListBuiltins = map[string]bool{
	"all": true, "none": true, "any": true, "one": true, "filter": true, "map": true, "count": true,
	"sum": true, "find": true, "findIndex": true, "findLast": true, "findLastIndex": true,
	"groupBy": true, "sortBy": true, "reduce": true,
}

// warnMessageKeys warns about a key of a chat message that is a misspelling
// of one messages have: messages[-1].contnet, last(messages).rol,
// filter(messages, {.contnet == 'x'}). expr is an expression of the text src
// at base, at rune offset offset (src itself, or a ${…} of a template).
func (c *compiler) warnMessageKeys(base diag.Pos, path, src, expr string, offset int) {
	fields := map[string]bool{}
	for _, f := range c.g.State {
		if f.Type.Kind == graph.Messages {
			fields[f.Name] = true
		}
	}
	if len(fields) == 0 {
		return
	}
	tree, err := parser.Parse(expr)
	if err != nil {
		return
	}
	v := &messageKeyVisitor{fields: fields}
	ast.Walk(&tree.Node, v)
	for _, m := range v.suspects {
		prop := m.Property.(*ast.StringNode)
		if slices.Contains(messageKeys, prop.Value) || slices.Contains(otherMessageKeys, prop.Value) {
			continue
		}
		best := diag.Closest(prop.Value, messageKeys)
		if best == "" {
			continue
		}
		c.diags.Warnf(c.posIn(base, path, src, offset+prop.Location().From), CodeMessageKey, path,
			"a message has no key %q; did you mean %q? (a message is {role, content, id?, tool_calls?, tool_call_id?}; another key reads as nil)",
			prop.Value, best)
	}
}

// messageKeyVisitor finds the members of chat messages read by a key.
type messageKeyVisitor struct {
	fields   map[string]bool
	suspects []*ast.MemberNode
}

// Visit implements ast.Visitor: a key of one message is a suspect, and so
// is a key of the item of a predicate over a messages field.
func (v *messageKeyVisitor) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.MemberNode:
		if _, isKey := x.Property.(*ast.StringNode); isKey && v.isMessage(x.Node) {
			v.suspects = append(v.suspects, x)
		}
	case *ast.BuiltinNode:
		if !messageListBuiltins[x.Name] || len(x.Arguments) < 2 || !v.isMessageList(x.Arguments[0]) {
			return
		}
		predicate, ok := x.Arguments[1].(*ast.PredicateNode)
		if !ok {
			return
		}
		v.suspects = append(v.suspects, itemKeys(predicate)...)
	}
}

// isMessageList reports whether n is a messages field, by name.
func (v *messageKeyVisitor) isMessageList(n ast.Node) bool {
	id, ok := n.(*ast.IdentifierNode)
	return ok && v.fields[id.Value]
}

// isMessage reports whether n is one message of a messages field:
// messages[i], first(messages) or last(messages).
func (v *messageKeyVisitor) isMessage(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.MemberNode:
		_, isKey := x.Property.(*ast.StringNode)
		return !isKey && v.isMessageList(x.Node)
	case *ast.BuiltinNode:
		return (x.Name == "first" || x.Name == "last") && len(x.Arguments) == 1 && v.isMessageList(x.Arguments[0])
	}
	return false
}

// itemKeys returns the .key members of a predicate's own item (#), leaving
// out those of the predicates nested in it, whose # is another item.
func itemKeys(predicate *ast.PredicateNode) []*ast.MemberNode {
	nested := map[*ast.MemberNode]bool{}
	var all []*ast.MemberNode
	ast.Walk(&predicate.Node, visitorFunc(func(n *ast.Node) {
		switch x := (*n).(type) {
		case *ast.PredicateNode:
			ast.Walk(&x.Node, visitorFunc(func(inner *ast.Node) {
				if m, ok := (*inner).(*ast.MemberNode); ok {
					nested[m] = true
				}
			}))
		case *ast.MemberNode:
			if p, ok := x.Node.(*ast.PointerNode); ok && p.Name == "" {
				if _, isKey := x.Property.(*ast.StringNode); isKey {
					all = append(all, x)
				}
			}
		}
	}))
	out := all[:0]
	for _, m := range all {
		if !nested[m] {
			out = append(out, m)
		}
	}
	return out
}

// visitorFunc is a function as an ast.Visitor.
type visitorFunc func(n *ast.Node)

// Visit implements ast.Visitor.
func (f visitorFunc) Visit(n *ast.Node) { f(n) }
