package llm

import (
	"context"
	"strings"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/runtime/telemetry"
)

// tracedModel makes each model call a span ("chat <model>", GenAI semantic
// conventions, token usage) under the span of the calling node, when the
// run is traced (see runtime/telemetry); otherwise it only calls the model.
type tracedModel struct {
	llms.Model
	provider, model string
}

// Traced wraps m, the model of spec, so that its calls are traced.
func Traced(spec string, m llms.Model) llms.Model {
	if m == nil {
		return nil
	}
	provider, name, _ := strings.Cut(spec, ":")
	if name == "" {
		name = provider
	}
	return tracedModel{Model: m, provider: strings.ToLower(provider), model: name}
}

// SpecFor is the spec a node's model resolves to, for traces ("script" for
// a test's scripted replies).
func SpecFor(s *node.Services, nodeSpec, graphDefault string) string {
	if s != nil {
		if raw, ok := ScriptKey.Get(s); ok && raw != nil {
			return "script"
		}
	}
	spec, _ := Resolve(s, nodeSpec, graphDefault)
	return spec
}

// GenerateContent implements llms.Model.
func (t tracedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var co llms.CallOptions
	for _, o := range options {
		o(&co)
	}
	req := telemetry.Model{Provider: t.provider, Model: t.model}
	if co.Temperature != 0 {
		temp := co.Temperature
		req.Temperature = &temp
	}
	req.MaxTokens = co.MaxTokens
	ctx, span := telemetry.StartModel(ctx, req)
	resp, err := t.Model.GenerateContent(ctx, msgs, options...)
	var in, out int64
	var reasons []string
	if resp != nil {
		for _, c := range resp.Choices {
			if c == nil {
				continue
			}
			u := map[string]float64{}
			addUsage(u, c.GenerationInfo)
			in += int64(u["prompt_tokens"])
			out += int64(u["completion_tokens"])
			if c.StopReason != "" {
				reasons = append(reasons, c.StopReason)
			}
		}
	}
	span.End(in, out, reasons, err)
	return resp, err
}

// Call implements llms.Model.
func (t tracedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, t, prompt, options...)
}

// tracedEmbedder makes each embedding call a span ("embeddings <model>").
type tracedEmbedder struct {
	embeddings.Embedder
	provider, model string
}

func traceEmbedder(spec string, e embeddings.Embedder) embeddings.Embedder {
	provider, name, _ := strings.Cut(spec, ":")
	if name == "" {
		name = provider
	}
	return tracedEmbedder{Embedder: e, provider: strings.ToLower(provider), model: name}
}

// EmbedDocuments implements embeddings.Embedder.
func (t tracedEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, span := telemetry.StartModel(ctx, telemetry.Model{Provider: t.provider, Model: t.model, Operation: "embeddings"})
	v, err := t.Embedder.EmbedDocuments(ctx, texts)
	span.End(0, 0, nil, err)
	return v, err
}

// EmbedQuery implements embeddings.Embedder.
func (t tracedEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	ctx, span := telemetry.StartModel(ctx, telemetry.Model{Provider: t.provider, Model: t.model, Operation: "embeddings"})
	v, err := t.Embedder.EmbedQuery(ctx, text)
	span.End(0, 0, nil, err)
	return v, err
}
