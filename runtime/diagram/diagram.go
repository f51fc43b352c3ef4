// Package diagram renders a compiled graph's nodes and edges as Mermaid, as
// Graphviz DOT, or as JSON in the shape LangGraph's graph endpoint returns
// ({"nodes": [{"id", "type", "data"}], "edges": [{"source", "target", "conditional", "data"}]}).
package diagram

import (
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/graph"
)

// Start is the id of the virtual entry node in diagrams.
const Start = "__start__"

// End is the id of the virtual terminal node in diagrams.
const End = "__end__"

// Node is one vertex of a diagram.
type Node struct {
	ID   string         `json:"id"`
	Type string         `json:"type"`
	Data map[string]any `json:"data,omitempty"`
	// Subgraph is the diagram of the graph a subgraph node runs, else nil.
	Subgraph *Diagram `json:"-"`
}

// Edge is one arrow of a diagram.
type Edge struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Conditional bool   `json:"conditional"`
	// Label is the route condition, "default", "map", "catch" or empty.
	Label string `json:"data,omitempty"`
}

// Diagram is a graph's vertices and edges, in declaration order.
type Diagram struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Build lays out the graph: a start vertex, one per node, an end vertex, and
// one edge per next target, route, default, map fan-out and catch.
func Build(g *compile.Graph) Diagram {
	d := Diagram{Nodes: []Node{{ID: Start, Type: "schema", Data: map[string]any{"name": Start}}}}
	d.Edges = append(d.Edges, Edge{Source: Start, Target: g.Start})
	id := func(name string) string {
		if name == graph.End {
			return End
		}
		return name
	}
	for _, name := range g.NodeOrder {
		n := g.Nodes[name]
		vertex := Node{ID: name, Type: "runnable", Data: map[string]any{"name": name, "node_type": n.Spec.Type}}
		if n.Subgraph != nil && n.Subgraph.Graph != nil {
			child := Build(n.Subgraph.Graph)
			vertex.Subgraph = &child
			vertex.Data["graph"] = n.Subgraph.Graph.Spec.Name
		}
		d.Nodes = append(d.Nodes, vertex)
		for _, to := range n.Next {
			d.Edges = append(d.Edges, Edge{Source: name, Target: id(to)})
		}
		for _, r := range n.Routes {
			d.Edges = append(d.Edges, Edge{Source: name, Target: id(r.To), Conditional: true, Label: r.When.Source()})
		}
		if n.Default != "" {
			d.Edges = append(d.Edges, Edge{Source: name, Target: id(n.Default), Conditional: true, Label: "default"})
		}
		if n.Map != nil {
			d.Edges = append(d.Edges, Edge{Source: name, Target: id(n.Map.To), Conditional: true, Label: "map " + n.Map.Over.Source()})
		}
		for _, c := range n.Spec.Catch {
			d.Edges = append(d.Edges, Edge{Source: name, Target: id(c.To), Conditional: true, Label: "catch " + strings.Join(c.On, ",")})
		}
	}
	d.Nodes = append(d.Nodes, Node{ID: End, Type: "schema", Data: map[string]any{"name": End}})
	return d
}

// Mermaid renders the diagram as a Mermaid flowchart.
//
// Node names are used as Mermaid ids unless Mermaid would read them as
// something else (a keyword such as "end" or "style", or a name with a hyphen
// that could be taken for an arrow); those get a safe id and keep their name as
// the label. Every label is quoted, and characters Mermaid gives a meaning to
// (quotes, <, >, &, #, |, backquotes, brackets and braces) are written as
// entities, so a route condition shows exactly as written.
//
// A subgraph node is drawn as a Mermaid subgraph holding its child graph's
// diagram (nested ones inside it), whose ids are prefixed with the
// subgraph's id; edges into and out of the node meet the subgraph's frame.
func Mermaid(d Diagram) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	writeMermaid(&b, d, "", "  ")
	return b.String()
}

