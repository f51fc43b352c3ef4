package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"unicode"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/llm/internal/hashvec"
	"github.com/graphctl/graphctl/runtime/graph"
)

// Reply is one scripted model reply.
type Reply struct {
	// Content is the reply's text.
	Content string
	// JSON, when set, is sent as the content, encoded as JSON.
	JSON any
	// ToolCalls are native tool calls returned with the reply.
	ToolCalls []ScriptToolCall
	// Node, when set, reserves the reply for that node: other nodes skip it.
	Node string
}

// ScriptToolCall is a tool call in a scripted reply.
type ScriptToolCall struct {
	Name      string
	Arguments map[string]any
}

// Script is a scripted llms.Model for demos and declarative tests. It replays
// its replies in order (a reply naming a node goes only to that node), streams
// each reply token by token through the call's streaming function, and reports
// token usage. It is safe for concurrent use; each reply is used once.
type Script struct {
	name string

	mu      sync.Mutex
	replies []Reply
	used    []bool
	served  int
}

type nodeKey struct{}

// WithNode tags ctx with the name of the node calling a model, so that a
// Script can give it the replies reserved for it. Every model-using node type
// calls it before GenerateContent.
func WithNode(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, nodeKey{}, name)
}

// NodeFrom returns the node name set by WithNode, or "".
func NodeFrom(ctx context.Context) string {
	s, _ := ctx.Value(nodeKey{}).(string)
	return s
}

// NewScript builds a Script from declared replies: each a string, or an
// object {content?, json?, tool_calls?: [{name, arguments}], node?}.
func NewScript(replies []any) (*Script, error) {
	s := &Script{name: "scripted model"}
	for i, raw := range replies {
		r, err := parseReply(raw)
		if err != nil {
			return nil, fmt.Errorf("scripted reply %d: %w", i+1, err)
		}
		s.replies = append(s.replies, r)
	}
	s.used = make([]bool, len(s.replies))
	return s, nil
}

// LoadScript reads a Script from a JSON file holding a list of replies (or an
// object with a "replies" list).
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("scripted model %s: not JSON: %w", path, err)
	}
	if obj, ok := raw.(map[string]any); ok {
		raw = obj["replies"]
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("scripted model %s: want a JSON list of replies (or {\"replies\": [...]})", path)
	}
	s, err := NewScript(list)
	if err != nil {
		return nil, fmt.Errorf("scripted model %s: %w", path, err)
	}
	s.name = "scripted model " + path
	return s, nil
}

func parseReply(raw any) (Reply, error) {
	switch v := raw.(type) {
	case string:
		return Reply{Content: v}, nil
	case map[string]any:
		var r Reply
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			val := v[k]
			switch k {
			case "content":
				s, ok := val.(string)
				if !ok {
					return r, fmt.Errorf("content must be a string, got %s", graph.DescribeValue(val))
				}
				r.Content = s
			case "json":
				r.JSON = val
			case "node":
				s, ok := val.(string)
				if !ok {
					return r, fmt.Errorf("node must be a string, got %s", graph.DescribeValue(val))
				}
				r.Node = s
			case "tool_calls":
				list, ok := val.([]any)
				if !ok {
					return r, fmt.Errorf("tool_calls must be a list, got %s", graph.DescribeValue(val))
				}
				for j, item := range list {
					m, ok := item.(map[string]any)
					if !ok {
						return r, fmt.Errorf("tool_calls[%d] must be an object {name, arguments}, got %s", j, graph.DescribeValue(item))
					}
					name, _ := m["name"].(string)
					if name == "" {
						return r, fmt.Errorf("tool_calls[%d] has no name", j)
					}
					tc := ScriptToolCall{Name: name}
					switch a := m["arguments"].(type) {
					case nil:
					case map[string]any:
						tc.Arguments = a
					case string:
						if err := json.Unmarshal([]byte(a), &tc.Arguments); err != nil {
							return r, fmt.Errorf("tool_calls[%d].arguments: not a JSON object: %w", j, err)
						}
					default:
						return r, fmt.Errorf("tool_calls[%d].arguments must be an object, got %s", j, graph.DescribeValue(a))
					}
					r.ToolCalls = append(r.ToolCalls, tc)
				}
			default:
				return r, fmt.Errorf("unknown key %q (want content, json, tool_calls or node)", k)
			}
		}
		if r.JSON != nil && r.Content != "" {
			return r, fmt.Errorf("set content or json, not both")
		}
		return r, nil
	}
	return Reply{}, fmt.Errorf("want a string or an object {content, json, tool_calls, node}, got %s", graph.DescribeValue(raw))
}

// Remaining returns how many replies have not been used.
func (s *Script) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies) - s.served
}

// next takes the first unused reply for the calling node.
func (s *Script) next(nodeName string) (Reply, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.replies {
		if s.used[i] || (r.Node != "" && r.Node != nodeName) {
			continue
		}
		s.used[i] = true
		s.served++
		return r, s.served, nil
	}
	if s.served == len(s.replies) {
		return Reply{}, 0, fmt.Errorf("%s: script exhausted after %d replies", s.name, s.served)
	}
	return Reply{}, 0, fmt.Errorf("%s: no reply left for node %q after %d replies (the remaining %d are reserved for other nodes)",
		s.name, nodeName, s.served, len(s.replies)-s.served)
}

// GenerateContent implements llms.Model.
func (s *Script) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts := llms.CallOptions{}
	for _, o := range options {
		o(&opts)
	}
	r, n, err := s.next(NodeFrom(ctx))
	if err != nil {
		return nil, err
	}
	content := r.Content
	if r.JSON != nil {
		b, err := json.Marshal(r.JSON)
		if err != nil {
			return nil, fmt.Errorf("%s: reply %d: json: %w", s.name, n, err)
		}
		content = string(b)
	}
	tokens := Tokens(content)
	if opts.StreamingFunc != nil {
		for _, tok := range tokens {
			if err := opts.StreamingFunc(ctx, []byte(tok)); err != nil {
				return nil, fmt.Errorf("%s: streaming: %w", s.name, err)
			}
		}
	}
	choice := &llms.ContentChoice{Content: content, StopReason: "stop"}
	for i, tc := range r.ToolCalls {
		args := tc.Arguments
		if args == nil {
			args = map[string]any{}
		}
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("%s: reply %d: tool call %s: %w", s.name, n, tc.Name, err)
		}
		choice.ToolCalls = append(choice.ToolCalls, llms.ToolCall{
			ID: fmt.Sprintf("call_script_%d_%d", n, i+1), Type: "function",
			FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: string(b)},
		})
		choice.StopReason = "tool_calls"
	}
	if len(choice.ToolCalls) > 0 {
		choice.FuncCall = choice.ToolCalls[0].FunctionCall
	}
	prompt := 0
	for _, m := range messages {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				prompt += len(hashvec.Words(t.Text))
			}
		}
	}
	completion := len(tokens) + len(r.ToolCalls)
	choice.GenerationInfo = map[string]any{
		"PromptTokens": prompt, "CompletionTokens": completion, "TotalTokens": prompt + completion,
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

// Call implements llms.Model.
func (s *Script) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, options...)
}

// Tokens splits text into stream tokens: each word with the spaces after it,
// so that concatenating the tokens gives back the text.
func Tokens(text string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range text {
		sp := unicode.IsSpace(r)
		if inSpace && !sp {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// String names the script for messages.
func (s *Script) String() string { return s.name }
