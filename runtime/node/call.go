package node

import (
	"context"

	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
)

// CallContext tells code running under a node's Run — a model client, a
// tool client, an HTTP transport — which node it calls for: where to report
// its events (a retried call) and how to retry a call that failed for a
// transient reason.
type CallContext struct {
	// Node is the node's name.
	Node string
	// Emit sends an event to the run's stream, tagged with the node.
	Emit event.Sink
	// Retry is the node's call retry policy (its call_retry, else the
	// graph's defaults.call_retry); nil leaves the caller's default.
	Retry *graph.RetryPolicy
}

type callKey struct{}

// WithCall returns ctx carrying the call context of in, unless ctx already
// carries one (the engine runs every node with its input in the context),
// for a node run outside the engine.
func WithCall(ctx context.Context, in *Input) context.Context {
	if _, ok := CallFrom(ctx); ok || in == nil {
		return ctx
	}
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	return context.WithValue(ctx, callKey{}, CallContext{Node: in.Node, Emit: emit, Retry: in.CallRetry})
}

// CallFrom returns the call context ctx carries: the one WithCall put
// there, else the one of the node input the engine runs the node with
// (ContextWithInput).
func CallFrom(ctx context.Context) (CallContext, bool) {
	if c, ok := ctx.Value(callKey{}).(CallContext); ok {
		return c, true
	}
	in := InputFromContext(ctx)
	if in == nil {
		return CallContext{}, false
	}
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	return CallContext{Node: in.Node, Emit: emit, Retry: in.CallRetry}, true
}
