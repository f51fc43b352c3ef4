package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/internal/check"
	"github.com/graphctl/graphctl/builtin-nodes/internal/suggest"
	"github.com/graphctl/graphctl/builtin-nodes/mcp"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/reducer"
	"github.com/graphctl/graphctl/runtime/store"
)

// ConfigSchema is the CUE schema of the llm node's config.
const ConfigSchema = `{
	model?: string
	system?: string
	context?: [...{title: string, text: string}]
	messages_field?: *"messages" | string
	history?: int & >=0
	stream?: *true | bool
	temperature?: number & >=0
	max_tokens?: int & >0
	output?: {
		format: *"text" | "json"
		schema?: {...}
		fields?: {[string]: string}
	}
	reply?: *true | bool
	reply_from?: string
	tools?: [...string]
	contracts_field?: string
}`

func init() {
	node.MustRegister(node.Type{
		Name: "llm",
		Description: "Calls a chat model with a templated system prompt and the conversation; streams text, " +
			"parses JSON output, turns tool calls into ExecutionContracts.",
		Config: ConfigSchema,
		New:    newLLMNode,
	})
}

type contextBlock struct {
	title string
	text  node.Template
}

// toolRef is one entry of the tools list, resolved at build time.
type toolRef struct {
	builtin *tool.Tool
	server  string // MCP server
	name    string // MCP tool name, or "*" for all of the server's tools
}

type llmNode struct {
	name         string
	g            *graph.Graph
	model        string
	graphDefault string
	system       node.Template
	context      []contextBlock
	messages     string
	history      int
	stream       bool
	temperature  *float64
	maxTokens    int
	format       string
	schema       map[string]any
	fields       map[string]string
	reply        bool
	replyFrom    string
	tools        []toolRef
	contracts    string
}

type config struct {
	Model   string `json:"model"`
	System  string `json:"system"`
	Context []struct {
		Title string `json:"title"`
		Text  string `json:"text"`
	} `json:"context"`
	MessagesField string   `json:"messages_field"`
	History       int      `json:"history"`
	Stream        *bool    `json:"stream"`
	Temperature   *float64 `json:"temperature"`
	MaxTokens     int      `json:"max_tokens"`
	Output        *struct {
		Format string            `json:"format"`
		Schema map[string]any    `json:"schema"`
		Fields map[string]string `json:"fields"`
	} `json:"output"`
	Reply          *bool    `json:"reply"`
	ReplyFrom      string   `json:"reply_from"`
	Tools          []string `json:"tools"`
	ContractsField string   `json:"contracts_field"`
}

