package node

import "context"

// GraphFileKey is the key under which the engine gives nodes the
// path of the graph file it runs, for node types that resolve paths named in
// the graph relative to it. It is absent for a graph loaded from memory.
var GraphFileKey = NewKey[string]("graph.file")

// RegistryKey is the key under which the engine gives nodes the registry
// the graph was compiled against, for node types that look up at run time
// what their package attached to it (Attached).
var RegistryKey = NewKey[*Registry]("node.registry")

type inputKey struct{}

// ContextWithInput returns ctx carrying the node's input. The engine runs
// every node with it, so that code a node calls through interfaces it does
// not control (a model client, a tool) can tell which thread and node it
// serves.
func ContextWithInput(ctx context.Context, in *Input) context.Context {
	return context.WithValue(ctx, inputKey{}, in)
}

// InputFromContext returns the input ContextWithInput put in ctx, or nil.
func InputFromContext(ctx context.Context) *Input {
	in, _ := ctx.Value(inputKey{}).(*Input)
	return in
}
