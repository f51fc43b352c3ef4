package ratelimit

import (
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	tests := []struct {
		name    string
		rate    float64
		burst   int
		advance []time.Duration // before each call
		want    []bool
	}{
		{"unlimited", 0, 0, []time.Duration{0, 0, 0}, []bool{true, true, true}},
		{"burst then refuse", 2, 2, []time.Duration{0, 0, 0}, []bool{true, true, false}},
		{"refill after half a second", 2, 1, []time.Duration{0, 0, 500 * time.Millisecond}, []bool{true, false, true}},
		{"burst defaults to rate", 3, 0, []time.Duration{0, 0, 0, 0}, []bool{true, true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(tt.rate, tt.burst, clock)
			for i, d := range tt.advance {
				now = now.Add(d)
				got, wait := l.Allow("k")
				if got != tt.want[i] {
					t.Fatalf("call %d: allow = %v, want %v", i, got, tt.want[i])
				}
				if !got && wait <= 0 {
					t.Fatalf("call %d: refused with no wait", i)
				}
			}
			if ok, _ := l.Allow("other"); !ok {
				t.Fatal("another key shares the bucket")
			}
		})
	}
}
