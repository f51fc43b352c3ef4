package callretry

import (
	"net/http"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/graph"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fraction", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds win", map[string]string{"Retry-After": "2", "Retry-After-Ms": "150"}, 150 * time.Millisecond},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got := RetryAfter(h, now); got != tt.want {
			t.Errorf("%s: RetryAfter = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDelay(t *testing.T) {
	p := FromGraph(&graph.RetryPolicy{InitialInterval: 100 * time.Millisecond, Backoff: 3, MaxInterval: time.Second, MaxRetryAfter: 5 * time.Second})
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		want       time.Duration
	}{
		{1, 0, 100 * time.Millisecond},
		{2, 0, 300 * time.Millisecond},
		{3, 0, 900 * time.Millisecond},
		{4, 0, time.Second}, // bounded by max_interval
		{1, 2 * time.Second, 2 * time.Second},
		{1, time.Hour, 5 * time.Second}, // bounded by max_retry_after
	}
	for _, tt := range tests {
		if got := p.Delay(tt.attempt, tt.retryAfter); got != tt.want {
			t.Errorf("Delay(%d, %v) = %v, want %v", tt.attempt, tt.retryAfter, got, tt.want)
		}
	}
	j := Default
	for range 100 {
		if d := j.Delay(1, 0); d < 250*time.Millisecond || d > 750*time.Millisecond {
			t.Fatalf("jittered first wait %v outside 250ms..750ms", d)
		}
	}
}

func TestTransientStatus(t *testing.T) {
	for code, want := range map[int]bool{200: false, 400: false, 401: false, 404: false, 408: true, 429: true,
		500: true, 501: false, 502: true, 503: true, 504: true, 505: false, 529: true} {
		if got := TransientStatus(code); got != want {
			t.Errorf("TransientStatus(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestFromGraphDefaults(t *testing.T) {
	if got := FromGraph(nil); got != Default {
		t.Errorf("FromGraph(nil) = %+v", got)
	}
	got := FromGraph(&graph.RetryPolicy{MaxAttempts: 1})
	if got.MaxAttempts != 1 || got.Initial != Default.Initial || got.MaxRetryAfter != Default.MaxRetryAfter || got.Jitter {
		t.Errorf("FromGraph(max_attempts 1) = %+v", got)
	}
}
