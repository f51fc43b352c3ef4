// Package metrics counts what a server does and writes it in the Prometheus
// text exposition format: runs by status, super-steps, node latency as a
// histogram per node type, and open SSE streams.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultBuckets are the node latency histogram's upper bounds, in seconds.
var DefaultBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; last is +Inf
	sum    float64
	count  uint64
}

// Registry holds the server's metrics. It is safe for concurrent use.
type Registry struct {
	buckets []float64

	mu      sync.Mutex
	runs    map[string]uint64
	latency map[string]*histogram

	steps   atomic.Uint64
	streams atomic.Int64
	reqs    atomic.Uint64
}

// New returns an empty registry with the default buckets.
func New() *Registry {
	return &Registry{buckets: DefaultBuckets, runs: map[string]uint64{}, latency: map[string]*histogram{}}
}

// RunEnded counts a finished run by status.
func (r *Registry) RunEnded(status string) {
	r.mu.Lock()
	r.runs[status]++
	r.mu.Unlock()
}

// Steps adds super-steps.
func (r *Registry) Steps(n int) {
	if n > 0 {
		r.steps.Add(uint64(n))
	}
}

// NodeLatency records one node execution of a node type, in seconds.
func (r *Registry) NodeLatency(nodeType string, seconds float64) {
	r.mu.Lock()
	h := r.latency[nodeType]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(r.buckets)+1)}
		r.latency[nodeType] = h
	}
	i := sort.SearchFloat64s(r.buckets, seconds)
	h.counts[i]++
	h.sum += seconds
	h.count++
	r.mu.Unlock()
}

// StreamOpened and StreamClosed track open SSE streams.
func (r *Registry) StreamOpened() { r.streams.Add(1) }

// StreamClosed marks an SSE stream closed.
func (r *Registry) StreamClosed() { r.streams.Add(-1) }

// ActiveStreams returns the number of open SSE streams.
func (r *Registry) ActiveStreams() int64 { return r.streams.Load() }

// Request counts an HTTP request.
func (r *Registry) Request() { r.reqs.Add(1) }

// WriteTo writes every metric in the Prometheus text format.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	b.WriteString("# HELP graphctl_runs_total Runs that ended, by status.\n# TYPE graphctl_runs_total counter\n")
	r.mu.Lock()
	for _, s := range sortedKeys(r.runs) {
		fmt.Fprintf(&b, "graphctl_runs_total{status=%q} %d\n", s, r.runs[s])
	}
	b.WriteString("# HELP graphctl_node_duration_seconds Node execution time, by node type.\n# TYPE graphctl_node_duration_seconds histogram\n")
	for _, t := range sortedKeys(r.latency) {
		h := r.latency[t]
		var cum uint64
		for i, ub := range r.buckets {
			cum += h.counts[i]
			fmt.Fprintf(&b, "graphctl_node_duration_seconds_bucket{node_type=%q,le=%q} %d\n", t, formatFloat(ub), cum)
		}
		cum += h.counts[len(r.buckets)]
		fmt.Fprintf(&b, "graphctl_node_duration_seconds_bucket{node_type=%q,le=\"+Inf\"} %d\n", t, cum)
		fmt.Fprintf(&b, "graphctl_node_duration_seconds_sum{node_type=%q} %s\n", t, formatFloat(h.sum))
		fmt.Fprintf(&b, "graphctl_node_duration_seconds_count{node_type=%q} %d\n", t, h.count)
	}
	r.mu.Unlock()
	fmt.Fprintf(&b, "# HELP graphctl_steps_total Super-steps executed.\n# TYPE graphctl_steps_total counter\ngraphctl_steps_total %d\n", r.steps.Load())
	fmt.Fprintf(&b, "# HELP graphctl_sse_streams_active Open SSE streams.\n# TYPE graphctl_sse_streams_active gauge\ngraphctl_sse_streams_active %d\n", r.streams.Load())
	fmt.Fprintf(&b, "# HELP graphctl_http_requests_total HTTP requests served.\n# TYPE graphctl_http_requests_total counter\ngraphctl_http_requests_total %d\n", r.reqs.Load())
	n, err := io.WriteString(w, b.String())
	if err != nil {
		return int64(n), fmt.Errorf("write metrics: %w", err)
	}
	return int64(n), nil
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", f), "0"), ".")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