func newLLMNode(b node.Builder) (node.Node, error) {
	var cfg config
	if err := b.Decode(&cfg); err != nil {
		b.Errorf("", "invalid-config", "llm node %q: %v", b.NodeName(), err)
		return nil, nil
	}
	n := &llmNode{
		name: b.NodeName(), g: b.Graph(), model: cfg.Model, graphDefault: b.Graph().Defaults.LLM,
		messages: cfg.MessagesField, history: cfg.History, stream: cfg.Stream == nil || *cfg.Stream,
		temperature: cfg.Temperature, maxTokens: cfg.MaxTokens, format: "text",
		reply: cfg.Reply == nil || *cfg.Reply, replyFrom: cfg.ReplyFrom, contracts: cfg.ContractsField,
	}
	if n.messages == "" {
		n.messages = "messages"
	}
	if cfg.Model != "" {
		if _, _, err := ParseSpec(cfg.Model); err != nil {
			b.Errorf("model", "invalid-config", "%v", err)
		}
	}
	check.MessagesField(b, "messages_field", n.messages)
	if cfg.System != "" {
		n.system = b.Template("system", cfg.System)
	}
	for i, c := range cfg.Context {
		if t := b.Template(fmt.Sprintf("context.%d.text", i), c.Text); t != nil {
			n.context = append(n.context, contextBlock{title: c.Title, text: t})
		}
	}
	if o := cfg.Output; o != nil {
		if o.Format != "" {
			n.format = o.Format
		}
		if n.format != "text" && n.format != "json" {
			b.Errorf("output.format", "invalid-config", "output format must be \"text\" or \"json\", got %q", n.format)
		}
		if o.Schema != nil {
			if n.format != "json" {
				b.Errorf("output.schema", "invalid-config", "an output schema needs format \"json\"")
			}
			if err := CheckSchema(o.Schema); err != nil {
				b.Errorf("output.schema", "invalid-config", "output schema: %v", err)
			}
			n.schema = o.Schema
		}
		if len(o.Fields) > 0 {
			if n.format != "json" {
				b.Errorf("output.fields", "invalid-config", "output fields are JSON paths into the reply and need format \"json\"")
			}
			n.fields = map[string]string{}
			for _, field := range sortedKeys(o.Fields) {
				path := o.Fields[field]
				if check.Field(b, "output.fields."+field, field) == nil {
					continue
				}
				if strings.TrimSpace(path) == "" {
					b.Errorf("output.fields."+field, "invalid-config", "output field %q: give the JSON path in the reply to read, e.g. \"response\"", field)
					continue
				}
				n.fields[field] = path
			}
		}
	}
	if n.replyFrom != "" && n.format != "json" {
		b.Errorf("reply_from", "invalid-config", "reply_from reads a JSON path and needs output format \"json\"")
	}
	if n.contracts != "" {
		if f := check.Field(b, "contracts_field", n.contracts); f != nil && f.Type.Kind != graph.Contracts {
			b.Errorf("contracts_field", "invalid-config", "contracts_field %q is declared as %s; tool calls go to a field of type contracts", n.contracts, f.Type)
		}
	}
	for i, name := range cfg.Tools {
		path := fmt.Sprintf("tools.%d", i)
		if rest, ok := strings.CutPrefix(name, "mcp:"); ok {
			server, toolName, ok := strings.Cut(rest, "/")
			if !ok || server == "" || toolName == "" {
				b.Errorf(path, "invalid-config", "MCP tool %q: want mcp:<server>/<tool> or mcp:<server>/*", name)
				continue
			}
			if _, err := mcp.Server(b.Graph(), server); err != nil {
				b.Errorf(path, "unknown-tool", "MCP tool %q: %v", name, err)
				continue
			}
			n.tools = append(n.tools, toolRef{server: server, name: toolName})
			continue
		}
		t, ok := tool.Lookup(name)
		if !ok {
			b.Errorf(path, "unknown-tool", "tool %q is not registered%s; registered tools: %v; MCP tools are written mcp:<server>/<tool>",
				name, suggest.Hint(name, tool.Names()), tool.Names())
			continue
		}
		n.tools = append(n.tools, toolRef{builtin: &t})
	}
	if len(cfg.Tools) > 0 && n.contracts == "" {
		b.Errorf("contracts_field", "invalid-config", "llm node %q offers tools but sets no contracts_field: name the contracts field its tool calls go to", b.NodeName())
	}
	if b.Failed() {
		return nil, nil
	}
	return n, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Prepare implements node.Preparer: it fails, saying how to configure one,
// when no model is configured or the model's client cannot be built (a
// missing key), and lists the MCP tools the node offers.
func (n *llmNode) Prepare(ctx context.Context, s *node.Services) error {
	if _, err := Model(ctx, s, n.model, n.graphDefault); err != nil {
		return err
	}
	_, err := n.toolDefs(ctx, s)
	return err
}

// toolDefs returns the function definitions offered to the model, and the
// MCP server of each MCP tool by name.
func (n *llmNode) toolDefs(ctx context.Context, s *node.Services) ([]llms.Tool, error) {
	var out []llms.Tool
	seen := map[string]string{}
	add := func(name, desc, origin string, params map[string]any) error {
		if prev, dup := seen[name]; dup {
			return fmt.Errorf("tool name %q is offered twice (%s and %s)", name, prev, origin)
		}
		seen[name] = origin
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Description: desc, Parameters: params}})
		return nil
	}
	for _, ref := range n.tools {
		if ref.builtin != nil {
			if err := add(ref.builtin.Name, ref.builtin.Description, "builtin", ref.builtin.Input); err != nil {
				return nil, err
			}
			continue
		}
		infos, err := mcp.Tools(ctx, s, n.g, ref.server)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: listing tools: %w", ref.server, err)
		}
		found := false
		for _, info := range infos {
			if ref.name != "*" && info.Name != ref.name {
				continue
			}
			found = true
			if err := add(info.Name, info.Description, "mcp:"+ref.server, info.InputSchema); err != nil {
				return nil, err
			}
		}
		if !found && ref.name != "*" {
			names := make([]string, len(infos))
			for i, info := range infos {
				names[i] = info.Name
			}
			return nil, fmt.Errorf("MCP server %q has no tool %q%s; it has: %v", ref.server, ref.name, suggest.Hint(ref.name, names), names)
		}
	}
	return out, nil
}

