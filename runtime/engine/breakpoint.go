package engine

import (
	"slices"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// Breakpoint is where a run stopped at a static breakpoint: before the
// tasks of nodes Request.InterruptBefore names, or after nodes
// Request.InterruptAfter names ran. As in
// LangGraph, a breakpoint asks nothing and records no interrupt: the thread
// is interrupted with its next tasks pending, and a run with no input (or
// a Command) goes on from it.
type Breakpoint struct {
	// When is "before" or "after".
	When string
	// Nodes are the nodes the run stopped before, or those after which it
	// stopped.
	Nodes []string
}

// The values of Breakpoint.When.
const (
	BreakpointBefore = "before"
	BreakpointAfter  = "after"
)

// breakpointKey is the checkpoint metadata key under which a checkpoint
// a run stopped at records its breakpoint.
const breakpointKey = checkpoint.BreakpointKey

// metadata is the breakpoint as a checkpoint's metadata stores it.
func (b *Breakpoint) metadata() map[string]any {
	nodes := make([]any, len(b.Nodes))
	for i, n := range b.Nodes {
		nodes[i] = n
	}
	return map[string]any{"when": b.When, "nodes": nodes}
}

// IsBreakpointMetadata reports whether key is the checkpoint metadata key
// the engine records a breakpoint under, which clients are not shown.
func IsBreakpointMetadata(key string) bool { return key == breakpointKey }

// StoppedAt returns the breakpoint a thread whose newest checkpoint is cp
// is stopped at, or nil. A checkpoint with no task left to run is stopped
// at none. Earlier versions recorded a breakpoint as an interrupt whose
// When is "before" or "after"; those are read as breakpoints too.
func StoppedAt(cp *checkpoint.Checkpoint) *Breakpoint {
	if len(cp.Next) == 0 {
		return nil
	}
	if m, ok := cp.Metadata[breakpointKey].(map[string]any); ok {
		b := &Breakpoint{}
		b.When, _ = m["when"].(string)
		switch nodes := m["nodes"].(type) {
		case []any:
			for _, n := range nodes {
				if s, ok := n.(string); ok {
					b.Nodes = append(b.Nodes, s)
				}
			}
		case []string:
			b.Nodes = append(b.Nodes, nodes...)
		}
		if b.When == BreakpointBefore || b.When == BreakpointAfter {
			return b
		}
	}
	var b *Breakpoint
	for _, in := range cp.Interrupts {
		if !isLegacyStop(in) {
			continue
		}
		if b == nil {
			b = &Breakpoint{When: in.When}
		}
		b.Nodes = append(b.Nodes, in.Node)
	}
	return b
}

// isLegacyStop reports whether in is a breakpoint as earlier versions
// recorded one: an interrupt that asks nothing, before or after a node.
func isLegacyStop(in checkpoint.Interrupt) bool {
	return in.Namespace == "" && (in.When == BreakpointBefore || in.When == BreakpointAfter)
}

// WaitingInterrupts returns the interrupts of cp that wait for an answer:
// all of them but the breakpoints earlier versions recorded as interrupts.
func WaitingInterrupts(cp *checkpoint.Checkpoint) []checkpoint.Interrupt {
	for i, in := range cp.Interrupts {
		if isLegacyStop(in) {
			out := append([]checkpoint.Interrupt(nil), cp.Interrupts[:i]...)
			for _, in := range cp.Interrupts[i+1:] {
				if !isLegacyStop(in) {
					out = append(out, in)
				}
			}
			return out
		}
	}
	return cp.Interrupts
}

// breakpointBefore returns the breakpoint a step of tasks stops at before
// it runs, or nil: the tasks of nodes the request stops before, but those
// the run goes on with (skipBefore).
func (r *run) breakpointBefore(tasks []checkpoint.Task) *Breakpoint {
	if len(r.req.InterruptBefore) == 0 {
		return nil // every step asks; most runs set no breakpoint
	}
	var b *Breakpoint
	for _, t := range tasks {
		if matchesAny(r.req.InterruptBefore, t.Node) && !r.skipBefore[t.ID] {
			if b == nil {
				b = &Breakpoint{When: BreakpointBefore}
			}
			if !slices.Contains(b.Nodes, t.Node) {
				b.Nodes = append(b.Nodes, t.Node)
			}
		}
	}
	return b
}
