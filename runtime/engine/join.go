package engine

import (
	"github.com/graphctl/graphctl/runtime/compile"
)

// joinsKey is the checkpoint metadata key under which the progress of the
// joins is stored between steps.
const joinsKey = "joins"

// triggeredKey marks, in a join's stored list of completed nodes, that an
// edge has led to the join.
const triggeredKey = "\x00triggered"

// joinState is the progress of the wait_for joins, by join node.
type joinState map[string]*joinProgress

// joinProgress is how far one join node is from running.
type joinProgress struct {
	// arrived holds the nodes it waits for that have completed.
	arrived map[string]bool
	// triggered is set once an edge has led to the join.
	triggered bool
}

// loadJoins reads the joins' progress from a checkpoint's metadata, where
// each join node maps to the sorted list of the nodes it waits for that
// have completed, with triggeredKey among them once an edge led to it.
func loadJoins(meta map[string]any) joinState {
	js := joinState{}
	raw, _ := meta[joinsKey].(map[string]any)
	for join, v := range raw {
		list, _ := v.([]any)
		p := &joinProgress{arrived: map[string]bool{}}
		for _, item := range list {
			switch s, ok := item.(string); {
			case !ok:
			case s == triggeredKey:
				p.triggered = true
			default:
				p.arrived[s] = true
			}
		}
		js[join] = p
	}
	return js
}

// store writes the joins' progress into a checkpoint's metadata in the form
// loadJoins reads; with no join in progress it writes nothing.
func (js joinState) store(meta map[string]any) {
	if len(js) == 0 {
		return
	}
	out := make(map[string]any, len(js))
	for join, p := range js {
		out[join] = p.list()
	}
	meta[joinsKey] = out
}

// list is the stored form of p: its arrived nodes and, once triggered,
// triggeredKey, sorted.
func (p *joinProgress) list() []string {
	set := make(map[string]bool, len(p.arrived)+1)
	for node := range p.arrived {
		set[node] = true
	}
	if p.triggered {
		set[triggeredKey] = true
	}
	return sortedKeys(set)
}

// progress returns the progress of the join node join, starting it if it
// has none yet.
func (js joinState) progress(join string) *joinProgress {
	p := js[join]
	if p == nil {
		p = &joinProgress{arrived: map[string]bool{}}
		js[join] = p
	}
	return p
}

// arrive records that node completed, for every join waiting for it.
func (js joinState) arrive(e *Engine, node string) {
	for _, join := range e.joinsOf[node] {
		js.progress(join).arrived[node] = true
	}
}

// trigger records that an edge led to the join n and reports whether it can
// run now, that is whether every node it waits for has completed. A join that
// runs starts waiting afresh.
func (js joinState) trigger(n *compile.Node) bool {
	p := js.progress(n.Name)
	p.triggered = true
	for _, w := range n.WaitFor {
		if !p.arrived[w] {
			return false
		}
	}
	delete(js, n.Name)
	return true
}
