package cognitive

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/llm"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/runtime/node"
)

// modelRef names the model a node uses: its own spec, else the graph's
// default (the model layer applies overrides and test scripts).
type modelRef struct {
	name         string
	graphDefault string
}

// prepare checks that a model can be had for the node.
func (m *modelRef) prepare(ctx context.Context, services *node.Services, what string) error {
	if _, err := llm.Model(ctx, services, m.name, m.graphDefault); err != nil {
		return fmt.Errorf("%s node needs a model: %w", what, err)
	}
	return nil
}

// generate sends messages to the model and returns the first choice's text.
// It reports token usage as a usage event. A failed call is a retryable node
// error with code "llm_error".
func (m *modelRef) generate(ctx context.Context, in *node.Input, msgs []llms.MessageContent, opts ...llms.CallOption) (string, error) {
	mdl, err := llm.Model(ctx, in.Services, m.name, m.graphDefault)
	if err != nil {
		return "", node.Errorf("llm_config", "node %s: %w", in.Node, err)
	}
	// Tag the call with the node's name, so a scripted model can hold replies for it.
	resp, err := mdl.GenerateContent(llm.WithNode(ctx, in.Node), msgs, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("node %s: model call: %w", in.Node, ctx.Err())
		}
		return "", node.Retryable("llm_error", fmt.Errorf("node %s: model call: %w", in.Node, err))
	}
	if resp == nil || len(resp.Choices) == 0 {
		return "", node.Retryable("llm_error", fmt.Errorf("node %s: the model returned no choices", in.Node))
	}
	c := resp.Choices[0]
	emitUsage(in, c.GenerationInfo)
	return c.Content, nil
}

// complete sends one user prompt.
func (m *modelRef) complete(ctx context.Context, in *node.Input, prompt string) (string, error) {
	return m.generate(ctx, in, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)})
}

// emitUsage reports the token counts a provider put in the generation info.
func emitUsage(in *node.Input, info map[string]any) {
	if in.Emit == nil || info == nil {
		return
	}
	payload := map[string]any{}
	for key, name := range map[string]string{
		"PromptTokens": "prompt_tokens", "CompletionTokens": "completion_tokens", "TotalTokens": "total_tokens",
	} {
		if v, ok := number(info[key]); ok && v > 0 {
			payload[name] = v
		}
	}
	if len(payload) > 0 {
		in.Emit(event.Event{Type: node.UsageEvent, Payload: payload})
	}
}

// embedderRef names an embedding model.
type embedderRef struct {
	spec string
	// lenient is set for the graph's defaults.embedder: when it cannot be had
	// the node works without it and says so in a memory_fallback event,
	// rather than failing. A node's own embedder setting is strict.
	lenient bool
}

// embedderFor returns the embedder a memory node uses: its own setting,
// else the graph's defaults.embedder; "none" (or nothing) is none.
func embedderFor(b node.Builder, own string) *embedderRef {
	own = strings.TrimSpace(own)
	switch {
	case own == "none":
		return nil
	case own != "":
		return &embedderRef{spec: own}
	}
	d, _ := b.Graph().Defaults.Raw[EmbedderDefaultsKey].(string)
	if d = strings.TrimSpace(d); d == "" || d == "none" {
		return nil
	}
	return &embedderRef{spec: d, lenient: true}
}

// prepare checks that the embedder can be had; a graph default that cannot
// is reported at run time instead.
func (e *embedderRef) prepare(ctx context.Context, services *node.Services, what string) error {
	if _, _, err := llm.ResolveEmbedder(ctx, services, e.spec); err != nil && !e.lenient {
		return fmt.Errorf("%s node needs its embedder %q: %w", what, e.spec, err)
	}
	return nil
}

// get returns the embedder for a run and the name its vectors are recorded
// under: the spec, $GRAPHCTL_EMBEDDER when set, or "hash" in scripted runs.
func (e *embedderRef) get(ctx context.Context, in *node.Input) (embeddings.Embedder, string, error) {
	emb, name, err := llm.ResolveEmbedder(ctx, in.Services, e.spec)
	if err != nil {
		return nil, "", node.Errorf("llm_config", "node %s: embedder %q: %w", in.Node, e.spec, err)
	}
	return emb, name, nil
}

// fallback reports that a lenient embedder failed and what the node does
// instead.
func (e *embedderRef) fallback(in *node.Input, err error, instead string) {
	if in.Emit != nil {
		in.Emit(event.Event{Type: MemoryFallbackEvent, Payload: map[string]any{
			"embedder": e.spec, "error": err.Error(), "to": instead}})
	}
}

// EmbedderDefaultsKey is the key of the graph defaults block that names the
// embedding model of memory nodes that name none.
const EmbedderDefaultsKey = "embedder"

func init() {
	graph.MustRegisterDefaultsKey(graph.DefaultsKey{Name: EmbedderDefaultsKey, Schema: "string",
		Doc: "embedder is the embedding model of memory nodes that name none\n" +
			`("openai:MODEL", "ollama:MODEL", "hash" or "none").`})
}
