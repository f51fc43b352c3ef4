package load

import (
	"context"

	"github.com/graphctl/graphctl/runtime/node"
)

// Node types used only by this package's tests.
func init() {
	noop := func(node.Builder) (node.Node, error) {
		return node.Func(func(context.Context, *node.Input) (node.Update, error) { return nil, nil }), nil
	}
	node.MustRegister(node.Type{
		Name: "loadtest_reply", Description: "replies with a text",
		Config: `{text: string, role?: *"assistant" | "system"}`, New: noop,
	})
	node.MustRegister(node.Type{
		Name: "loadtest_route", Description: "only routes", New: noop,
	})
	node.MustRegister(node.Type{
		Name: "loadtest_set", Description: "sets fields",
		Config: `{set: [string]: string, limit?: int & >0 | *3}`, New: noop,
	})
}
