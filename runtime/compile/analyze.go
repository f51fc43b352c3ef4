package compile

import (
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
	"github.com/graphctl/graphctl/runtime/graph"
)

// flow is the control-flow graph of the declared nodes, by index in
// declaration order. END is not a vertex: reachesEnd marks the nodes with an
// edge to it.
type flow struct {
	names []string
	index map[string]int
	// out holds every edge; cond marks the conditional ones (routes, default,
	// map, catch, and edges assumed for misspelt targets).
	out  [][]int
	cond []map[int]bool
	// endDirect marks nodes with an edge to END; endCond those with a
	// conditional one.
	endDirect, endCond []bool
	// open marks nodes with an unknown target that resembles no node: their
	// flow is unknown, so nothing is concluded from them.
	open []bool
}

func (c *compiler) buildFlow() *flow {
	names := c.out.NodeOrder
	f := &flow{
		names:     names,
		index:     make(map[string]int, len(names)),
		out:       make([][]int, len(names)),
		cond:      make([]map[int]bool, len(names)),
		endDirect: make([]bool, len(names)),
		endCond:   make([]bool, len(names)),
		open:      make([]bool, len(names)),
	}
	for i, name := range names {
		f.index[name] = i
	}
	for i, name := range names {
		n := c.nodes[name]
		f.cond[i] = map[int]bool{}
		f.open[i] = c.unresolved[name]
		add := func(target string, conditional bool) {
			if target == graph.End {
				f.endDirect[i] = true
				f.endCond[i] = f.endCond[i] || conditional
				return
			}
			j, ok := f.index[target]
			if !ok {
				return
			}
			f.out[i] = append(f.out[i], j)
			if conditional {
				f.cond[i][j] = true
			}
		}
		for _, t := range n.Next {
			add(t, false)
		}
		for _, r := range n.Routes {
			add(r.To, true)
		}
		if n.Default != "" {
			add(n.Default, true)
		}
		if n.Map != nil {
			add(n.Map.To, true)
		}
		for _, cat := range n.Catch {
			add(cat.To, true)
		}
		for _, t := range c.assumed[name] {
			add(t, true)
		}
	}
	return f
}

// reach returns the nodes reachable from the given ones (included).
func (f *flow) reach(from ...int) []bool {
	seen := make([]bool, len(f.names))
	stack := append([]int(nil), from...)
	for _, i := range from {
		seen[i] = true
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range f.out[i] {
			if !seen[j] {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
	return seen
}

// canEnd returns the nodes from which END can be reached, counting nodes of
// unknown flow as able to.
func (f *flow) canEnd() []bool {
	in := make([][]int, len(f.names))
	for i, outs := range f.out {
		for _, j := range outs {
			in[j] = append(in[j], i)
		}
	}
	ok := make([]bool, len(f.names))
	var stack []int
	for i := range f.names {
		if f.endDirect[i] || f.open[i] {
			ok[i] = true
			stack = append(stack, i)
		}
	}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, i := range in[j] {
			if !ok[i] {
				ok[i] = true
				stack = append(stack, i)
			}
		}
	}
	return ok
}

// sccs returns the strongly connected components (Tarjan's algorithm, without
// recursion), each listing node indexes in declaration order, and the
// component of every node.
func (f *flow) sccs() ([][]int, []int) {
	n := len(f.names)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	comp := make([]int, n)
	for i := range index {
		index[i] = -1
	}
	var (
		stack []int
		comps [][]int
		next  int
	)
	type frame struct{ v, edge int }
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{v: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			top := &call[len(call)-1]
			v := top.v
			if top.edge < len(f.out[v]) {
				w := f.out[v][top.edge]
				top.edge++
				switch {
				case index[w] < 0:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w})
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var members []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = len(comps)
				members = append(members, w)
				if w == v {
					break
				}
			}
			sortInts(members)
			comps = append(comps, members)
		}
	}
	return comps, comp
}

