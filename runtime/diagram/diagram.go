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
		d.Nodes = append(d.Nodes, Node{ID: name, Type: "runnable", Data: map[string]any{"name": name, "node_type": n.Spec.Type}})
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
func Mermaid(d Diagram) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, n := range d.Nodes {
		switch n.ID {
		case Start:
			fmt.Fprintf(&b, "  %s([START])\n", n.ID)
		case End:
			fmt.Fprintf(&b, "  %s([END])\n", n.ID)
		default:
			fmt.Fprintf(&b, "  %s[\"%s<br/><small>%v</small>\"]\n", n.ID, n.ID, n.Data["node_type"])
		}
	}
	for _, e := range d.Edges {
		arrow := "-->"
		if e.Conditional {
			arrow = "-.->"
		}
		if e.Label != "" {
			fmt.Fprintf(&b, "  %s %s|%s| %s\n", e.Source, arrow, mermaidLabel(e.Label), e.Target)
		} else {
			fmt.Fprintf(&b, "  %s %s %s\n", e.Source, arrow, e.Target)
		}
	}
	return b.String()
}

func mermaidLabel(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "|", "#124;", "\n", " ").Replace(s)
}

// DOT renders the diagram in Graphviz's DOT language.
func DOT(d Diagram, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=TB;\n  node [shape=box, style=rounded];\n", name)
	for _, n := range d.Nodes {
		switch n.ID {
		case Start, End:
			fmt.Fprintf(&b, "  %q [shape=oval, label=%q];\n", n.ID, strings.Trim(strings.ToUpper(n.ID), "_"))
		default:
			fmt.Fprintf(&b, "  %q [label=%q];\n", n.ID, fmt.Sprintf("%s\n(%v)", n.ID, n.Data["node_type"]))
		}
	}
	for _, e := range d.Edges {
		attrs := []string{}
		if e.Conditional {
			attrs = append(attrs, "style=dashed")
		}
		if e.Label != "" {
			attrs = append(attrs, fmt.Sprintf("label=%q", e.Label))
		}
		fmt.Fprintf(&b, "  %q -> %q", e.Source, e.Target)
		if len(attrs) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(attrs, ", "))
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	return b.String()
}
