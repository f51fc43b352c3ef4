package metrics

import (
	"strings"
	"testing"
)

func TestExposition(t *testing.T) {
	r := New()
	r.RunEnded("success")
	r.RunEnded("success")
	r.RunEnded("error")
	r.Steps(3)
	r.NodeLatency("reply", 0.0007)
	r.NodeLatency("reply", 0.2)
	r.NodeLatency("reply", 100)
	r.StreamOpened()
	r.StreamOpened()
	r.StreamClosed()
	var b strings.Builder
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`graphctl_runs_total{status="success"} 2`,
		`graphctl_runs_total{status="error"} 1`,
		`graphctl_steps_total 3`,
		`graphctl_sse_streams_active 1`,
		`graphctl_node_duration_seconds_bucket{node_type="reply",le="0.0005"} 0`,
		`graphctl_node_duration_seconds_bucket{node_type="reply",le="0.001"} 1`,
		`graphctl_node_duration_seconds_bucket{node_type="reply",le="0.25"} 2`,
		`graphctl_node_duration_seconds_bucket{node_type="reply",le="30"} 2`,
		`graphctl_node_duration_seconds_bucket{node_type="reply",le="+Inf"} 3`,
		`graphctl_node_duration_seconds_count{node_type="reply"} 3`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