// Run implements node.Node.
func (n *llmNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	ctx = WithNode(ctx, in.Node)
	emit := in.Emit
	if emit == nil {
		emit = event.Discard
	}
	model, err := Model(ctx, in.Services, n.model, n.graphDefault)
	if err != nil {
		return nil, node.Errorf("no_model", "llm node %q: %w", in.Node, err)
	}
	tools, err := n.toolDefs(ctx, in.Services)
	if err != nil {
		return nil, node.Retryable("tool_error", fmt.Errorf("llm node %q: %w", in.Node, err))
	}
	origin := map[string]string{}
	for _, ref := range n.tools {
		if ref.builtin == nil {
			for _, t := range tools {
				if ref.name == "*" || ref.name == t.Function.Name {
					if _, set := origin[t.Function.Name]; !set {
						origin[t.Function.Name] = ref.server
					}
				}
			}
		} else {
			origin[ref.builtin.Name] = ""
		}
	}
	msgs, err := n.prompt(in)
	if err != nil {
		return nil, err
	}
	var opts []llms.CallOption
	if n.temperature != nil {
		opts = append(opts, llms.WithTemperature(*n.temperature))
	}
	if n.maxTokens > 0 {
		opts = append(opts, llms.WithMaxTokens(n.maxTokens))
	}
	if len(tools) > 0 {
		opts = append(opts, llms.WithTools(tools))
	}
	if n.format == "json" {
		opts = append(opts, llms.WithJSONMode())
	}
	streamed := false
	callOpts := opts
	// A JSON reply streams the text of its reply_from field as it arrives.
	var replyStream *fieldStreamer
	if n.stream && n.format == "json" && n.replyFrom != "" && !strings.Contains(n.replyFrom, ".") {
		replyStream = newFieldStreamer(n.replyFrom, func(text string) {
			emit(event.Event{Type: event.Text, Payload: map[string]any{"content": text, "delta": true}})
		})
		callOpts = append(append([]llms.CallOption(nil), opts...), llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			if len(chunk) > 0 && !isToolCallChunk(chunk) {
				replyStream.Write(chunk)
			}
			return nil
		}))
	}
	if n.stream && n.format == "text" {
		callOpts = append(append([]llms.CallOption(nil), opts...), llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			if len(chunk) == 0 || isToolCallChunk(chunk) {
				return nil
			}
			streamed = true
			emit(event.Event{Type: event.Text, Payload: map[string]any{"content": string(chunk), "delta": true}})
			return nil
		}))
	}
	usage := map[string]float64{}
	resp, err := model.GenerateContent(ctx, msgs, callOpts...)
	if err != nil {
		return nil, classify(ctx, in.Node, err)
	}
	choice, err := firstChoice(resp)
	if err != nil {
		return nil, node.Errorf("llm_error", "llm node %q: %w", in.Node, err)
	}
	addUsage(usage, choice.GenerationInfo)

	up := node.Update{}
	var contracts []any
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, tc := range choice.ToolCalls {
		if tc.FunctionCall == nil {
			continue
		}
		args := map[string]any{}
		if s := strings.TrimSpace(tc.FunctionCall.Arguments); s != "" {
			if err := json.Unmarshal([]byte(s), &args); err != nil {
				emitUsage(emit, usage)
				return nil, node.Errorf("invalid_output", "llm node %q: tool call %s: arguments are not a JSON object: %v", in.Node, tc.FunctionCall.Name, err)
			}
		}
		c := newContract(in, len(contracts), "tool_call", tc.FunctionCall.Name, args, now)
		if tc.ID != "" {
			c["call_id"] = tc.ID
		}
		if server := origin[tc.FunctionCall.Name]; server != "" {
			c["server"] = server
		}
		contracts = append(contracts, c)
	}

	switch n.format {
	case "text":
		text := choice.Content
		if !streamed && text != "" {
			emit(event.Event{Type: event.Text, Payload: map[string]any{"content": text}})
		}
		if n.reply && text != "" {
			up[n.messages] = map[string]any{"role": "assistant", "content": text}
		}
	case "json":
		out, _, err := n.parseOutput(choice.Content)
		if err != nil {
			// One repair round-trip: show the model its reply and what was wrong.
			repair := append(append([]llms.MessageContent(nil), msgs...),
				llms.TextParts(llms.ChatMessageTypeAI, choice.Content),
				llms.TextParts(llms.ChatMessageTypeHuman, "Your reply could not be used: "+err.Error()+
					". Reply again with only the corrected JSON object, no other text."))
			resp2, err2 := model.GenerateContent(ctx, repair, opts...)
			if err2 != nil {
				emitUsage(emit, usage)
				return nil, classify(ctx, in.Node, err2)
			}
			choice2, err2 := firstChoice(resp2)
			if err2 != nil {
				emitUsage(emit, usage)
				return nil, node.Errorf("llm_error", "llm node %q: repair: %w", in.Node, err2)
			}
			addUsage(usage, choice2.GenerationInfo)
			out, _, err2 = n.parseOutput(choice2.Content)
			if err2 != nil {
				emitUsage(emit, usage)
				return nil, node.Errorf("invalid_output", "llm node %q: the model's JSON output is invalid after one repair attempt: %v (first attempt: %v)", in.Node, err2, err)
			}
		}
		for _, field := range sortedKeys(n.fields) {
			if v, ok := store.Lookup(out, n.fields[field]); ok && v != nil {
				up[field] = v
			}
		}
		if n.replyFrom != "" {
			v, ok := store.Lookup(out, n.replyFrom)
			text, isString := v.(string)
			if ok && v != nil && !isString {
				emitUsage(emit, usage)
				return nil, node.Errorf("invalid_output", "llm node %q: reply_from %q is %T in the output, want a string", in.Node, n.replyFrom, v)
			}
			if text != "" {
				// The streamed deltas stand for the reply when they spelled it
				// out exactly (not so after a repair, which the client sees whole).
				if replyStream == nil || replyStream.Text() != text {
					emit(event.Event{Type: event.Text, Payload: map[string]any{"content": text}})
				}
				if n.reply {
					up[n.messages] = map[string]any{"role": "assistant", "content": text}
				}
			}
		}
		if obj, ok := out.(map[string]any); ok && n.contracts != "" {
			if c := jsonToolCall(in, len(contracts), obj["tool_call"], "tool_call", now); c != nil {
				contracts = append(contracts, c)
			}
			if c := jsonToolCall(in, len(contracts), obj["ecs_request"], "ecs_request", now); c != nil {
				contracts = append(contracts, c)
			}
		}
	}
	if len(contracts) > 0 {
		if n.contracts == "" {
			emitUsage(emit, usage)
			return nil, node.Errorf("invalid_output", "llm node %q: the model called tools but the node sets no contracts_field", in.Node)
		}
		up[n.contracts] = contracts
	}
	emitUsage(emit, usage)
	return up, nil
}

