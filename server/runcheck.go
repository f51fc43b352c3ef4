package server

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/graphctl/graphctl/runtime/compile"
)

// checkRunNodes refuses (422, naming the field) what a run request names
// that the graph does not have — interrupt_before and interrupt_after nodes
// ("*" is every node) — and a recursion_limit that is not a positive
// integer, so that none of them is ignored silently.
func checkRunNodes(g *compile.Graph, body *runBody) error {
	for _, f := range []struct {
		name string
		v    any
	}{{"interrupt_before", body.InterruptBefore}, {"interrupt_after", body.InterruptAfter}} {
		names, err := stringList(f.name, f.v)
		if err != nil {
			return err
		}
		for _, n := range names {
			if _, ok := g.Nodes[n]; !ok && n != "*" {
				return invalid("%s names node %q, which graph %q does not have (nodes: %s; \"*\" is every node)", f.name, n, g.Spec.Name, strings.Join(g.NodeOrder, ", "))
			}
		}
	}
	for _, where := range []struct {
		path string
		m    map[string]any
	}{{"config.recursion_limit", body.Config}, {"config.configurable.recursion_limit", asMap(body.Config["configurable"])}} {
		v, ok := where.m["recursion_limit"]
		if !ok || v == nil {
			continue
		}
		var n float64
		switch x := v.(type) {
		case float64:
			n = x
		case json.Number:
			n, _ = x.Float64()
		default:
			return invalid("%s must be a positive integer, not %v", where.path, v)
		}
		if n < 1 || n != math.Trunc(n) {
			return invalid("%s must be a positive integer, got %v", where.path, v)
		}
	}
	return nil
}
