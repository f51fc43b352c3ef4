package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
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
	mcp_tool_names?: *"{server}__{tool}" | string
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
	toolRefs     []toolRef
	toolNames    string
	contracts    string
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
	_, err := n.tools(ctx, s)
	return err
}

// turn is one run of an llm node: what its phases share.
type turn struct {
	n     *llmNode
	in    *node.Input
	emit  event.Sink
	usage map[string]float64
	now   string
	// streamed is set once text deltas of a text reply were emitted.
	streamed bool
	// replyStream streams the reply_from field of a JSON reply.
	replyStream *fieldStreamer
}

// Run implements node.Node. A run goes through named phases: prompt (the
// messages sent), call (the model call, streaming), parse (a JSON reply,
// with one repair), tool calls (contracts and the AI message's tool_calls)
// and reply (the state update). Usage is emitted once at the end, also when
// a phase fails after the model answered.
func (n *llmNode) Run(ctx context.Context, in *node.Input) (node.Update, error) {
	ctx = node.WithCall(WithNode(ctx, in.Node), in)
	t := &turn{n: n, in: in, emit: in.Emit, usage: map[string]float64{}, now: time.Now().UTC().Format(time.RFC3339Nano)}
	if t.emit == nil {
		t.emit = event.Discard
	}
	defer func() { emitUsage(t.emit, t.usage) }()
	model, err := Model(ctx, in.Services, n.model, n.graphDefault)
	if err != nil {
		return nil, node.Errorf("no_model", "llm node %q: %w", in.Node, err)
	}
	model = Traced(SpecFor(in.Services, n.model, n.graphDefault), model)
	tools, err := n.tools(ctx, in.Services)
	if err != nil {
		return nil, node.Retryable("tool_error", fmt.Errorf("llm node %q: %w", in.Node, err))
	}
	msgs, err := n.prompt(in, !tools.empty())
	if err != nil {
		return nil, err
	}
	opts := n.callOptions(tools)
	choice, err := t.call(ctx, model, msgs, opts)
	if err != nil {
		return nil, err
	}
	out, err := t.parse(ctx, model, msgs, opts, choice)
	if err != nil {
		return nil, err
	}
	calls, err := t.toolCalls(choice, out, tools)
	if err != nil {
		return nil, err
	}
	return t.reply(choice, out, calls)
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
