package compile

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// CodeConcurrentWrite reports two nodes that run in the same super-step and
// both write a field whose reducer takes one value per step (replace).
const CodeConcurrentWrite = "concurrent-write"

// concurrentBudget bounds the group members checkConcurrentWrites visits in
// one graph: many fan-outs into long chains of plain edges would otherwise
// take time in the product of their numbers.
const concurrentBudget = 1 << 20

// fieldWrite is a state field a node's config names as one it writes, and
// the document path of the config value that names it.
type fieldWrite struct {
	field, path string
}

// checkConcurrentWrites reports the fields with a one-writer reducer
// (replace) that two nodes write in the same super-step, where the graph
// makes that certain: the targets of one node's next list, the nodes their
// plain next edges lead to step after step, and the tasks of a map (one per
// item, all in one step). At run time such a step fails (the engine refuses
// the second write, as LangGraph raises InvalidUpdateError); validate says so
// at the second writer, naming the first and the fix.
//
// What a node writes is what its config names as its output: of the config
// strings and keys its type looks up as state fields (reported as
// unknown-field when undeclared), those under an output key (see fieldAt),
// and a subgraph's output mapping. Fields a node type writes without naming
// them there (a default it applies, a field it reads) are not counted; the
// run still refuses a second write.
func (c *compiler) checkConcurrentWrites() {
	exclusive := false
	for _, f := range c.out.Fields {
		if f.Reducer != nil && f.Reducer.Exclusive {
			exclusive = true
			break
		}
	}
	if !exclusive {
		return
	}
	writes := map[string][]fieldWrite{}
	writesOf := func(name string) []fieldWrite {
		w, ok := writes[name]
		if !ok {
			w = c.exclusiveWrites(name)
			writes[name] = w
		}
		return w
	}
	reported := map[string]bool{}
	visits := 0
	report := func(second, field, path, format string, args ...any) {
		key := field + "\x00" + second
		if reported[key] {
			return
		}
		reported[key] = true
		f := c.out.Fields[field]
		c.errorf(c.nearest(path, c.nodes[second].Pos), CodeConcurrentWrite, path,
			"%s, but its reducer %s keeps one value per step, so the run would fail there: give %q a reducer that merges the writes (for example reducer: \"append\" on a list, \"merge\" on a map or object, \"add\" on a number), or write it from one node",
			fmt.Sprintf(format, args...), f.Reducer.Name, field)
	}
	for _, name := range c.out.NodeOrder {
		n := c.nodes[name]
		if n.Map != nil && c.nodes[n.Map.To] != nil {
			for _, w := range writesOf(n.Map.To) {
				report(n.Map.To, w.field, w.path,
					"node %q writes field %q once per item of %q in the same step (it is the target of %q's map)",
					n.Map.To, w.field, n.Map.Over, name)
			}
		}
		group := c.plainNext(n)
		if len(group) < 2 {
			continue
		}
		// Follow the group step by step while each member's next edges are
		// certain, until it shrinks to one node or repeats.
		seen := map[string]bool{}
		for step := 0; len(group) >= 2 && step <= len(c.out.NodeOrder); step++ {
			if visits += len(group); visits > concurrentBudget {
				return // past what any real graph needs; the run still refuses the write
			}
			key := strings.Join(group, ",")
			if seen[key] {
				break
			}
			seen[key] = true
			when := ""
			switch step {
			case 0:
			case 1:
				when = "the one after "
			default:
				when = fmt.Sprintf("%d steps after ", step)
			}
			first := map[string]string{}
			for _, member := range group {
				for _, w := range writesOf(member) {
					f, ok := first[w.field]
					if !ok {
						first[w.field] = member
						continue
					}
					report(member, w.field, w.path, "nodes %q and %q both write field %q in the same step (%s%q fans out to %s)",
						f, member, w.field, when, name, listNames(c.plainNext(n)))
				}
			}
			group = c.stepAfter(group)
		}
	}
}

// plainNext returns the nodes a node's next list starts together, in
// declaration order: END and joins (which start when their last branch
// arrives) left out.
func (c *compiler) plainNext(n *graph.Node) []string {
	set := map[string]bool{}
	for _, t := range n.Next {
		if m := c.nodes[t]; m != nil && len(m.WaitFor) == 0 {
			set[t] = true
		}
	}
	return c.inOrder(set)
}

// stepAfter returns the nodes certain to run in the step after the group's:
// the plain next targets of its members. A subgraph node is left out with
// what follows it, since an interrupt inside it delays its successors.
func (c *compiler) stepAfter(group []string) []string {
	set := map[string]bool{}
	for _, name := range group {
		n := c.nodes[name]
		if n.Type == SubgraphType {
			continue
		}
		for _, t := range c.plainNext(n) {
			set[t] = true
		}
	}
	return c.inOrder(set)
}

