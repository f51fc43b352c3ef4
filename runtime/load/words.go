package load

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"

	"github.com/graphctl/graphctl/runtime/graphschema"
)

// The words diagnostics use for what a schema value accepts come from
// graphschema.Describe; these helpers rewrite the pieces of CUE's own error
// messages (bounds, kind names) in the same terms.

func describe(v cue.Value) string { return graphschema.Describe(v) }

func isConcrete(v cue.Value) bool { return graphschema.IsConcrete(v) }

func literal(v cue.Value) string { return graphschema.Literal(v) }

// boundText rewrites a bound as CUE prints it in an error (">=1", "<=100",
// `=~"^…$"`) in words.
func boundText(s string) string {
	s = strings.TrimSpace(s)
	for _, b := range []struct{ op, words string }{
		{">=", "at least "}, {"<=", "at most "}, {"!=", "other than "},
		{"=~", "matching the pattern "}, {"!~", "not matching the pattern "},
		{">", "greater than "}, {"<", "less than "},
	} {
		if rest, ok := strings.CutPrefix(s, b.op); ok {
			if b.op == "=~" && rest == fmt.Sprintf("%q", graphschema.IdentifierPattern) {
				return graphschema.IdentifierWords
			}
			return b.words + rest
		}
	}
	return s
}

// typeName names a kind as the graph's state types do: string, int, float,
// number, bool, list, object, null.
func typeName(k cue.Kind) string {
	switch k {
	case cue.StructKind:
		return "object"
	case cue.NumberKind:
		return "number"
	case cue.BottomKind:
		return "nothing"
	}
	return strings.TrimPrefix(strings.TrimPrefix(graphschema.KindWords(k), "an "), "a ")
}

// typeWord rewrites a kind name from a CUE message ("struct", "float", …) as
// typeName does.
func typeWord(s string) string {
	switch s = strings.TrimSpace(s); s {
	case "struct":
		return "object"
	case "_|_":
		return "nothing"
	case "_":
		return "any value"
	}
	return s
}