func sortInts(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// cyclic reports whether a component is a cycle: more than one node, or one
// node with an edge to itself.
func (f *flow) cyclic(members []int) bool {
	if len(members) > 1 {
		return true
	}
	for _, j := range f.out[members[0]] {
		if j == members[0] {
			return true
		}
	}
	return false
}

// analyze runs the whole-graph checks: unreachable nodes, nodes that cannot
// reach END, cycles without a conditional exit, and joins waiting for nodes
// that cannot lead to them.
func (c *compiler) analyze() {
	f := c.buildFlow()
	if len(f.names) == 0 {
		return
	}
	if c.edgeless(f) {
		return
	}
	comps, comp := f.sccs()
	c.checkReachable(f, comps, comp)
	exitless := c.checkCycles(f, comps)
	c.checkEnd(f, comp, exitless)
	c.checkWaitFor(f)
}

func (c *compiler) nodePath(name string) string { return "nodes." + name }

// checkReachable reports the nodes start never leads to, once per unreachable
// region: at the first node of each unreachable component nothing outside it
// leads to.
func (c *compiler) checkReachable(f *flow, comps [][]int, comp []int) {
	start, ok := f.index[c.g.Start]
	if !ok {
		if best := c.closest(c.g.Start, f.names); best != "" {
			start = f.index[best]
		} else {
			return
		}
	}
	for i := range f.names {
		if f.open[i] {
			return // an unknown target may be the missing edge
		}
	}
	seen := f.reach(start)
	entered := make([]bool, len(comps))
	for i, outs := range f.out {
		for _, j := range outs {
			if comp[i] != comp[j] {
				entered[comp[j]] = true
			}
		}
	}
	for ci, members := range comps {
		first := members[0]
		if seen[first] || entered[ci] {
			continue
		}
		region := f.reach(first)
		var also []string
		for j, in := range region {
			if in && j != first && !seen[j] {
				also = append(also, f.names[j])
			}
		}
		name := f.names[first]
		msg := fmt.Sprintf("node %q is never reached from start %q: no next, route, default, map or catch leads to it", name, c.g.Start)
		if len(also) > 0 {
			msg += fmt.Sprintf(" (nor are %s, reached only through it)", quoteList(also))
		}
		c.errorf(c.pos(c.nodePath(name), c.nodes[name].Pos), CodeUnreachableNode, c.nodePath(name), "%s", msg)
	}
}

// loopsByChoice reports whether a cycle is only taken through a conditional
// edge inside it (a route or catch back to an earlier node) while one of its
// nodes also leaves it unconditionally: the run goes round only when the
// condition holds, and otherwise leaves by the plain edge.
func loopsByChoice(f *flow, members []int, in map[int]bool) bool {
	insideCond, leaves := false, false
	for _, m := range members {
		if f.endDirect[m] {
			leaves = true
		}
		for _, j := range f.out[m] {
			switch {
			case !in[j]:
				leaves = true
			case f.cond[m][j]:
				insideCond = true
			}
		}
	}
	return insideCond && leaves
}

// checkCycles reports cycles that cannot be left: none of whose nodes has a
// conditional edge leading out of the cycle or to END, and that are not
// entered by choice (see loopsByChoice). It returns the components it reported.
func (c *compiler) checkCycles(f *flow, comps [][]int) map[int]bool {
	exitless := map[int]bool{}
	for ci, members := range comps {
		if !f.cyclic(members) {
			continue
		}
		in := make(map[int]bool, len(members))
		for _, m := range members {
			in[m] = true
		}
		exit := false
		for _, m := range members {
			// A node whose misspelt target is assumed to mean a node of the
			// cycle is reported at the typo; the cycle may be its consequence.
			if f.endCond[m] || f.open[m] || len(c.assumed[f.names[m]]) > 0 {
				exit = true
				break
			}
			for j := range f.cond[m] {
				if !in[j] {
					exit = true
					break
				}
			}
		}
		if !exit && loopsByChoice(f, members, in) {
			exit = true
		}
		if exit {
			continue
		}
		exitless[ci] = true
		loop := c.closingLoop(f, members, in)
		names := make([]string, len(loop))
		for i, m := range loop {
			names[i] = f.names[m]
		}
		cycle := strings.Join(append(names, names[0]), " -> ")
		last := names[len(names)-1]
		path, pos := c.edgeTo(last, names[0])
		back := fmt.Sprintf("%q", names[0])
		if len(names) == 1 {
			back = "itself"
		}
		c.errorf(pos, CodeCycleWithoutExit, path,
			"node %q goes back to %s, closing cycle %s, which has no way out: give one of its nodes routes (with a default), a map or a catch leading outside the cycle or to END",
			last, back, cycle)
	}
	return exitless
}

// closingLoop returns one loop of a cycle's nodes, in order: it starts at the
// node by which runs from start enter the cycle (else the first declared) and
// follows the shortest way back to it, so that its last edge is the one that
// closes the cycle.
func (c *compiler) closingLoop(f *flow, members []int, in map[int]bool) []int {
	head := members[0]
	if start, ok := f.index[c.g.Start]; ok {
		// Breadth-first from start: the first member met is the entry.
		seen := map[int]bool{start: true}
		queue := []int{start}
	search:
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			if in[i] {
				head = i
				break search
			}
			for _, j := range f.out[i] {
				if !seen[j] {
					seen[j] = true
					queue = append(queue, j)
				}
			}
		}
	}
	// Breadth-first inside the cycle from head back to head.
	parent := map[int]int{}
	queue := []int{head}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, j := range f.out[i] {
			if !in[j] {
				continue
			}
			if j == head {
				loop := []int{i}
				for k := i; k != head; {
					k = parent[k]
					loop = append(loop, k)
				}
				for l, r := 0, len(loop)-1; l < r; l, r = l+1, r-1 {
					loop[l], loop[r] = loop[r], loop[l]
				}
				return loop
			}
			if _, ok := parent[j]; !ok && j != head {
				parent[j] = i
				queue = append(queue, j)
			}
		}
	}
	return members
}

