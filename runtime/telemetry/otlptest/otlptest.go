// Package otlptest is an OTLP/HTTP trace receiver for tests: it listens on
// 127.0.0.1, accepts POST /v1/traces with a protobuf
// ExportTraceServiceRequest (gzip or not) as the OpenTelemetry SDK's OTLP
// exporter sends it, answers with an ExportTraceServiceResponse, and keeps
// the spans it received.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span.
type Span struct {
	Name     string
	TraceID  string
	SpanID   string
	ParentID string
	// Kind is the OTLP span kind (SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT, …).
	Kind  string
	Attrs map[string]any
	// Error is the status message of a span whose status is an error.
	Error string
	// Service is the resource's service.name; Scope the instrumentation scope.
	Service string
	Scope   string
	// Start and End are Unix nanoseconds.
	Start, End uint64
}

// Receiver is a local OTLP/HTTP trace receiver.
type Receiver struct {
	srv *httptest.Server

	mu    sync.Mutex
	spans []Span
}

// NewReceiver starts a receiver closed when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// Endpoint is the base URL to give OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) Endpoint() string { return r.srv.URL }

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer gz.Close()
		body = gz
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &msg); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.ResourceSpans {
		service := ""
		if rs.Resource != nil {
			if v, ok := attrs(rs.Resource.Attributes)["service.name"].(string); ok {
				service = v
			}
		}
		for _, ss := range rs.ScopeSpans {
			scope := ""
			if ss.Scope != nil {
				scope = ss.Scope.Name
			}
			for _, s := range ss.Spans {
				sp := Span{Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					Kind: s.Kind.String(), Attrs: attrs(s.Attributes), Service: service, Scope: scope,
					Start: s.StartTimeUnixNano, End: s.EndTimeUnixNano}
				if len(s.ParentSpanId) > 0 {
					sp.ParentID = hex.EncodeToString(s.ParentSpanId)
				}
				if s.Status != nil && s.Status.Code == tracepb.Status_STATUS_CODE_ERROR {
					sp.Error = s.Status.Message
					if sp.Error == "" {
						sp.Error = "error"
					}
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *commonpb.AnyValue) any {
	if v == nil {
		return nil
	}
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}
