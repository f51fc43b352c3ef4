// Package telemetry exports OpenTelemetry traces of graph runs: a span per
// run, per node, per model call and per tool call, with the GenAI semantic
// convention attributes (gen_ai.operation.name, gen_ai.request.model,
// gen_ai.usage.input_tokens, gen_ai.tool.name, gen_ai.conversation.id, …) and
// OpenInference's span kinds, so that Jaeger, Langfuse or Phoenix show a run
// as a tree.
//
// FromEnv builds the official Go SDK's tracer provider with an OTLP exporter
// configured by the standard environment variables: it is on when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set
// (or OTEL_TRACES_EXPORTER=otlp), off with OTEL_TRACES_EXPORTER=none or
// OTEL_SDK_DISABLED=true; OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL picks
// http/protobuf (the default) or grpc; headers, timeouts, the sampler
// (OTEL_TRACES_SAMPLER), batching (OTEL_BSP_*) and the resource
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) are read by the SDK.
//
// Tracer is the engine.Observer that starts the run and node spans; node
// packages start model and tool spans as children of the node's span with
// StartModel and StartTool, which cost nothing when the context carries no
// recording span.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ScopeName is the instrumentation scope of every span.
const ScopeName = "github.com/graphctl/graphctl"

// Provider is a configured tracer provider.
type Provider struct {
	*sdktrace.TracerProvider
	// Protocol and Endpoint describe where spans go, for logs.
	Protocol string
	Endpoint string
}

// Shutdown flushes the spans not yet exported and stops the exporter.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil || p.TracerProvider == nil {
		return nil
	}
	return p.TracerProvider.Shutdown(ctx)
}

// Observer returns the engine observer that traces runs with p.
func (p *Provider) Observer() *Tracer { return NewTracer(p.TracerProvider) }

// FromEnv builds the provider the OTEL_* environment variables describe
// (read with getenv, os.Getenv when nil), or nil when tracing is off.
func FromEnv(ctx context.Context, getenv func(string) string) (*Provider, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	exporter := strings.ToLower(env("OTEL_TRACES_EXPORTER"))
	endpoint := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = env("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	switch exporter {
	case "none":
		return nil, nil
	case "", "otlp":
		if exporter == "" && endpoint == "" {
			return nil, nil
		}
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: graphctl exports traces with otlp (or none)", exporter)
	}
	protocol := strings.ToLower(env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if protocol == "" {
		protocol = strings.ToLower(env("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if protocol == "" {
		protocol = "http/protobuf"
	}
	var exp *otlptrace.Exporter
	var err error
	switch protocol {
	case "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: want http/protobuf or grpc", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter (%s): %w", protocol, err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "graphctl")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	if endpoint == "" {
		endpoint = "(the SDK's default)"
	}
	return &Provider{TracerProvider: tp, Protocol: protocol, Endpoint: endpoint}, nil
}