// writeMermaid writes the vertices and edges of d, their ids prefixed.
func writeMermaid(b *strings.Builder, d Diagram, prefix, indent string) {
	ids := mermaidIDs(d.Nodes)
	for k, v := range ids {
		ids[k] = prefix + v
	}
	for _, n := range d.Nodes {
		switch {
		case n.ID == Start:
			fmt.Fprintf(b, "%s%s([\"START\"])\n", indent, ids[n.ID])
		case n.ID == End:
			fmt.Fprintf(b, "%s%s([\"END\"])\n", indent, ids[n.ID])
		case n.Subgraph != nil:
			fmt.Fprintf(b, "%ssubgraph %s [\"%s<br/><small>subgraph %s</small>\"]\n", indent, ids[n.ID], mermaidText(n.ID), mermaidText(fmt.Sprint(n.Data["graph"])))
			writeMermaid(b, *n.Subgraph, ids[n.ID]+"__", indent+"  ")
			fmt.Fprintf(b, "%send\n", indent)
		default:
			fmt.Fprintf(b, "%s%s[\"%s<br/><small>%s</small>\"]\n", indent, ids[n.ID], mermaidText(n.ID), mermaidText(fmt.Sprint(n.Data["node_type"])))
		}
	}
	for _, e := range d.Edges {
		arrow := "-->"
		if e.Conditional {
			arrow = "-.->"
		}
		if e.Label != "" {
			fmt.Fprintf(b, "%s%s %s|\"%s\"| %s\n", indent, ids[e.Source], arrow, mermaidText(e.Label), ids[e.Target])
		} else {
			fmt.Fprintf(b, "%s%s %s %s\n", indent, ids[e.Source], arrow, ids[e.Target])
		}
	}
}

// mermaidKeywords are words Mermaid's flowchart grammar reads as keywords
// wherever a node id may stand (compared case-insensitively).
var mermaidKeywords = map[string]bool{
	"accdescr": true, "acctitle": true, "call": true, "class": true, "classdef": true, "click": true,
	"default": true, "direction": true, "end": true, "flowchart": true, "flowchart-elk": true, "graph": true,
	"href": true, "interpolate": true, "linkstyle": true, "style": true, "subgraph": true, "swimlane": true,
	"v": true, "o": true, "x": true,
}

// mermaidIDs gives each node a Mermaid id: its name when that is a plain
// identifier and no keyword, else a distinct generated one.
func mermaidIDs(nodes []Node) map[string]string {
	ids := make(map[string]string, len(nodes))
	used := map[string]bool{}
	var later []string
	for _, n := range nodes {
		if plainID(n.ID) && !mermaidKeywords[strings.ToLower(n.ID)] {
			ids[n.ID] = n.ID
			used[n.ID] = true
		} else {
			later = append(later, n.ID)
		}
	}
	for _, name := range later {
		base := "node_" + strings.Map(func(r rune) rune {
			if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, name)
		id := base
		for i := 2; used[id]; i++ {
			id = fmt.Sprintf("%s_%d", base, i)
		}
		ids[name] = id
		used[id] = true
	}
	return ids
}

// plainID reports whether s is letters, digits and underscores, not starting with a digit.
func plainID(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// mermaidText escapes text for a quoted Mermaid label: on one line, with
// every character Mermaid or its HTML labels interpret written as an entity.
func mermaidText(s string) string {
	lines := LabelLines(s)
	for i, line := range lines {
		lines[i] = mermaidEscaper.Replace(line)
	}
	return strings.Join(lines, "<br/>")
}

// LabelLines is how a diagram shows a label: its lines with runs of spaces
// and tabs collapsed, without leading or trailing blanks or empty lines.
func LabelLines(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.Join(strings.Fields(line), " "); line != "" {
			out = append(out, line)
		}
	}
	return out
}

var mermaidEscaper = strings.NewReplacer(
	"#", "#35;", `"`, "#quot;", "&", "#amp;", "<", "#lt;", ">", "#gt;", "`", "#96;")

// DOT renders the diagram in Graphviz's DOT language.
func DOT(d Diagram, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n  rankdir=TB;\n  node [shape=box, style=rounded];\n", dotString(name))
	for _, n := range d.Nodes {
		switch n.ID {
		case Start, End:
			fmt.Fprintf(&b, "  %s [shape=oval, label=%s];\n", dotString(n.ID), dotString(strings.Trim(strings.ToUpper(n.ID), "_")))
		default:
			fmt.Fprintf(&b, "  %s [label=%s];\n", dotString(n.ID), dotString(fmt.Sprintf("%s\n(%v)", n.ID, n.Data["node_type"])))
		}
	}
	for _, e := range d.Edges {
		attrs := []string{}
		if e.Conditional {
			attrs = append(attrs, "style=dashed")
		}
		if e.Label != "" {
			attrs = append(attrs, "label="+dotString(strings.Join(LabelLines(e.Label), "\n")))
		}
		fmt.Fprintf(&b, "  %s -> %s", dotString(e.Source), dotString(e.Target))
		if len(attrs) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(attrs, ", "))
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// dotString quotes s as a DOT string. Inside a label Graphviz reads a
// backslash as an escape (\n, \l, \N, …), so backslashes are doubled and a
// newline becomes \n (a centred line break); other characters stay as they are.
func dotString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
