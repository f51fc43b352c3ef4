package telemetry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/telemetry"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		on      bool
		proto   string
		wantErr string
	}{
		{name: "nothing set: off", env: map[string]string{}},
		{name: "an endpoint: on, http/protobuf", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true, proto: "http/protobuf"},
		{name: "a traces endpoint and grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: true, proto: "grpc"},
		{name: "the traces protocol wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, on: true, proto: "grpc"},
		{name: "exporter otlp without endpoint: the SDK default", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true, proto: "http/protobuf"},
		{name: "exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_TRACES_EXPORTER": "none"}},
		{name: "SDK disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_SDK_DISABLED": "true"}},
		{name: "an exporter graphctl does not have", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: "OTEL_TRACES_EXPORTER=zipkin"},
		{name: "http/json", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: "want http/protobuf or grpc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED"} {
				t.Setenv(k, tt.env[k])
			}
			p, err := telemetry.FromEnv(context.Background(), func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (p != nil) != tt.on {
				t.Fatalf("provider %v, want on=%v", p, tt.on)
			}
			if p != nil {
				defer p.Shutdown(context.Background())
				if p.Protocol != tt.proto {
					t.Errorf("protocol %s, want %s", p.Protocol, tt.proto)
				}
			}
		})
	}
}

func TestSpansWithoutATraceCostNothing(t *testing.T) {
	ctx, m := telemetry.StartModel(context.Background(), telemetry.Model{Provider: "openai", Model: "x"})
	if m != nil || ctx != context.Background() {
		t.Error("a model span started without a recording parent")
	}
	m.End(1, 2, nil, nil) // no-op on nil
	_, tool := telemetry.StartTool(context.Background(), "t", "")
	if tool != nil {
		t.Error("a tool span started without a recording parent")
	}
	tool.End(nil)
}
