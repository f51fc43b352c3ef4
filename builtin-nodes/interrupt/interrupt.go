// Package interrupt provides the interrupt node type: it suspends the thread
// to ask a human for a value, which the engine writes to a declared state
// field when the thread is resumed. The node never runs twice: on resume the
// run continues along the node's routes.
//
// The interrupt payload carries the declared field, the rendered message, the
// form (passed through as written) and every key of the optional payload block.
package interrupt

import (
	"context"
	"maps"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/node"
)

func init() {
	node.MustRegister(node.Type{
		Name:        "interrupt",
		Description: "Suspends the thread for human input, written to a declared field on resume.",
		Config:      `{field: string, message?: string, form?: {...}, payload?: {...}}`,
		New:         newInterrupt,
	})
}

type interruptNode struct {
	field   string
	message node.Template
	form    map[string]any
	payload map[string]any
}

func newInterrupt(b node.Builder) (node.Node, error) {
	var cfg struct {
		Field   string         `json:"field"`
		Message *string        `json:"message"`
		Form    map[string]any `json:"form"`
		Payload map[string]any `json:"payload"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "interrupt node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &interruptNode{field: cfg.Field, form: cfg.Form, payload: cfg.Payload}
	if cfg.Field == "" {
		b.Errorf("field", "invalid-config", "interrupt node %q needs the state field that receives the answer", b.NodeName())
	} else {
		check.Field(b, "field", cfg.Field)
	}
	for _, reserved := range []string{"field", "message", "form"} {
		if _, clash := cfg.Payload[reserved]; clash {
			b.Errorf("payload."+reserved, "invalid-config",
				"interrupt payload key %q is set by the node itself; configure it at the top level of the config", reserved)
		}
	}
	if cfg.Message != nil {
		n.message = b.Template("message", *cfg.Message)
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Run implements node.Node: it always returns a node.InterruptRequest.
func (n *interruptNode) Run(_ context.Context, in *node.Input) (node.Update, error) {
	payload := make(map[string]any, len(n.payload)+3)
	maps.Copy(payload, n.payload)
	payload["field"] = n.field
	if n.message != nil {
		msg, err := n.message.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf("template_error", "interrupt message: %w", err)
		}
		payload["message"] = msg
	}
	if n.form != nil {
		payload["form"] = n.form
	}
	return nil, node.Interrupt(n.field, payload)
}
