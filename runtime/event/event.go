// Package event defines the events a graph run emits: lifecycle events from the
// engine and domain events from nodes. Their JSON form, {"type": ..., "payload": {...}},
// is the wire format of `graphctl run --json` and of the server's SSE streams.
package event

// Lifecycle and common domain event types.
const (
	RunStart   = "run_start"
	NodeStart  = "node_start"
	NodeEnd    = "node_end"
	Checkpoint = "checkpoint"
	Text       = "text"
	Interrupt  = "interrupt"
	Error      = "error"
	Done       = "done"
)

// Event is one item of a run's event stream.
type Event struct {
	Type    string         `json:"type"`
	Payload map[string]any `json:"payload"`
	// Node is the node that emitted the event, empty for run-level events.
	Node string `json:"-"`
	// Step is the super-step during which the event was emitted.
	Step int `json:"-"`
	// Namespace is empty for an event of the graph the run started, and
	// names the subgraph an event comes from otherwise: "node:task" for a
	// subgraph node's task, nested ones joined by "|" (LangGraph's
	// checkpoint_ns).
	Namespace string `json:"namespace,omitempty"`
	// Detail is the full value a lifecycle event's payload only summarises,
	// for consumers in the same process: the state a node starts from on
	// node_start, its complete update on node_end, the state a checkpoint
	// holds on checkpoint (which may not be written yet: see the run's
	// durability). It is not serialised.
	Detail map[string]any `json:"-"`
}

// Sink receives events. Implementations must be safe for concurrent use: nodes of
// one super-step run concurrently and emit concurrently.
type Sink func(Event)

// Discard is a Sink that drops every event.
func Discard(Event) {}
