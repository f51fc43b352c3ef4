package engine

import (
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// checkRequest refuses what a request names that the graph does not have
// (interrupt_before and interrupt_after nodes; "*" is every node) and a
// negative recursion limit, instead of ignoring them.
func (e *Engine) checkRequest(req Request) error {
	if _, err := checkpoint.ParseDurability(string(req.Durability), ""); err != nil {
		return err
	}
	if req.RecursionLimit < 0 {
		return fmt.Errorf("recursion limit must be positive (or 0 for the graph's), got %d", req.RecursionLimit)
	}
	for _, f := range []struct {
		name  string
		nodes []string
	}{{"interrupt_before", req.InterruptBefore}, {"interrupt_after", req.InterruptAfter}} {
		for _, n := range f.nodes {
			if _, ok := e.graph.Nodes[n]; !ok && n != "*" {
				return fmt.Errorf("%s names node %q, which graph %q does not have (nodes: %s)", f.name, n, e.graph.Spec.Name, strings.Join(e.graph.NodeOrder, ", "))
			}
		}
	}
	return nil
}
