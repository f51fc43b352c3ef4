package load

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"

	"github.com/graphctl/graphctl/runtime/graph"
)

// explainMisplacedConfig rewrites the unknown-field error of a node key that
// is a config key of the node's type (text: written beside type rather than
// under config) to say where it goes, and drops the missing-field error of
// the same key under config, which is its consequence.
func (l *loader) explainMisplacedConfig(g *graph.Graph) {
	if g == nil {
		return
	}
	moved := map[string]bool{}
	for i, d := range l.diags {
		if d.Code != "unknown-field" || !strings.HasPrefix(d.Path, "nodes.") || strings.Count(d.Path, ".") != 2 {
			continue
		}
		rest := strings.TrimPrefix(d.Path, "nodes.")
		name, key, _ := strings.Cut(rest, ".")
		n := g.Node(name)
		if n == nil {
			continue
		}
		t, ok := l.registry.Lookup(n.Type)
		if !ok {
			continue
		}
		cs := l.configSchema(t)
		if cs.err != nil || !cs.v.LookupPath(cue.MakePath(cue.Str(key))).Exists() && !cs.v.LookupPath(cue.MakePath(cue.Str(key).Optional())).Exists() {
			continue
		}
		l.diags[i].Message = fmt.Sprintf("%s: unknown field %q (%q is a config key of node type %q: write it under config, config: %s: …)",
			d.Path, key, key, n.Type, key)
		moved["nodes."+name+".config."+key] = true
	}
	if len(moved) == 0 {
		return
	}
	kept := l.diags[:0]
	for _, d := range l.diags {
		if d.Code == "missing-field" && moved[d.Path] {
			continue
		}
		kept = append(kept, d)
	}
	l.diags = kept
}
