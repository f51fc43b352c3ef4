package compile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/expression"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// indexNodes indexes the nodes by name, reports reserved and duplicate names,
// and records the extra names map targets see.
func (c *compiler) indexNodes() {
	for _, n := range c.g.Nodes {
		path := "nodes." + n.Name
		if n.Name == graph.End || n.Name == reservedStart {
			c.errorf(c.pos(path, n.Pos), CodeReservedName, path,
				"node name %q is reserved: %s marks the end of a run and %s its beginning", n.Name, graph.End, reservedStart)
			if n.Name == graph.End {
				continue // every edge to END means the end of the run, never this node
			}
		}
		switch {
		case c.nodes[n.Name] != nil:
			c.errorf(c.pos(path, n.Pos), CodeDuplicateName, path, "node %q is declared twice", n.Name)
			continue
		}
		c.nodes[n.Name] = n
	}
	for _, n := range c.g.Nodes {
		if n.Map == nil {
			continue
		}
		as := mapItemName(n.Map)
		c.mapItems[n.Map.To] = append(c.mapItems[n.Map.To], as)
	}
}

// LangGraph's names of the virtual first and last nodes, which a graph file
// writes as its start key and END.
const (
	langGraphStart = "__start__"
	langGraphEnd   = "__end__"
)

// nodeNames returns the declared node names in declaration order, followed
// by END when withEnd. The slices are made once, after indexNodes, and are
// not to be changed: an error per node of a graph of thousands must not copy
// them each time.
func (c *compiler) nodeNames(withEnd bool) []string {
	if c.names == nil {
		c.names = make([]string, 0, len(c.nodes))
		for _, n := range c.g.Nodes {
			if c.nodes[n.Name] == n {
				c.names = append(c.names, n.Name)
			}
		}
		c.names = slices.Clip(c.names)
		c.namesEnd = append(c.names, graph.End)
	}
	if withEnd {
		return c.namesEnd
	}
	return c.names
}

func (c *compiler) checkStart() {
	if c.g.Start == "" || c.nodes[c.g.Start] != nil {
		return
	}
	hint := c.didYouMean(c.g.Start, c.nodeNames(false))
	switch {
	case strings.EqualFold(c.g.Start, langGraphStart) || c.g.Start == reservedStart:
		hint = fmt.Sprintf(": start names the first node to run (LangGraph's edge from %s to it)", langGraphStart)
	case len(c.g.Nodes) == 0:
		hint = fmt.Sprintf(": the graph declares no nodes (nodes: {%s: {type: …}})", c.g.Start)
	}
	c.errorf(c.pos("start", diag.Pos{}), CodeUnknownStart, "start",
		"start names unknown node %q%s", c.g.Start, hint)
}

// checkTarget reports a target naming no node. END is accepted when endOK.
// edge says whether the target is an edge of control (not a wait_for entry).
func (c *compiler) checkTarget(n *graph.Node, what, path string, fallback diag.Pos, target string, endOK, edge bool) bool {
	if target == graph.End && endOK {
		return true
	}
	if c.nodes[target] != nil {
		return true
	}
	at := c.pos(path, fallback)
	if target == graph.End {
		if edge {
			c.unresolved[n.Name] = true
		}
		c.errorf(at, CodeUnknownTarget, path, "node %q: %s cannot name %s, only a node", n.Name, what, graph.End)
		return false
	}
	cands := c.nodeNames(endOK)
	best := c.closest(target, cands)
	hint := didYouMean(best)
	if hint == "" {
		hint = fmt.Sprintf(" (the nodes are %s)", listNames(cands))
	}
	if endOK && strings.EqualFold(target, langGraphEnd) {
		best, hint = graph.End, fmt.Sprintf("; did you mean %q? (LangGraph's %s is written %s)", graph.End, langGraphEnd, graph.End)
	}
	if edge {
		if best != "" {
			c.assumed[n.Name] = append(c.assumed[n.Name], best)
		} else {
			c.unresolved[n.Name] = true
		}
	}
	c.errorf(at, CodeUnknownTarget, path, "node %q: %s names unknown node %q%s", n.Name, what, target, hint)
	return false
}