// edgeTo returns the document path and position of the first of node from's
// targets (next, routes, default, map, catch) that names node to.
func (c *compiler) edgeTo(from, to string) (string, diag.Pos) {
	n := c.nodes[from]
	base := c.nodePath(from)
	for i, t := range n.Next {
		if t == to {
			path := fmt.Sprintf("%s.next.%d", base, i)
			if _, ok := c.g.Pos[path]; !ok && len(n.Next) == 1 {
				path = base + ".next"
			}
			return path, c.nearest(path, n.Pos)
		}
	}
	for i, r := range n.Routes {
		if r.To == to {
			path := fmt.Sprintf("%s.routes.%d.to", base, i)
			return path, c.pos(path, r.ToPos)
		}
	}
	if n.Default == to {
		return base + ".default", c.nearest(base+".default", n.Pos)
	}
	if n.Map != nil && n.Map.To == to {
		return base + ".map.to", c.pos(base+".map.to", n.Map.ToPos)
	}
	for i, cat := range n.Catch {
		if cat.To == to {
			path := fmt.Sprintf("%s.catch.%d.to", base, i)
			return path, c.pos(path, cat.Pos)
		}
	}
	return base, c.pos(base, n.Pos)
}

// checkEnd reports the nodes where every path stops short of END: nodes that
// cannot reach END and lead to no other node. Nodes upstream of them, and
// cycles already reported, are consequences and not reported again.
func (c *compiler) checkEnd(f *flow, comp []int, exitless map[int]bool) {
	ok := f.canEnd()
	for i, name := range f.names {
		if ok[i] || exitless[comp[i]] || len(f.out[i]) > 0 {
			continue
		}
		n := c.nodes[name]
		msg := fmt.Sprintf("node %q leads nowhere, so END cannot be reached from it: give it next (a node or END), or routes with a default", name)
		c.errorf(c.pos(c.nodePath(name), n.Pos), CodeNoPathToEnd, c.nodePath(name), "%s", msg)
	}
}

// checkWaitFor reports wait_for entries naming a node from which the join
// cannot be reached: the join would wait forever.
func (c *compiler) checkWaitFor(f *flow) {
	for j, name := range f.names {
		n := c.nodes[name]
		for k, w := range n.WaitFor {
			i, ok := f.index[w]
			if !ok || w == name {
				continue
			}
			if f.open[i] || f.reach(i)[j] {
				continue
			}
			path := fmt.Sprintf("%s.wait_for.%d", c.nodePath(name), k)
			c.errorf(c.pos(path, n.Pos), CodeWaitForUnreachable, path,
				"node %q waits for %q, but no path leads from %q to %q, so it would wait forever", name, w, w, name)
		}
	}
}

// edgeless reports, once, a graph of several nodes none of which has an edge
// (written as LangGraph's edges list, say, or not at all): every node would
// otherwise be reported as leading nowhere, and all but start as unreachable.
func (c *compiler) edgeless(f *flow) bool {
	if len(f.names) < 2 {
		return false
	}
	for i := range f.names {
		if len(f.out[i]) > 0 || f.endDirect[i] || f.open[i] {
			return false
		}
	}
	first, second := f.names[0], f.names[1]
	if s, ok := f.index[c.g.Start]; ok && s != 0 {
		first, second = c.g.Start, f.names[0]
	}
	c.errorf(c.pos(c.nodePath(first), c.nodes[first].Pos), CodeNoPathToEnd, c.nodePath(first),
		"no node has an edge, so a run stops after %q: edges are written on the node they leave, e.g. %s: {…, next: %q} and %s: {…, next: \"END\"} (next takes a node, a list of nodes or END; routes choose one)",
		first, first, second, second)
	return true
}
