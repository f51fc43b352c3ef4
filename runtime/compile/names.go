package compile

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/expr-lang/expr/builtin"

	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
)

// exprKeywords are the words expr-lang reads as operators or literals: a name
// spelt like one can never be referred to in an expression.
var exprKeywords = map[string]bool{
	"true": true, "false": true, "nil": true, "in": true, "not": true, "and": true, "or": true,
	"matches": true, "contains": true, "startsWith": true, "endsWith": true, "let": true,
	"if": true, "else": true,
}

// graphctlFunctions are the functions graphctl adds to expr-lang's builtins.
var graphctlFunctions = []string{"empty", "json"}

// expressionName reports why name cannot be a state field or a var that
// expressions refer to by name, or "" when it can.
func expressionName(name string) string {
	if !isExprIdentifier(name) {
		return fmt.Sprintf("%q is not a name expressions can use: use letters, digits and _, not starting with a digit", name)
	}
	switch {
	case name == "state":
		return `"state" is reserved: in expressions it is the whole state as an object`
	case exprKeywords[name]:
		return fmt.Sprintf("%q is reserved: expressions read it as an operator or a literal", name)
	}
	return ""
}

// isFunctionName reports whether name is a function of expressions, which a
// state field or var of the same name hides.
func isFunctionName(name string) bool {
	return slices.Contains(graphctlFunctions, name) || slices.Contains(builtin.Names, name)
}

// hiddenFunction explains an expression that calls a function a state field
// or var hides ("int is not callable"), or returns "".
func hiddenFunction(src string, offset int, message string, env *expression.Env) string {
	if !strings.HasSuffix(message, "is not callable") || offset < 0 || offset > len(src) {
		return ""
	}
	rest := []rune(src)
	if offset > len(rest) {
		return ""
	}
	end := offset
	for end < len(rest) && (rest[end] == '_' || unicode.IsLetter(rest[end]) || unicode.IsDigit(rest[end])) {
		end++
	}
	name := string(rest[offset:end])
	if name == "" || !isFunctionName(name) || !env.Has(name) {
		return ""
	}
	return fmt.Sprintf(" (the state field or var %q hides the function %s(); rename it to call the function)", name, name)
}

// isExprIdentifier reports whether s matches ^[a-zA-Z_][a-zA-Z0-9_]*$.
func isExprIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// checkVars reports vars that expressions cannot name or that a state field
// of the same name would hide.
func (c *compiler) checkVars() {
	names := make([]string, 0, len(c.g.Vars))
	for k := range c.g.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	fields := map[string]*graph.Field{}
	for _, f := range c.g.State {
		fields[f.Name] = f
	}
	for _, name := range names {
		path := "vars." + name
		if why := expressionName(name); why != "" {
			c.errorf(c.nearest(path, c.g.PosOf(path)), CodeReservedName, path, "var %s", why)
			continue
		}
		if _, clash := fields[name]; clash {
			c.errorf(c.nearest(path, c.g.PosOf(path)), CodeDuplicateName, path,
				"var %q has the name of a state field, which expressions would see instead; rename one of them", name)
		}
	}
}
