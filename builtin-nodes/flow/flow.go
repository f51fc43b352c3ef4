// Package flow provides the node types that shape a conversation without
// calling any external service:
//
//   - route: writes nothing; the engine routes from the node's routes/default/next.
//   - set:   assigns the results of expressions to state fields.
//   - reply: renders a template into an assistant (or system) message and emits it.
package flow

import (
	"context"
	"sort"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

func init() {
	node.MustRegister(node.Type{
		Name:        "route",
		Description: "Routes only: writes nothing and leaves by its routes, default or next.",
		Config:      `{}`,
		New:         newRoute,
	})
	node.MustRegister(node.Type{
		Name:        "set",
		Description: "Assigns the result of an expression to each listed state field.",
		Config:      `{set: {[string]: string}}`,
		New:         newSet,
	})
	node.MustRegister(node.Type{
		Name:        "reply",
		Description: "Renders a template into a chat message appended to a messages field, and emits it as text.",
		Config:      `{text: string, role?: *"assistant" | "system", field?: *"messages" | string}`,
		New:         newReply,
	})
}

func newRoute(b node.Builder) (node.Node, error) {
	return node.Func(func(context.Context, *node.Input) (node.Update, error) {
		return node.Update{}, nil
	}), nil
}

// assignment is one compiled field of a set node.
type assignment struct {
	field string
	expr  node.Expr
}

type setNode struct {
	assign []assignment
}

// wantKind is the result kind an expression assigned to f must have, or ""
// when it cannot be checked statically.
func wantKind(f *graph.Field) graph.Kind {
	switch f.Type.Kind {
	case graph.String, graph.Int, graph.Float, graph.Bool, graph.List:
		return f.Type.Kind
	}
	return ""
}

func newSet(b node.Builder) (node.Node, error) {
	var cfg struct {
		Set map[string]string `json:"set"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("set", "invalid-config", "set node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	if len(cfg.Set) == 0 {
		b.Errorf("set", "invalid-config", "set node %q assigns no field: list at least one field and its expression", b.NodeName())
		return nil, nil
	}
	n := &setNode{}
	for _, name := range sortedKeys(cfg.Set) {
		path := "set." + name
		f := check.Field(b, path, name)
		if f == nil {
			continue
		}
		e := b.Expr(path, cfg.Set[name], wantKind(f))
		if e == nil {
			continue
		}
		n.assign = append(n.assign, assignment{field: name, expr: e})
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Run implements node.Node.
func (n *setNode) Run(_ context.Context, in *node.Input) (node.Update, error) {
	up := make(node.Update, len(n.assign))
	for _, a := range n.assign {
		v, err := a.expr.Eval(in.Scope)
		if err != nil {
			return nil, node.Errorf("expression_error", "set %s: %w", a.field, err)
		}
		up[a.field] = v
	}
	return up, nil
}

type replyNode struct {
	text  node.Template
	role  string
	field string
}

func newReply(b node.Builder) (node.Node, error) {
	var cfg struct {
		Text  string `json:"text"`
		Role  string `json:"role"`
		Field string `json:"field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "reply node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	if cfg.Role == "" {
		cfg.Role = "assistant"
	}
	if cfg.Role != "assistant" && cfg.Role != "system" {
		b.Errorf("role", "invalid-config", "reply role must be \"assistant\" or \"system\", got %q", cfg.Role)
	}
	if cfg.Field == "" {
		cfg.Field = "messages"
	}
	check.MessagesField(b, "field", cfg.Field)
	t := b.Template("text", cfg.Text)
	if b.Failed() || t == nil {
		return nil, nil
	}
	return &replyNode{text: t, role: cfg.Role, field: cfg.Field}, nil
}

// Run implements node.Node.
func (n *replyNode) Run(_ context.Context, in *node.Input) (node.Update, error) {
	text, err := n.text.Render(in.Scope)
	if err != nil {
		return nil, node.Errorf("template_error", "reply text: %w", err)
	}
	if in.Emit != nil {
		in.Emit(event.Event{Type: event.Text, Payload: map[string]any{"content": text}})
	}
	return node.Update{n.field: map[string]any{"role": n.role, "content": text}}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
