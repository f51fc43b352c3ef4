package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// BotKey is the node.Services.Extra key of a *Client given to the engine
// (engine.Options.Extra); without one, telegram_reply reads the environment.
var BotKey = node.NewKey[*Client]("telegram.bot")

// ReplyConfig is the schema of a telegram_reply node's config.
const ReplyConfig = `{
	chat?: *"telegram.chat_id" | string
	reply_to?: string
	text: string
	field?: string
}`

func init() {
	node.MustRegister(node.Type{
		Name: "telegram_reply",
		Description: "Sends a text to the Telegram chat in state, split at 4096 characters; " +
			"finishes the message streamed during the run when there is one.",
		Config: ReplyConfig,
		New:    newReply,
	})
}

type replyNode struct {
	chat    node.Expr
	replyTo node.Expr
	text    node.Template
	field   string
}

func newReply(b node.Builder) (node.Node, error) {
	var cfg struct {
		Chat    string `json:"chat"`
		ReplyTo string `json:"reply_to"`
		Text    string `json:"text"`
		Field   string `json:"field"`
	}
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "telegram_reply node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	if cfg.Chat == "" {
		cfg.Chat = "telegram.chat_id"
	}
	n := &replyNode{field: cfg.Field}
	n.chat = b.Expr("chat", cfg.Chat, "")
	if cfg.ReplyTo != "" {
		n.replyTo = b.Expr("reply_to", cfg.ReplyTo, "")
	}
	n.text = b.Template("text", cfg.Text)
	if cfg.Field != "" {
		if f := check.Field(b, "field", cfg.Field); f != nil && f.Type.Kind != graph.Object && f.Type.Kind != graph.Any {
			b.Errorf("field", "invalid-config", "telegram_reply node %q writes an object to %q, which is declared %s", b.NodeName(), cfg.Field, f.Type)
		}
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

// clientOf returns the engine's client or one from the environment.
func clientOf(s *node.Services) (*Client, error) {
	if s != nil {
		if c, ok := BotKey.Get(s); ok && c != nil {
			return c, nil
		}
	}
	return FromEnv(nil)
}

// Prepare implements node.Preparer.
func (n *replyNode) Prepare(_ context.Context, s *node.Services) error {
	_, err := clientOf(s)
	return err
}

// ChatID converts a state value (number or numeric string) to a chat id.
func ChatID(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if x == float64(int64(x)) {
			return int64(x), nil
		}
	case string:
		if id, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return id, nil
		}
	}
	return 0, fmt.Errorf("want an integer chat id, got %s", graph.DescribeValue(v))
}

// Run implements node.Node.
func (n *replyNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	v, err := n.chat.Eval(in.Scope)
	if err != nil {
		return nil, node.Errorf("expression_error", "%s: chat (%s): %w", in.Node, n.chat.Source(), err)
	}
	chat, err := ChatID(v)
	if err != nil || chat == 0 {
		return nil, node.Errorf("invalid_chat", "%s: chat (%s): %v", in.Node, n.chat.Source(), err)
	}
	var replyTo int64
	if n.replyTo != nil {
		rv, err := n.replyTo.Eval(in.Scope)
		if err != nil {
			return nil, node.Errorf("expression_error", "%s: reply_to (%s): %w", in.Node, n.replyTo.Source(), err)
		}
		replyTo, _ = ChatID(rv)
	}
	text, err := n.text.Render(in.Scope)
	if err != nil {
		return nil, node.Errorf("template_error", "%s: text: %w", in.Node, err)
	}
	if strings.TrimSpace(text) == "" {
		return nil, node.Errorf("empty_reply", "%s: text (%s) is empty in this run", in.Node, n.text.Source())
	}
	client, err := clientOf(in.Services)
	if err != nil {
		return nil, node.Errorf("telegram_config", "%s: %w", in.Node, err)
	}
	parts := Split(text, MaxMessageLen)
	var ids []any
	start := 0
	if s := StreamFrom(ctx); s != nil && s.ChatID == chat {
		id, err := s.finish(ctx, parts[0])
		if err != nil {
			return nil, sendError(in.Node, "editMessageText", err)
		}
		if id != 0 {
			ids = append(ids, id)
			start = 1
		}
	}
	for i, p := range parts[start:] {
		rt := int64(0)
		if i == 0 && start == 0 {
			rt = replyTo
		}
		m, err := client.SendMessage(ctx, chat, p, rt)
		if err != nil {
			return nil, sendError(in.Node, "sendMessage", err)
		}
		ids = append(ids, m.MessageID)
	}
	payload := map[string]any{"chat_id": chat, "message_ids": ids, "parts": len(parts), "streamed": start == 1}
	if in.Emit != nil {
		in.Emit(event.Event{Type: "telegram_sent", Payload: payload})
	}
	if n.field == "" {
		return node.Update{}, nil
	}
	return node.Update{n.field: payload}, nil
}

// sendError classifies a Bot API failure: 429 and 5xx are retryable.
func sendError(nodeName, method string, err error) error {
	var apiErr *APIError
	if errors.As(err, &apiErr) && (apiErr.Code == 429 || apiErr.Code >= 500) {
		return node.Retryable("telegram_error", fmt.Errorf("%s: %s: %w", nodeName, method, err))
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %s: %w", nodeName, method, err)
	}
	if apiErr == nil {
		return node.Retryable("telegram_error", fmt.Errorf("%s: %s: %w", nodeName, method, err))
	}
	return node.Errorf("telegram_error", "%s: %s: %w", nodeName, method, err)
}