// exclusiveWrites returns the fields with a one-writer reducer that a node's
// config names as written, in config path order.
func (c *compiler) exclusiveWrites(name string) []fieldWrite {
	var out []fieldWrite
	for _, w := range c.configWrites(c.nodes[name]) {
		if f := c.out.Fields[w.field]; f != nil && f.Reducer != nil && f.Reducer.Exclusive {
			out = append(out, w)
		}
	}
	return out
}

// configWrites returns the state fields a node's config names as written.
func (c *compiler) configWrites(n *graph.Node) []fieldWrite {
	base := "nodes." + n.Name + ".config"
	if n.Type == SubgraphType {
		cn := c.out.Nodes[n.Name]
		if cn == nil || cn.Subgraph == nil {
			return nil
		}
		var out []fieldWrite
		for _, m := range cn.Subgraph.Output {
			if m.Expr != nil {
				out = append(out, fieldWrite{field: m.Field, path: base + ".output." + m.Field})
			}
		}
		return out
	}
	typ, ok := c.opts.Registry.Lookup(n.Type)
	if !ok {
		return nil
	}
	p := &writeProbe{n: n, g: *c.g}
	p.g.State = nil
	p.build(typ)
	seen := map[string]bool{}
	var out []fieldWrite
	for _, rel := range p.paths {
		field := c.fieldAt(n.Config, rel)
		if field == "" || seen[field] {
			continue
		}
		seen[field] = true
		out = append(out, fieldWrite{field: field, path: base + "." + rel})
	}
	return out
}

// fieldAt returns the declared state field a config path names as an
// output, or "": the string there (or its first dotted part) under an output
// key (field, output, status_output, into, answer_field), or the key itself
// under set, fields or output.fields. Other field names of a config (the
// messages a node reads, a request object, an image) are not writes.
func (c *compiler) fieldAt(cfg map[string]any, rel string) string {
	parts := strings.Split(rel, ".")
	var v any = cfg
	for _, p := range parts {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if v, ok = m[p]; !ok {
			return "" // a default the config does not write
		}
	}
	last := parts[len(parts)-1]
	var cands []string
	if len(parts) >= 2 && (parts[len(parts)-2] == "set" || parts[len(parts)-2] == "fields") {
		cands = append(cands, last)
	}
	if s, ok := v.(string); ok {
		switch last {
		case "field", "output", "status_output", "into", "answer_field":
			cands = append(cands, s, strings.SplitN(s, ".", 2)[0])
		}
	}
	for _, name := range cands {
		if c.out.Fields[name] != nil {
			return name
		}
	}
	return ""
}

// writeProbe is the Builder a node is built with a second time, against a
// copy of its graph that declares no state field, to learn which config
// values its type looks up as fields: each is reported as unknown-field at
// its config path. Expressions and templates compile to placeholders, and
// nothing reported reaches the user.
type writeProbe struct {
	n     *graph.Node
	g     graph.Graph
	paths []string
}

var _ node.Builder = (*writeProbe)(nil)

// build runs the type's constructor; a constructor confused by the missing
// fields teaches nothing more, even by panicking.
func (p *writeProbe) build(typ node.Type) {
	defer func() { _ = recover() }()
	_, _ = typ.New(p)
	sort.Strings(p.paths)
}

func (p *writeProbe) NodeName() string                           { return p.n.Name }
func (p *writeProbe) Graph() *graph.Graph                        { return &p.g }
func (p *writeProbe) Config() map[string]any                     { return p.n.Config }
func (p *writeProbe) Warnf(string, string, string, ...any)       {}
func (p *writeProbe) Failed() bool                               { return false }
func (p *writeProbe) Expr(_, src string, _ graph.Kind) node.Expr { return probeSource(src) }
func (p *writeProbe) Template(_, src string) node.Template       { return probeSource(src) }

func (p *writeProbe) Decode(v any) error {
	cfg := p.n.Config
	if cfg == nil {
		cfg = map[string]any{}
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode config of node %q: %w", p.n.Name, err)
	}
	return json.Unmarshal(b, v)
}

func (p *writeProbe) Errorf(path, code, _ string, _ ...any) {
	if code == "unknown-field" {
		p.paths = append(p.paths, path)
	}
}

// probeSource stands for a compiled expression or template in a writeProbe.
type probeSource string

func (s probeSource) Eval(map[string]any) (any, error)      { return nil, nil }
func (s probeSource) Render(map[string]any) (string, error) { return "", nil }
func (s probeSource) Source() string                        { return string(s) }

// inOrder lists the nodes of a set in declaration order.
func (c *compiler) inOrder(set map[string]bool) []string {
	if len(c.order) != len(c.out.NodeOrder) {
		c.order = make(map[string]int, len(c.out.NodeOrder))
		for i, name := range c.out.NodeOrder {
			c.order[name] = i
		}
	}
	out := make([]string, 0, len(set))
	for name := range set {
		if _, ok := c.order[name]; ok {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return c.order[out[i]] < c.order[out[j]] })
	return out
}
