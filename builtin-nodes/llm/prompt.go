package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
	"github.com/graphctl/graphctl/runtime/node"
)

// prompt is the prompt phase: one system message (the rendered system
// template, the non-empty context blocks, the view of executed contracts and
// the JSON output instructions), then the last history messages of the
// conversation. With tools offered, an AI message's tool calls and the tool
// messages answering them are sent as the provider's tool calls and tool
// results; otherwise they are shown as text.
func (n *llmNode) prompt(in *node.Input, withTools bool) ([]llms.MessageContent, error) {
	sections, err := n.systemSections(in)
	if err != nil {
		return nil, err
	}
	var msgs []llms.MessageContent
	if len(sections) > 0 {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, strings.Join(sections, "\n\n")))
	}
	history, _ := in.State[n.messages].([]any)
	if n.history > 0 && len(history) > n.history {
		history = history[len(history)-n.history:]
	}
	list := make([]map[string]any, len(history))
	for i, raw := range history {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, node.Errorf("invalid_state", "llm node %q: %s[%d] is %T, want a message object", in.Node, n.messages, i, raw)
		}
		list[i] = m
	}
	answered := answeredCalls(list)
	for i, m := range list {
		mc, err := messageContent(m, answered, withTools)
		if err != nil {
			return nil, node.Errorf("invalid_state", "llm node %q: %s[%d]: %w", in.Node, n.messages, i, err)
		}
		if len(mc.Parts) > 0 {
			msgs = append(msgs, mc)
		}
	}
	return msgs, nil
}

// systemSections renders the parts of the system message.
func (n *llmNode) systemSections(in *node.Input) ([]string, error) {
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
	return sections, nil
}

// answeredCalls returns the ids of the tool calls that model APIs accept in a
// prompt: calls of an AI message answered by the tool messages that directly
// follow it. Other calls (not executed yet, or whose answer was cut off by
// the history limit) and other tool messages are shown as text.
func answeredCalls(list []map[string]any) map[string]bool {
	out := map[string]bool{}
	for i, m := range list {
		calls := toolCallsOf(m)
		if len(calls) == 0 {
			continue
		}
		asked := map[string]bool{}
		for _, c := range calls {
			asked[c.id] = true
		}
		for _, next := range list[i+1:] {
			if role, _ := next["role"].(string); role != "tool" {
				break
			}
			if id, _ := next["tool_call_id"].(string); asked[id] {
				out[id] = true
			}
		}
	}
	return out
}

// messageCall is one entry of an AI message's tool_calls.
type messageCall struct {
	id, name string
	args     any
}

// toolCallsOf reads the tool_calls of a message written as LangChain does
// ({id, name, args}) or as OpenAI does ({id, function: {name, arguments}}).
func toolCallsOf(m map[string]any) []messageCall {
	list, _ := m["tool_calls"].([]any)
	var out []messageCall
	for _, item := range list {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		mc := messageCall{args: c["args"]}
		mc.id, _ = c["id"].(string)
		mc.name, _ = c["name"].(string)
		if fn, ok := c["function"].(map[string]any); ok {
			mc.name, _ = fn["name"].(string)
			mc.args = fn["arguments"]
		}
		if mc.id != "" && mc.name != "" {
			out = append(out, mc)
		}
	}
	return out
}

// messageContent converts a state message {role, content, images?,
// tool_calls?, tool_call_id?} to the model's form. Content is a string or a
// list of parts ({type: "text", text} or {type: "image_url", image_url:
// {url}}); images is a list of image URLs (data: URLs included). Tool calls
// and tool results whose id is in answered go as the provider's tool calls
// and results when tools are offered, else as text.
func messageContent(m map[string]any, answered map[string]bool, withTools bool) (llms.MessageContent, error) {
	role, _ := m["role"].(string)
	var mc llms.MessageContent
	switch role {
	case "user", "human":
		mc.Role = llms.ChatMessageTypeHuman
	case "assistant", "ai":
		mc.Role = llms.ChatMessageTypeAI
	case "system":
		mc.Role = llms.ChatMessageTypeSystem
	case "tool":
		return toolMessage(m, answered, withTools)
	default:
		mc.Role = llms.ChatMessageTypeGeneric
	}
	parts, err := contentParts(m["content"])
	if err != nil {
		return mc, err
	}
	mc.Parts = parts
	if imgs, ok := m["images"].([]any); ok {
		for j, v := range imgs {
			url, ok := v.(string)
			if !ok || url == "" {
				return mc, fmt.Errorf("images[%d] is %T, want a URL string", j, v)
			}
			mc.Parts = append(mc.Parts, llms.ImageURLPart(url))
		}
	}
	for _, c := range toolCallsOf(m) {
		args := argumentsText(c.args)
		if withTools && answered[c.id] {
			mc.Parts = append(mc.Parts, llms.ToolCall{ID: c.id, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.name, Arguments: args}})
		} else {
			mc.Parts = append(mc.Parts, llms.TextPart("[tool call "+c.name+" "+args+"]"))
		}
	}
	return mc, nil
}