func firstChoice(resp *llms.ContentResponse) (*llms.ContentChoice, error) {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return nil, fmt.Errorf("the model returned no choices")
	}
	return resp.Choices[0], nil
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
		"status":      reducer.Pending,
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

// isToolCallChunk reports whether a streamed chunk is the JSON of tool-call
// deltas (which langchaingo's OpenAI client passes through the same streaming
// function as text) rather than text.
func isToolCallChunk(chunk []byte) bool {
	if len(chunk) < 2 || chunk[0] != '[' || chunk[len(chunk)-1] != ']' {
		return false
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(chunk, &items); err != nil || len(items) == 0 {
		return false
	}
	for _, it := range items {
		if _, ok := it["function"]; !ok {
			return false
		}
	}
	return true
}

// usageKeys maps the usage names providers put in GenerationInfo to the
// names of the usage event.
var usageKeys = map[string]string{
	"PromptTokens": "prompt_tokens", "CompletionTokens": "completion_tokens", "TotalTokens": "total_tokens",
	"InputTokens": "prompt_tokens", "OutputTokens": "completion_tokens",
	"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens", "total_tokens": "total_tokens",
}

func addUsage(sum map[string]float64, info map[string]any) {
	got := map[string]float64{}
	for k, v := range info {
		name, ok := usageKeys[k]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case int:
			got[name] = float64(x)
		case int32:
			got[name] = float64(x)
		case int64:
			got[name] = float64(x)
		case float64:
			got[name] = x
		case float32:
			got[name] = float64(x)
		}
	}
	if _, ok := got["total_tokens"]; !ok && len(got) > 0 {
		got["total_tokens"] = got["prompt_tokens"] + got["completion_tokens"]
	}
	for k, v := range got {
		sum[k] += v
	}
}

func emitUsage(emit event.Sink, usage map[string]float64) {
	if len(usage) == 0 {
		return
	}
	payload := map[string]any{}
	for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens"} {
		payload[k] = int(usage[k])
	}
	emit(event.Event{Type: node.UsageEvent, Payload: payload})
}
