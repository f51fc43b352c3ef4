package compile

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
)

// CodeTemplateLiteral warns about text in a template that looks like an
// interpolation written in another language's syntax ({name}, {{name}},
// $name) and is therefore printed as it is.
const CodeTemplateLiteral = "template-literal"

// suggestBudget bounds how many candidates the did-you-mean hints of one
// compilation compare names with. Each hint compares a misspelt name with
// every candidate, so a file that misspells thousands of names among
// thousands of nodes or fields would take minutes and gigabytes to check;
// past the budget its errors come without the hint, in time linear in the
// file's size. Real graphs never get near it.
const suggestBudget = 1 << 20

// canSuggest reports whether the suggestion budget allows comparing a name
// with n more candidates, and counts them.
func (c *compiler) canSuggest(n int) bool {
	if c.suggested+n > suggestBudget {
		c.suggested = suggestBudget + 1
		return false
	}
	c.suggested += n
	return true
}

// closest is diag.Closest within the suggestion budget: "" once it is spent.
func (c *compiler) closest(name string, cands []string) string {
	if !c.canSuggest(len(cands)) {
		return ""
	}
	return diag.Closest(name, cands)
}

// didYouMean is diag.DidYouMean within the suggestion budget.
func (c *compiler) didYouMean(name string, cands []string) string {
	return didYouMean(c.closest(name, cands))
}

// didYouMean words a suggestion as diag.DidYouMean does; "" for none.
func didYouMean(best string) string {
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// maxListed bounds how many declared names a hint lists.
const maxListed = 12

// listNames formats up to maxListed names as "a", "b" and "c", saying how
// many more there are.
func listNames(names []string) string { return listFirst(names, len(names)) }

// listFirst is listNames of total names of which only the first are given
// (at least maxListed of them when there are more).
func listFirst(first []string, total int) string {
	if total > maxListed {
		return fmt.Sprintf("%s, … (%d in all)", strings.Join(quoteEach(first[:maxListed]), ", "), total)
	}
	return quoteList(first)
}

func quoteEach(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return q
}

// unknownNameHint tells what to do about an unknown name that resembles no
// declared one: declare it, and which names there are.
func (c *compiler) unknownNameHint(name string) string {
	fields := make([]string, 0, min(len(c.g.State), maxListed+1))
	for _, f := range c.g.State {
		fields = append(fields, f.Name)
		if len(fields) > maxListed {
			break
		}
	}
	if len(fields) == 0 {
		return fmt.Sprintf(": declare it under state (the graph declares no state fields), e.g. state: %s: {type: \"string\"}", name)
	}
	return fmt.Sprintf(": it is not a state field, var or function; declare it under state, e.g. %s: {type: \"string\"} (declared fields: %s)", name, listFirst(fields, len(c.g.State)))
}

// exprSyntaxHint adds advice to an expression syntax error a newcomer is
// likely to make; offset is the rune offset of the offending token in src.
func exprSyntaxHint(msg, src string, offset int) string {
	if !strings.Contains(msg, `unexpected token Operator("=")`) {
		return ""
	}
	r := []rune(src)
	if offset >= 0 && offset+1 < len(r) {
		switch r[offset+1] {
		case '>':
			return " (write >= for at least; => is not an operator of expressions)"
		case '<':
			return " (write <= for at most; =< is not an operator of expressions)"
		}
	}
	return " (compare with ==; = is not an operator of expressions)"
}

// langGraphReducerHint names graphctl's reducer for one of LangGraph's, or "".
func langGraphReducerHint(name string, typ graph.Type) string {
	switch strings.TrimPrefix(name, "operator.") {
	case "add_messages":
		return `; LangGraph's add_messages is reducer "messages" (the default of a messages field: leave reducer out)`
	case "add", "iadd", "concat":
		if strings.HasPrefix(name, "operator.") {
			if typ.IsList() {
				return `; LangGraph's operator.add on a list is reducer "append"`
			}
			return `; LangGraph's operator.add is reducer "add" on a number, "append" on a list`
		}
	case "or_", "ior":
		return `; LangGraph's operator.or_ on a dict is reducer "merge"`
	}
	return ""
}

// literalInterpRE finds, in template text, what looks like an interpolation
// in another syntax: {{name}}, {name} or $name. A ${…} interpolation and a
// literal $${ are matched first so that their insides are skipped.
var literalInterpRE = regexp.MustCompile(`\$\$\{|\$\{[^}]*\}?|\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}|\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// warnLiteralInterpolations warns about {name}, {{name}} and $name in a
// template when name is a state field or var: the text is printed as it
// is, where ${name} was surely meant.
func (c *compiler) warnLiteralInterpolations(env *expression.Env, path, src string, base diag.Pos) {
	for _, m := range literalInterpRE.FindAllStringSubmatchIndex(src, -1) {
		var name string
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				name = src[m[2*g]:m[2*g+1]]
			}
		}
		root, _, _ := strings.Cut(name, ".")
		if root == "" || root == "state" || !env.Has(root) {
			continue
		}
		written := src[m[0]:m[1]]
		pos := c.posIn(base, path, src, utf8.RuneCountInString(src[:m[0]]))
		c.diags.Warnf(pos, CodeTemplateLiteral, path,
			"template text %q is printed as it is: to insert %q, write ${%s}", written, name, name)
	}
}
