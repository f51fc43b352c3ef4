package telemetry

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

// Attribute keys: the GenAI semantic conventions, OpenInference's span kind,
// and graphctl's own.
const (
	AttrOperation     = "gen_ai.operation.name"
	AttrProvider      = "gen_ai.provider.name"
	AttrSystem        = "gen_ai.system"
	AttrRequestModel  = "gen_ai.request.model"
	AttrResponseModel = "gen_ai.response.model"
	AttrTemperature   = "gen_ai.request.temperature"
	AttrMaxTokens     = "gen_ai.request.max_tokens"
	AttrInputTokens   = "gen_ai.usage.input_tokens"
	AttrOutputTokens  = "gen_ai.usage.output_tokens"
	AttrFinishReasons = "gen_ai.response.finish_reasons"
	AttrAgentName     = "gen_ai.agent.name"
	AttrConversation  = "gen_ai.conversation.id"
	AttrToolName      = "gen_ai.tool.name"
	AttrToolType      = "gen_ai.tool.type"
	AttrToolCallID    = "gen_ai.tool.call.id"
	AttrErrorType     = "error.type"
	AttrSpanKind      = "openinference.span.kind"

	AttrThread    = "graphctl.thread.id"
	AttrRun       = "graphctl.run.id"
	AttrRunStatus = "graphctl.run.status"
	AttrSteps     = "graphctl.run.steps"
	AttrNode      = "graphctl.node.name"
	AttrNodeType  = "graphctl.node.type"
	AttrStep      = "graphctl.step"
	AttrTask      = "graphctl.task"
	AttrStatus    = "graphctl.node.status"
	AttrAttempts  = "graphctl.node.attempts"
	AttrRetrieved = "graphctl.retrieval.count"

	AttrNodeInputTokens  = "graphctl.usage.input_tokens"
	AttrNodeOutputTokens = "graphctl.usage.output_tokens"
)

// Tracer is an engine.Observer that traces runs and their nodes.
type Tracer struct {
	tracer trace.Tracer
}

// NewTracer returns a Tracer over tp.
func NewTracer(tp trace.TracerProvider) *Tracer {
	return &Tracer{tracer: tp.Tracer(ScopeName)}
}

// ObserveRun implements engine.Observer: the run's span, named
// "invoke_agent <graph>", is the root of its nodes' spans.
func (t *Tracer) ObserveRun(ctx context.Context, run engine.RunInfo) (context.Context, engine.RunObservation) {
	ctx, span := t.tracer.Start(ctx, "invoke_agent "+run.Graph,
		trace.WithTimestamp(run.Start),
		trace.WithAttributes(
			attribute.String(AttrOperation, "invoke_agent"),
			attribute.String(AttrAgentName, run.Graph),
			attribute.String(AttrConversation, run.ThreadID),
			attribute.String(AttrThread, run.ThreadID),
			attribute.String(AttrRun, run.RunID),
			attribute.String(AttrSpanKind, "AGENT"),
		))
	return ctx, runSpan{span}
}

type runSpan struct{ span trace.Span }

func (r runSpan) End(res *engine.Result) {
	if res != nil {
		r.span.SetAttributes(attribute.String(AttrRunStatus, res.Status), attribute.Int(AttrSteps, res.Steps))
		if res.Err != nil {
			r.span.RecordError(res.Err)
			r.span.SetStatus(codes.Error, res.Err.Error())
			r.span.SetAttributes(attribute.String(AttrErrorType, "run_error"))
		}
	}
	r.span.End()
}

// ObserveNode implements engine.Observer: one span per task, named after the
// node, with the usage and retrieval counts its events report.
func (t *Tracer) ObserveNode(ctx context.Context, task engine.TaskInfo) (context.Context, engine.NodeObservation) {
	// Model and tool calls are child spans of their own (LLM, TOOL), so a
	// node is a CHAIN, or a RETRIEVER for the retrieval node types.
	kind := "CHAIN"
	switch task.Type {
	case "rag_retrieve", "memory_retrieve":
		kind = "RETRIEVER"
	}
	ctx, span := t.tracer.Start(ctx, task.Node,
		trace.WithTimestamp(task.Start),
		trace.WithAttributes(
			attribute.String(AttrNode, task.Node),
			attribute.String(AttrNodeType, task.Type),
			attribute.Int(AttrStep, task.Step),
			attribute.String(AttrTask, task.Task),
			attribute.String(AttrThread, task.ThreadID),
			attribute.String(AttrRun, task.RunID),
			attribute.String(AttrSpanKind, kind),
		))
	return ctx, &nodeSpan{span: span}
}

type nodeSpan struct {
	span trace.Span

	mu        sync.Mutex
	in, out   int64
	retrieved int64
	counted   bool
}

