// Package namespace holds what node types that address the long-term Store
// share: namespaces written as templates (["memories", "${user_id}"]) and the
// check that a run has a Store at all.
package namespace

import (
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/runtime/node"
)

// Compile compiles each namespace element of a node's config (at path
// "namespace.<i>") as a template, reporting empty elements.
func Compile(b node.Builder, elems []string) []node.Template {
	out := make([]node.Template, 0, len(elems))
	for i, src := range elems {
		path := fmt.Sprintf("namespace.%d", i)
		if strings.TrimSpace(src) == "" {
			b.Errorf(path, "invalid-config", "node %q: namespace element %d is empty", b.NodeName(), i)
			continue
		}
		if t := b.Template(path, src); t != nil {
			out = append(out, t)
		}
	}
	return out
}

// Render renders a namespace for a run. An element rendering to the empty
// string is an error: it would address another user's items.
func Render(in *node.Input, ts []node.Template) ([]string, error) {
	ns := make([]string, len(ts))
	for i, t := range ts {
		s, err := t.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf("template_error", "%s: namespace element %d: %w", in.Node, i, err)
		}
		if strings.TrimSpace(s) == "" {
			return nil, node.Errorf("invalid_namespace", "%s: namespace element %d (%s) is empty in this run", in.Node, i, t.Source())
		}
		ns[i] = s
	}
	return ns, nil
}

// RequireStore is the Prepare check of node types that need the Store.
func RequireStore(services *node.Services, nodeType string) error {
	if services == nil || services.Store == nil {
		return fmt.Errorf("%s needs a long-term memory store, and this run has none: give the engine one (engine.Options.Store; graphctl run and serve use the Badger store of their workspace)", nodeType)
	}
	return nil
}
