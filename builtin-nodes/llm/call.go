package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

// callOptions returns the options of the node's model calls: sampling, the
// offered tools and JSON mode.
func (n *llmNode) callOptions(tools *toolset) []llms.CallOption {
	var opts []llms.CallOption
	if n.temperature != nil {
		opts = append(opts, llms.WithTemperature(*n.temperature))
	}
	if n.maxTokens > 0 {
		opts = append(opts, llms.WithMaxTokens(n.maxTokens))
	}
	if !tools.empty() {
		opts = append(opts, llms.WithTools(tools.defs))
	}
	if n.format == "json" {
		opts = append(opts, llms.WithJSONMode())
	}
	return opts
}

// call is the call phase: one model call, streaming a text reply as text
// deltas, or the text of a JSON reply's reply_from field as it arrives. The
// text comes from the stream guard as it reads the reply (textTap) when the
// reply is an OpenAI chat completion stream, else from the client's
// streaming function.
func (t *turn) call(ctx context.Context, model llms.Model, msgs []llms.MessageContent, opts []llms.CallOption) (*llms.ContentChoice, error) {
	n := t.n
	var tap *textTap
	switch {
	case n.stream && n.format == "json" && n.replyFrom != "" && !strings.Contains(n.replyFrom, "."):
		t.replyStream = newFieldStreamer(n.replyFrom, func(text string) {
			t.emit(event.Event{Type: event.Text, Payload: map[string]any{"content": text, "delta": true}})
		})
		tap = &textTap{send: func(text string) { t.replyStream.Write([]byte(text)) }}
	case n.stream && n.format == "text":
		tap = &textTap{send: func(text string) {
			t.streamed = true
			t.emit(event.Event{Type: event.Text, Payload: map[string]any{"content": text, "delta": true}})
		}}
	}
	callCtx, callOpts := ctx, opts
	if tap != nil {
		callCtx = withTextTap(ctx, tap)
		callOpts = append(append([]llms.CallOption(nil), opts...), llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			if len(chunk) > 0 && !tap.isTaken() && !isToolCallChunk(chunk) {
				tap.text(string(chunk))
			}
			return nil
		}))
	}
	choice, err := t.generate(callCtx, model, msgs, callOpts, "")
	tap.close()
	if err != nil && tap != nil && streamRefused(err) {
		// The server does not stream: ask again without streaming; the
		// reply is then shown whole, as one text event.
		t.replyStream = nil
		return t.generate(ctx, model, msgs, opts, "")
	}
	return choice, err
}

// streamRefused reports whether a model call failed because the server
// refuses streaming: a 4xx answer that speaks of streaming ("stream is not
// supported", "'stream' does not support true with this model").
func streamRefused(err error) bool {
	m := statusRe.FindStringSubmatch(err.Error())
	if m == nil || m[1][0] != '4' || m[1] == "429" {
		return false
	}
	return strings.Contains(strings.ToLower(err.Error()), "stream")
}

// generate makes one model call and returns its first choice, adding its usage.
func (t *turn) generate(ctx context.Context, model llms.Model, msgs []llms.MessageContent, opts []llms.CallOption, what string) (*llms.ContentChoice, error) {
	resp, err := model.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return nil, classify(ctx, t.in.Node, err)
	}
	choice, err := firstChoice(resp)
	if err != nil {
		return nil, node.Errorf("llm_error", "llm node %q: %s%w", t.in.Node, what, err)
	}
	addUsage(t.usage, choice.GenerationInfo)
	return choice, nil
}

// parse is the parse phase of a JSON reply: the reply is decoded and checked
// against the schema; when that fails the model is shown its reply and the
// problem once, and asked again. A reply that calls tools natively is not
// repaired: its text, when it is not the JSON object, is set aside (models
// call tools with no text or a preface), and the model answers in JSON
// after the tools' results.
func (t *turn) parse(ctx context.Context, model llms.Model, msgs []llms.MessageContent, opts []llms.CallOption, choice *llms.ContentChoice) (any, error) {
	if t.n.format != "json" {
		return nil, nil
	}
	out, _, err := t.n.parseOutput(choice.Content)
	if err == nil {
		return out, nil
	}
	if len(choice.ToolCalls) > 0 {
		return nil, nil
	}
	repair := append(append([]llms.MessageContent(nil), msgs...),
		llms.TextParts(llms.ChatMessageTypeAI, choice.Content),
		llms.TextParts(llms.ChatMessageTypeHuman, "Your reply could not be used: "+err.Error()+
			". Reply again with only the corrected JSON object, no other text."))
	choice2, err2 := t.generate(ctx, model, repair, opts, "repair: ")
	if err2 != nil {
		return nil, err2
	}
	out, _, err2 = t.n.parseOutput(choice2.Content)
	if err2 != nil {
		return nil, node.Errorf("invalid_output", "llm node %q: the model's JSON output is invalid after one repair attempt: %v (first attempt: %v)", t.in.Node, err2, err)
	}
	return out, nil
}

func firstChoice(resp *llms.ContentResponse) (*llms.ContentChoice, error) {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return nil, fmt.Errorf("the model returned no choices")
	}
	return resp.Choices[0], nil
}