// toolMessage converts a tool message: a tool result answering a call of
// the AI message before it, or text when that call is not in the prompt.
func toolMessage(m map[string]any, answered map[string]bool, withTools bool) (llms.MessageContent, error) {
	parts, err := contentParts(m["content"])
	if err != nil {
		return llms.MessageContent{}, err
	}
	var text strings.Builder
	for _, p := range parts {
		if t, ok := p.(llms.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	id, _ := m["tool_call_id"].(string)
	name, _ := m["name"].(string)
	if withTools && answered[id] {
		return llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: id, Name: name, Content: text.String()},
		}}, nil
	}
	label := "[tool result]"
	if name != "" {
		label = "[tool result " + name + "]"
	}
	return llms.TextParts(llms.ChatMessageTypeGeneric, label+" "+text.String()), nil
}

// contentParts converts a message's content: a string, or a list of text and
// image_url parts.
func contentParts(content any) ([]llms.ContentPart, error) {
	var out []llms.ContentPart
	switch c := content.(type) {
	case nil:
	case string:
		if c != "" {
			out = append(out, llms.TextPart(c))
		}
	case []any:
		for j, p := range c {
			part, ok := p.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("content part %d is %T, want an object", j, p)
			}
			switch part["type"] {
			case "text":
				s, _ := part["text"].(string)
				out = append(out, llms.TextPart(s))
			case "image_url":
				img, _ := part["image_url"].(map[string]any)
				url, _ := img["url"].(string)
				if url == "" {
					url, _ = part["image_url"].(string)
				}
				if url == "" {
					return nil, fmt.Errorf("content part %d: image_url has no url", j)
				}
				out = append(out, llms.ImageURLPart(url))
			case "image":
				url, err := imageBlockURL(part)
				if err != nil {
					return nil, fmt.Errorf("content part %d: %w", j, err)
				}
				out = append(out, llms.ImageURLPart(url))
			default:
				return nil, fmt.Errorf("content part %d: unknown type %v (want text, image_url or image)", j, part["type"])
			}
		}
	default:
		return nil, fmt.Errorf("content is %T, want a string or a list of parts", c)
	}
	return out, nil
}

// imageBlockURL returns the URL of a LangChain standard image block (what
// agent-chat-ui sends for an uploaded picture): {type: "image", url} or
// {type: "image", mimeType, data} with base64 data, also with the older
// source_type and mime_type keys; base64 data becomes a data URL.
func imageBlockURL(part map[string]any) (string, error) {
	if url, _ := part["url"].(string); url != "" {
		return url, nil
	}
	data, _ := part["data"].(string)
	if data == "" {
		return "", errors.New("image has neither url nor base64 data")
	}
	mime, _ := part["mimeType"].(string)
	if mime == "" {
		mime, _ = part["mime_type"].(string)
	}
	if !strings.HasPrefix(mime, "image/") {
		return "", fmt.Errorf("image data has mime type %q, want image/…", mime)
	}
	return "data:" + mime + ";base64," + data, nil
}

// argumentsText is a tool call's arguments as JSON text.
func argumentsText(args any) string {
	switch a := args.(type) {
	case string:
		return a
	case nil:
		return "{}"
	}
	return compactJSON(args)
}

// contractsView renders ExecutionContracts for the prompt, one per line with
// status, result and error message, so the model reads outcomes from their
// status rather than from observation strings.
func contractsView(v any) string {
	list, _ := v.([]any)
	var lines []string
	// A long conversation's executions would grow the prompt without end:
	// the unfinished ones are shown and the last recentExecutions finished.
	finished := 0
	for _, item := range list {
		if c, ok := item.(map[string]any); ok && isFinished(c) {
			finished++
		}
	}
	skip := max(finished-recentExecutions, 0)
	if skip > 0 {
		lines = append(lines, fmt.Sprintf("(%d earlier finished executions not shown)", skip))
	}
	for _, item := range list {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if skip > 0 && isFinished(c) {
			skip--
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

// recentExecutions is how many finished contracts the Executions section of
// a prompt shows.
const recentExecutions = 10

// isFinished reports whether a contract has reached a final status.
func isFinished(c map[string]any) bool {
	switch c["status"] {
	case contract.Completed, contract.Failed, contract.Cancelled:
		return true
	}
	return false
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