func (n *nodeSpan) Event(ev event.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev.Type {
	case node.UsageEvent:
		n.in += toInt(ev.Payload["prompt_tokens"])
		n.out += toInt(ev.Payload["completion_tokens"])
	case "retrieval", "web_search", "memory_recalled":
		n.retrieved += toInt(ev.Payload["count"])
		n.counted = true
	}
}

func (n *nodeSpan) End(end engine.TaskEnd) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.span.SetAttributes(attribute.String(AttrStatus, end.Status), attribute.Int(AttrAttempts, end.Attempts))
	// The node's model calls carry gen_ai.usage.*; the node sums them under
	// its own keys, so that tools summing usage do not count tokens twice.
	if n.in+n.out > 0 {
		n.span.SetAttributes(attribute.Int64(AttrNodeInputTokens, n.in), attribute.Int64(AttrNodeOutputTokens, n.out))
	}
	if n.counted {
		n.span.SetAttributes(attribute.Int64(AttrRetrieved, n.retrieved))
	}
	if end.Err != nil {
		n.span.RecordError(end.Err)
		if end.Status == "error" {
			n.span.SetStatus(codes.Error, end.Err.Error())
		}
		n.span.SetAttributes(attribute.String(AttrErrorType, node.CodeOf(end.Err)))
	}
	n.span.End()
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

// tracerFrom returns the tracer of the span ctx carries, and whether that
// span records (so that children are worth starting).
func tracerFrom(ctx context.Context) (trace.Tracer, bool) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return nil, false
	}
	return parent.TracerProvider().Tracer(ScopeName), true
}

// Model describes a model call for StartModel.
type Model struct {
	// Provider is the provider part of the spec (openai, ollama, …).
	Provider string
	Model    string
	// Operation is chat (the default) or embeddings.
	Operation   string
	Temperature *float64
	MaxTokens   int
}

// ModelSpan is a started model call span.
type ModelSpan struct{ span trace.Span }

// StartModel starts a model call's span, "chat <model>" (or "embeddings
// <model>"), as a child of the span in ctx; without a recording span in ctx
// it starts nothing (the returned span's methods are no-ops).
func StartModel(ctx context.Context, m Model) (context.Context, *ModelSpan) {
	t, ok := tracerFrom(ctx)
	if !ok {
		return ctx, nil
	}
	op := m.Operation
	if op == "" {
		op = "chat"
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, op),
		attribute.String(AttrProvider, m.Provider),
		attribute.String(AttrSystem, m.Provider),
		attribute.String(AttrRequestModel, m.Model),
		attribute.String(AttrSpanKind, map[string]string{"chat": "LLM", "embeddings": "EMBEDDING"}[op]),
	}
	if m.Temperature != nil {
		attrs = append(attrs, attribute.Float64(AttrTemperature, *m.Temperature))
	}
	if m.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int(AttrMaxTokens, m.MaxTokens))
	}
	ctx, span := t.Start(ctx, op+" "+m.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, &ModelSpan{span}
}

// End ends the span with the call's token usage, finish reasons and error.
func (s *ModelSpan) End(inputTokens, outputTokens int64, finishReasons []string, err error) {
	if s == nil {
		return
	}
	if inputTokens+outputTokens > 0 {
		s.span.SetAttributes(attribute.Int64(AttrInputTokens, inputTokens), attribute.Int64(AttrOutputTokens, outputTokens))
	}
	if len(finishReasons) > 0 {
		s.span.SetAttributes(attribute.StringSlice(AttrFinishReasons, finishReasons))
	}
	endWith(s.span, err)
}

// ToolSpan is a started tool call span.
type ToolSpan struct{ span trace.Span }

// StartTool starts a tool call's span, "execute_tool <name>", as a child of
// the span in ctx (nothing without a recording span).
func StartTool(ctx context.Context, name, callID string) (context.Context, *ToolSpan) {
	t, ok := tracerFrom(ctx)
	if !ok {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, "execute_tool"),
		attribute.String(AttrToolName, name),
		attribute.String(AttrToolType, "function"),
		attribute.String(AttrSpanKind, "TOOL"),
	}
	if callID != "" {
		attrs = append(attrs, attribute.String(AttrToolCallID, callID))
	}
	ctx, span := t.Start(ctx, "execute_tool "+name, trace.WithAttributes(attrs...))
	return ctx, &ToolSpan{span}
}

// SetAttributes adds attributes (a result count, a query) to the span.
func (s *ToolSpan) SetAttributes(kv ...attribute.KeyValue) {
	if s != nil {
		s.span.SetAttributes(kv...)
	}
}

// End ends the span, with err as its status when not nil.
func (s *ToolSpan) End(err error) {
	if s != nil {
		endWith(s.span, err)
	}
}

func endWith(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String(AttrErrorType, fmt.Sprintf("%T", err)))
	}
	span.End()
}