// compileNode checks a node's edges, compiles its routing expressions and
// builds it through its node type.
func (c *compiler) compileNode(n *graph.Node) {
	base := "nodes." + n.Name
	cn := &Node{Name: n.Name, Spec: n, Default: n.Default}
	c.out.Nodes[n.Name] = cn
	c.out.NodeOrder = append(c.out.NodeOrder, n.Name)

	for i, t := range n.Next {
		path := fmt.Sprintf("%s.next.%d", base, i)
		if _, ok := c.g.Pos[path]; !ok && len(n.Next) == 1 {
			path = base + ".next"
		}
		c.checkTarget(n, "next", path, diag.Pos{}, t, true, true)
		cn.Next = append(cn.Next, t)
	}

	for i, r := range n.Routes {
		path := fmt.Sprintf("%s.routes.%d", base, i)
		c.checkTarget(n, fmt.Sprintf("route %d", i), path+".to", r.ToPos, r.To, true, true)
		when := c.compileExpr(c.env, path+".when", c.pos(path+".when", r.WhenPos), r.When, graph.Bool)
		cn.Routes = append(cn.Routes, Route{When: when, To: r.To})
	}
	if n.Default != "" {
		c.checkTarget(n, "default", base+".default", diag.Pos{}, n.Default, true, true)
	}
	if len(n.Routes) > 0 && n.Default == "" {
		c.errorf(c.pos(base+".routes", n.Pos), CodeMissingDefault, base+".routes",
			"node %q has routes but no default: add `default: <node>` for when no route matches", n.Name)
	}

	if m := n.Map; m != nil {
		path := base + ".map"
		c.checkTarget(n, "map", path+".to", m.ToPos, m.To, false, true)
		over := c.compileExpr(c.env, path+".over", c.pos(path+".over", m.OverPos), m.Over, graph.List)
		as := mapItemName(m)
		onEmpty := m.OnEmpty
		if onEmpty == "" {
			onEmpty = MapContinue
		}
		cn.Map = &Map{Over: over, To: m.To, As: as, OnEmpty: onEmpty}
	}

	for i, cat := range n.Catch {
		path := fmt.Sprintf("%s.catch.%d.to", base, i)
		c.checkTarget(n, fmt.Sprintf("catch %d", i), path, cat.Pos, cat.To, true, true)
	}

	for i, w := range n.WaitFor {
		path := fmt.Sprintf("%s.wait_for.%d", base, i)
		if c.checkTarget(n, "wait_for", path, diag.Pos{}, w, false, false) && w == n.Name {
			c.errorf(c.pos(path, diag.Pos{}), CodeWaitForUnreachable, path, "node %q waits for itself", n.Name)
		}
		cn.WaitFor = append(cn.WaitFor, w)
	}

	if n.Cache != nil {
		path := base + ".cache.key"
		key := c.compileExpr(c.nodeEnv(n), path, c.pos(path, n.Cache.KeyPos), n.Cache.Key, "")
		if key != nil {
			cn.Cache = &Cache{Key: key, TTL: n.Cache.TTL}
		}
	}

	if n.Type == SubgraphType {
		if cn.Subgraph = c.compileSubgraph(n); cn.Subgraph != nil {
			cn.Impl = subgraphPlaceholder
		}
		return
	}
	cn.Impl = c.build(n)
}

// nodeEnv is the expression environment of a node: the graph's, plus the
// item names the node sees as the target of a map.
func (c *compiler) nodeEnv(n *graph.Node) *expression.Env {
	env := c.env
	if items := c.mapItems[n.Name]; len(items) > 0 {
		extra := make(map[string]graph.Type, len(items))
		for _, as := range items {
			extra[as] = graph.Type{Kind: graph.Any}
		}
		env = env.With(extra)
	}
	return env
}

// build constructs the node through its registered type. Nodes of unknown types
// are skipped: the loader reports them.
func (c *compiler) build(n *graph.Node) node.Node {
	typ, ok := c.opts.Registry.Lookup(n.Type)
	if !ok {
		return nil
	}
	b := &builder{c: c, n: n, env: c.nodeEnv(n)}
	impl, err := newNode(typ, b)
	if err != nil {
		var rep *reportedError
		if !errors.As(err, &rep) || !b.failed {
			b.Errorf("", CodeInvalidConfig, "node %q of type %q: %v", n.Name, n.Type, err)
		}
		return nil
	}
	if b.failed {
		return nil
	}
	if impl == nil {
		b.Errorf("", CodeInvalidConfig, "node %q of type %q: the node type built no node", n.Name, n.Type)
	}
	return impl
}

// newNode calls a node type's constructor, turning a panic into an error so
// that one faulty node type cannot take down validation of the whole graph.
func newNode(typ node.Type, b *builder) (impl node.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("constructor of node type %q panicked: %v", typ.Name, r)
		}
	}()
	return typ.New(b)
}

// fillSources records, for every node, the nodes that hand control to it.
func (c *compiler) fillSources() {
	for _, name := range c.out.NodeOrder {
		seen := map[string]bool{}
		for _, t := range c.nodes[name].Targets() {
			tn := c.out.Nodes[t]
			if tn == nil || seen[t] {
				continue
			}
			seen[t] = true
			tn.Sources = append(tn.Sources, name)
		}
	}
}

// mapItemName is the name a map's target sees each item under: its as, or
// "item".
func mapItemName(m *graph.MapRoute) string {
	if m.As == "" {
		return defaultMapItemName
	}
	return m.As
}
