package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"

	"github.com/graphctl/graphctl/runtime/telemetry"
)

// EventType is the type of the event emitted after every tool call.
const EventType = "tool_result"

// Statuses of a tool_result event.
const (
	StatusCompleted = "COMPLETED"
	StatusFailed    = "FAILED"
)

func init() {
	node.MustRegister(node.Type{
		Name:        "tool",
		Description: "Calls a builtin Go tool with arguments computed from state.",
		Config: `{
	tool: string
	args?: {[string]: string}
	output?: string
	reply?: *true | bool
	messages_field?: *"messages" | string
}`,
		New: newToolNode,
	})
}

type arg struct {
	name string
	expr node.Expr
}

type toolNode struct {
	tool     Tool
	args     []arg
	output   string
	reply    bool
	messages string
}

// schemaKind maps a JSON Schema type to the kind an argument expression must yield.
func schemaKind(p map[string]any) graph.Kind {
	switch p["type"] {
	case "string":
		return graph.String
	case "integer":
		return graph.Int
	case "number":
		return graph.Float
	case "boolean":
		return graph.Bool
	case "array":
		return graph.List
	case "object":
		return graph.Object
	}
	return ""
}

func newToolNode(b node.Builder) (node.Node, error) {
	var cfg struct {
		Tool          string            `json:"tool"`
		Args          map[string]string `json:"args"`
		Output        string            `json:"output"`
		Reply         *bool             `json:"reply"`
		MessagesField string            `json:"messages_field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "tool node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	tools := Of(node.RegistryOf(b))
	t, ok := tools.Lookup(cfg.Tool)
	if !ok {
		b.Errorf("tool", "unknown-tool", "tool %q is not registered%s; registered tools: %v",
			cfg.Tool, suggest.Hint(cfg.Tool, tools.Names()), tools.Names())
		return nil, nil
	}
	n := &toolNode{tool: t, reply: cfg.Reply == nil || *cfg.Reply, output: cfg.Output, messages: cfg.MessagesField}
	if n.messages == "" {
		n.messages = "messages"
	}
	props := t.Properties()
	extra, _ := t.Input["additionalProperties"].(bool)
	names := make([]string, 0, len(cfg.Args))
	for k := range cfg.Args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		path := "args." + name
		p, declared := props[name]
		if !declared && t.Input != nil && !extra {
			known := make([]string, 0, len(props))
			for k := range props {
				known = append(known, k)
			}
			sort.Strings(known)
			b.Errorf(path, "invalid-config", "tool %q takes no argument %q%s; it takes: %v",
				t.Name, name, suggest.Hint(name, known), known)
			continue
		}
		if e := b.Expr(path, cfg.Args[name], schemaKind(p)); e != nil {
			n.args = append(n.args, arg{name: name, expr: e})
		}
	}
	for _, r := range t.Required() {
		if _, given := cfg.Args[r]; !given {
			b.Errorf("args", "invalid-config", "tool %q requires argument %q, which args does not set", t.Name, r)
		}
	}
	if n.output != "" {
		if f := check.Field(b, "output", n.output); f != nil {
			switch f.Type.Kind {
			case graph.Object, graph.Map, graph.Any:
			default:
				b.Errorf("output", "invalid-config", "tool output goes to %q, declared as %s; declare it as object or any", n.output, f.Type)
			}
		}
	}
	if n.reply {
		check.MessagesField(b, "messages_field", n.messages)
	} else if n.output == "" {
		b.Warnf("reply", "result-discarded", "tool node %q neither replies nor sets output: the tool's result is discarded", b.NodeName())
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// Run implements node.Node.
func (n *toolNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	args := make(map[string]any, len(n.args))
	for _, a := range n.args {
		v, err := a.expr.Eval(in.Scope)
		if err != nil {
			return nil, node.Errorf("invalid_arguments", "tool %s: argument %s: %w", n.tool.Name, a.name, err)
		}
		if v != nil {
			args[a.name] = v
		}
	}
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	if err := ValidateArgs(n.tool.Input, args); err != nil {
		emit(resultEvent(n.tool.Name, args, err.Error(), StatusFailed))
		return nil, node.Errorf("invalid_arguments", "tool %s: %w", n.tool.Name, err)
	}
	spanCtx, span := telemetry.StartTool(ctx, n.tool.Name, "")
	res, err := n.tool.Func(spanCtx, args)
	span.End(err)
	if err != nil {
		emit(resultEvent(n.tool.Name, args, err.Error(), StatusFailed))
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tool %s: %w", n.tool.Name, ctx.Err())
		}
		return nil, node.Errorf("tool_error", "tool %s: %w", n.tool.Name, err)
	}
	data, err := generic(res.Data)
	if err != nil {
		emit(resultEvent(n.tool.Name, args, err.Error(), StatusFailed))
		return nil, node.Errorf("tool_error", "tool %s returned data that is not JSON: %w", n.tool.Name, err)
	}
	emit(resultEvent(n.tool.Name, args, res.Text, StatusCompleted))
	up := node.Update{}
	if n.output != "" {
		up[n.output] = map[string]any{"tool": n.tool.Name, "args": args, "text": res.Text, "data": data}
	}
	if n.reply {
		content := "[TOOL USED: " + n.tool.Name + "]\n\n" + res.Text
		up[n.messages] = map[string]any{"role": "assistant", "content": content}
		emit(event.Event{Type: event.Text, Payload: map[string]any{"content": content}})
	}
	return up, nil
}

func resultEvent(name string, args map[string]any, result, status string) event.Event {
	return event.Event{Type: EventType, Payload: map[string]any{
		"tool": name, "args": args, "result": result, "status": status,
	}}
}

// generic converts a tool's data to the maps, lists and scalars state holds.
func generic(v any) (any, error) {
	switch v.(type) {
	case nil, string, bool, int, float64, map[string]any, []any:
		return v, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}
