package engine

import (
	"fmt"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/event"
)

// MapEmpty is the type of the event a map over an empty list sends.
const MapEmpty = "map_empty"

// successors returns the tasks that follow a node, as Engine.successors does,
// and handles a map over an empty list by its on_empty setting: "continue"
// goes on as if the map's target had run for no item (it counts as arrived
// for the joins waiting for it, and its own successors follow), so a join
// after a fan-out runs with an empty result rather than never; "error" fails.
// Either way a map_empty event says so.
func (r *run) successors(name string, scope map[string]any) ([]checkpoint.Task, error) {
	return r.successorsFrom(name, scope, nil)
}

// successorsFrom is successors, skipping map targets already passed over
// (a chain of empty maps that loops back).
func (r *run) successorsFrom(name string, scope map[string]any, passed map[string]bool) ([]checkpoint.Task, error) {
	succ, err := r.e.successors(name, scope)
	if err != nil {
		return nil, err
	}
	m := r.e.graph.Nodes[name].Map
	if m == nil {
		return succ, nil
	}
	for _, t := range succ {
		if t.HasItem && t.Node == m.To {
			return succ, nil
		}
	}
	r.sink(event.Event{Type: MapEmpty, Node: name, Payload: map[string]any{
		"node": name, "over": m.Over.Source(), "to": m.To, "on_empty": m.OnEmpty,
	}})
	if m.OnEmpty == compile.MapError {
		return nil, fmt.Errorf("node %q: map over %q is empty, so %q has nothing to run for (map.on_empty is \"error\"; \"continue\" would go on with an empty result)",
			name, m.Over.Source(), m.To)
	}
	if passed[m.To] {
		return succ, nil
	}
	if passed == nil {
		passed = map[string]bool{}
	}
	passed[m.To] = true
	r.joins.arrive(r.e, m.To)
	after, err := r.successorsFrom(m.To, scope, passed)
	if err != nil {
		return nil, err
	}
	return append(succ, after...), nil
}
