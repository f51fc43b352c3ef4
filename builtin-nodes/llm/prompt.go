package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/runtime/node"
)

// prompt builds the messages sent to the model: one system message (the
// rendered system template, the non-empty context blocks, the view of
// executed contracts and the JSON output instructions), then the last
// history messages of the conversation.
func (n *llmNode) prompt(in *node.Input) ([]llms.MessageContent, error) {
	var sections []string
	if n.system != nil {
		s, err := n.system.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf("template_error", "llm node %q: system: %w", in.Node, err)
		}
		if strings.TrimSpace(s) != "" {
			sections = append(sections, strings.TrimSpace(s))
		}
	}
	for i, c := range n.context {
		s, err := c.text.Render(in.Scope)
		if err != nil {
			return nil, node.Errorf("template_error", "llm node %q: context %d (%s): %w", in.Node, i, c.title, err)
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		sections = append(sections, "## "+c.title+"\n"+strings.TrimSpace(s))
	}
	if n.contracts != "" {
		if view := contractsView(in.State[n.contracts]); view != "" {
			sections = append(sections, "## Executions\n"+view)
		}
	}
	if n.format == "json" {
		instr := "Reply with a single JSON object and nothing else."
		if n.schema != nil {
			b, _ := json.Marshal(n.schema)
			instr += " It must match this JSON Schema: " + string(b)
		}
		sections = append(sections, instr)
	}
	var msgs []llms.MessageContent
	if len(sections) > 0 {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, strings.Join(sections, "\n\n")))
	}
	history, _ := in.State[n.messages].([]any)
	if n.history > 0 && len(history) > n.history {
		history = history[len(history)-n.history:]
	}
	for i, raw := range history {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, node.Errorf("invalid_state", "llm node %q: %s[%d] is %T, want a message object", in.Node, n.messages, i, raw)
		}
		mc, err := messageContent(m)
		if err != nil {
			return nil, node.Errorf("invalid_state", "llm node %q: %s[%d]: %w", in.Node, n.messages, i, err)
		}
		if len(mc.Parts) > 0 {
			msgs = append(msgs, mc)
		}
	}
	return msgs, nil
}

// messageContent converts a state message {role, content, images?} to the
// model's form. Content is a string or a list of parts ({type: "text", text}
// or {type: "image_url", image_url: {url}}); images is a list of image URLs
// (data: URLs included).
func messageContent(m map[string]any) (llms.MessageContent, error) {
	role, _ := m["role"].(string)
	var mc llms.MessageContent
	switch role {
	case "user", "human":
		mc.Role = llms.ChatMessageTypeHuman
	case "assistant", "ai":
		mc.Role = llms.ChatMessageTypeAI
	case "system":
		mc.Role = llms.ChatMessageTypeSystem
	default:
		mc.Role = llms.ChatMessageTypeGeneric
	}
	switch c := m["content"].(type) {
	case nil:
	case string:
		if role == "tool" {
			c = "[tool result] " + c
		}
		if c != "" {
			mc.Parts = append(mc.Parts, llms.TextPart(c))
		}
	case []any:
		for j, p := range c {
			part, ok := p.(map[string]any)
			if !ok {
				return mc, fmt.Errorf("content part %d is %T, want an object", j, p)
			}
			switch part["type"] {
			case "text":
				s, _ := part["text"].(string)
				mc.Parts = append(mc.Parts, llms.TextPart(s))
			case "image_url":
				img, _ := part["image_url"].(map[string]any)
				url, _ := img["url"].(string)
				if url == "" {
					url, _ = part["image_url"].(string)
				}
				if url == "" {
					return mc, fmt.Errorf("content part %d: image_url has no url", j)
				}
				mc.Parts = append(mc.Parts, llms.ImageURLPart(url))
			default:
				return mc, fmt.Errorf("content part %d: unknown type %v (want text or image_url)", j, part["type"])
			}
		}
	default:
		return mc, fmt.Errorf("content is %T, want a string or a list of parts", c)
	}
	if imgs, ok := m["images"].([]any); ok {
		for j, v := range imgs {
			url, ok := v.(string)
			if !ok || url == "" {
				return mc, fmt.Errorf("images[%d] is %T, want a URL string", j, v)
			}
			mc.Parts = append(mc.Parts, llms.ImageURLPart(url))
		}
	}
	return mc, nil
}

// contractsView renders ExecutionContracts for the prompt, one per line with
// status, result and error message, so the model reads outcomes from their
// status rather than from observation strings.
func contractsView(v any) string {
	list, _ := v.([]any)
	var lines []string
	for _, item := range list {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		status, _ := c["status"].(string)
		kind, _ := c["action_type"].(string)
		name, _ := c["tool_name"].(string)
		line := fmt.Sprintf("- [%s] %s %s", status, kind, name)
		if args, ok := c["arguments"]; ok && args != nil {
			line += " arguments=" + compactJSON(args)
		}
		if r, ok := c["result"]; ok && r != nil {
			line += " result=" + compactJSON(r)
		}
		if e, ok := c["error_message"].(string); ok && e != "" {
			line += " error_message=" + e
		}
		if id, ok := c["id"].(string); ok {
			line += " (id " + id + ")"
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func compactJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
