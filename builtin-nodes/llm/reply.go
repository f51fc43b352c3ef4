package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/contract"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/store"
)

// calls is the outcome of the tool-calls phase: the contracts to write and
// the tool calls of the AI message, as LangChain shows them
// ({id, name, args, type: "tool_call"}).
type calls struct {
	contracts []any
	message   []any
}

// toolCalls is the tool-calls phase: the model's native tool calls, and the
// tool_call / ecs_request objects of a JSON reply, become PENDING contracts.
// Each tool call also becomes an entry of the AI message's tool_calls, whose
// id the contract keeps as call_id, so that the node executing it can answer
// with a tool message. Arguments that are not a JSON object (a cut stream, a
// reply cut at max_tokens) fail the node with a retryable invalid_output.
func (t *turn) toolCalls(choice *llms.ContentChoice, out any, tools *toolset) (calls, error) {
	var c calls
	for _, tc := range choice.ToolCalls {
		if tc.FunctionCall == nil {
			continue
		}
		args := map[string]any{}
		if s := strings.TrimSpace(tc.FunctionCall.Arguments); s != "" {
			if err := json.Unmarshal([]byte(s), &args); err != nil {
				return c, node.Retryable("invalid_output", fmt.Errorf("llm node %q: tool call %s: arguments are not a JSON object: %v (%q)",
					t.in.Node, tc.FunctionCall.Name, err, truncate(s, 80)))
			}
		}
		c.add(t.toolCall(len(c.contracts), tc.ID, tc.FunctionCall.Name, args, tools))
	}
	obj, ok := out.(map[string]any)
	if !ok || t.n.contracts == "" {
		return c, nil
	}
	if tc := jsonToolCall(t.in, len(c.contracts), obj["tool_call"], "tool_call", t.now); tc != nil {
		name, _ := tc["tool_name"].(string)
		args, _ := tc["arguments"].(map[string]any)
		c.add(t.toolCall(len(c.contracts), "", name, args, tools))
	}
	if ecs := jsonToolCall(t.in, len(c.contracts), obj["ecs_request"], "ecs_request", t.now); ecs != nil {
		c.contracts = append(c.contracts, ecs)
	}
	return c, nil
}

// toolCall builds the contract of one tool call and its entry in the AI
// message. The contract names the tool by its own name and, for an MCP tool,
// its server; the message keeps the name the model called.
func (t *turn) toolCall(index int, callID, called string, args map[string]any, tools *toolset) (map[string]any, map[string]any) {
	offered, tg := tools.resolve(called)
	contract := newContract(t.in, index, "tool_call", tg.tool, args, t.now)
	if callID == "" {
		callID, _ = contract["id"].(string)
	}
	contract["call_id"] = callID
	if tg.server != "" {
		contract["server"] = tg.server
	}
	return contract, map[string]any{"id": callID, "name": offered, "args": args, "type": "tool_call"}
}

func (c *calls) add(contract, message map[string]any) {
	c.contracts = append(c.contracts, contract)
	c.message = append(c.message, message)
}

// reply is the reply phase: the text shown and appended to the conversation
// (with the tool calls of the turn), the fields a JSON reply writes and the
// contracts.
func (t *turn) reply(choice *llms.ContentChoice, out any, c calls) (node.Update, error) {
	n := t.n
	up := node.Update{}
	var text string
	if n.format == "json" {
		var err error
		if text, err = t.jsonReply(out, up); err != nil {
			return nil, err
		}
	} else {
		text = choice.Content
		if !t.streamed && text != "" {
			t.emit(event.Event{Type: event.Text, Payload: map[string]any{"content": text}})
		}
	}
	if n.reply && (text != "" || len(c.message) > 0) {
		msg := map[string]any{"role": "assistant", "content": text}
		if len(c.message) > 0 {
			msg["tool_calls"] = c.message
		}
		up[n.messages] = msg
	}
	if len(c.contracts) > 0 {
		if n.contracts == "" {
			return nil, node.Errorf("invalid_output", "llm node %q: the model called tools but the node sets no contracts_field", t.in.Node)
		}
		up[n.contracts] = c.contracts
	}
	return up, nil
}

// jsonReply writes the output fields of a JSON reply to up and returns the
// text of its reply_from field, emitted unless it streamed exactly so.
func (t *turn) jsonReply(out any, up node.Update) (string, error) {
	n := t.n
	for _, field := range sortedKeys(n.fields) {
		if v, ok := store.Lookup(out, n.fields[field]); ok && v != nil {
			up[field] = v
		}
	}
	if n.replyFrom == "" {
		return "", nil
	}
	v, ok := store.Lookup(out, n.replyFrom)
	text, isString := v.(string)
	if ok && v != nil && !isString {
		return "", node.Errorf("invalid_output", "llm node %q: reply_from %q is %T in the output, want a string", t.in.Node, n.replyFrom, v)
	}
	// The streamed deltas stand for the reply when they spelled it out
	// exactly (not so after a repair, which the client sees whole).
	if text != "" && (t.replyStream == nil || t.replyStream.Text() != text) {
		t.emit(event.Event{Type: event.Text, Payload: map[string]any{"content": text}})
	}
	return text, nil
}

// newContract builds a PENDING ExecutionContract. Its id is unique per run,
// step, node and index, so contracts of later turns never collide with
// completed ones.
func newContract(in *node.Input, index int, actionType, toolName string, args any, now string) map[string]any {
	return map[string]any{
		"id":          fmt.Sprintf("%s-%s-%d-%d", in.RunID, in.Node, in.Step, index+1),
		"action_type": actionType,
		"tool_name":   toolName,
		"arguments":   args,
		"status":      contract.Pending,
		"created_at":  now,
	}
}

// jsonToolCall turns a tool_call or ecs_request object of a JSON output into
// a contract: {name|tool|tool_name, arguments|args} for tool calls; an ecs
// request keeps the whole object as its arguments.
func jsonToolCall(in *node.Input, index int, v any, actionType, now string) map[string]any {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) == 0 {
		return nil
	}
	name := ""
	for _, k := range []string{"name", "tool_name", "tool"} {
		if s, ok := obj[k].(string); ok && s != "" {
			name = s
			break
		}
	}
	var args any = obj
	if actionType == "tool_call" {
		args = map[string]any{}
		for _, k := range []string{"arguments", "args"} {
			if a, ok := obj[k].(map[string]any); ok {
				args = a
				break
			}
		}
		if name == "" {
			return nil
		}
	}
	return newContract(in, index, actionType, name, args, now)
}
