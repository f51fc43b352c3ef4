// Package check holds the config checks shared by the builtin node types:
// that a written field is declared, and that a messages target has type messages.
package check

import (
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// Field returns the declared state field name, or reports "unknown-field" at
// path (with a did-you-mean and the declared names) and returns nil.
func Field(b node.Builder, path, name string) *graph.Field {
	if f := b.Graph().Field(name); f != nil {
		return f
	}
	b.Errorf(path, "unknown-field", "node %q writes %q, which is not a declared state field%s",
		b.NodeName(), name, Declared(b.Graph(), name))
	return nil
}

// MessagesField checks that name is a declared field of type messages,
// reporting at path otherwise. It returns whether the field is usable.
func MessagesField(b node.Builder, path, name string) bool {
	f := Field(b, path, name)
	if f == nil {
		return false
	}
	if f.Type.Kind != graph.Messages {
		b.Errorf(path, "invalid-config", "node %q appends messages to %q, which is declared as %s, not messages",
			b.NodeName(), name, f.Type)
		return false
	}
	return true
}

// Declared formats a hint for an unknown field name: a did-you-mean when a
// declared field is close, and the list of declared fields.
func Declared(g *graph.Graph, name string) string {
	if len(g.State) == 0 {
		return " (the graph declares no state fields)"
	}
	names := make([]string, len(g.State))
	for i, f := range g.State {
		names[i] = f.Name
	}
	return suggest.Hint(name, names) + "; declared: " + strings.Join(names, ", ")
}
