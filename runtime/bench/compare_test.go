package bench_test

import (
	"testing"

	"github.com/graphctl/graphctl/runtime/bench"
)

// Another runtime's in-memory figures pair with ours in memory, its SQLite
// figures with ours on Badger with and without fsync (or with our figure of
// no backend, measured on Badger), and nothing else pairs.
func TestCompare(t *testing.T) {
	ours := []bench.Result{
		{Scenario: "loop", Metric: "per super-step, memory", Value: 2, Unit: "µs"},
		{Scenario: "loop", Metric: "per super-step, badger", Value: 10, Unit: "µs"},
		{Scenario: "loop", Metric: "per super-step, badger-fsync", Value: 400, Unit: "µs"},
		{Scenario: "loop", Metric: "per super-step, postgres", Value: 300, Unit: "µs"},
		{Scenario: "chat", Metric: "per turn, turns 2-11, badger", Value: 50, Unit: "µs"},
		{Scenario: "chat", Metric: "on disk / final state", Value: 2, Unit: "×"},
		{Scenario: "chat", Metric: "data dir on disk", Value: 100, Unit: "KiB"},
		{Scenario: "fan-out", Metric: "per run of 100 tasks + join, badger", Value: 0, Unit: "ms"},
	}
	tests := []struct {
		name  string
		other bench.Result
		want  []bench.Comparison
	}{
		{
			name:  "in memory",
			other: bench.Result{Scenario: "loop", Metric: "per super-step, memory", Value: 70, Unit: "µs"},
			want:  []bench.Comparison{{Metric: "loop: per super-step, memory vs memory", Ratio: 35}},
		},
		{
			name:  "durable against both Badger modes",
			other: bench.Result{Scenario: "loop", Metric: "per super-step, sqlite", Value: 1000, Unit: "µs"},
			want: []bench.Comparison{
				{Metric: "loop: per super-step, sqlite vs badger", Durable: true, Ratio: 100},
				{Metric: "loop: per super-step, sqlite vs badger-fsync", Durable: true, Ratio: 2.5},
			},
		},
		{
			name:  "a metric with commas",
			other: bench.Result{Scenario: "chat", Metric: "per turn, turns 2-11, sqlite", Value: 1500, Unit: "µs"},
			want:  []bench.Comparison{{Metric: "chat: per turn, turns 2-11, sqlite vs badger", Durable: true, Ratio: 30}},
		},
		{
			name:  "ours without a backend is on Badger",
			other: bench.Result{Scenario: "chat", Metric: "on disk / final state, sqlite", Value: 600, Unit: "×"},
			want:  []bench.Comparison{{Metric: "chat: on disk / final state, sqlite vs badger", Durable: true, Ratio: 300}},
		},
		{name: "no figure of ours", other: bench.Result{Scenario: "chat", Metric: "per turn, turns 2-11, memory", Value: 900, Unit: "µs"}},
		{name: "another unit", other: bench.Result{Scenario: "chat", Metric: "data dir on disk, sqlite", Value: 3, Unit: "MiB"}},
		{name: "ours of no value", other: bench.Result{Scenario: "fan-out", Metric: "per run of 100 tasks + join, sqlite", Value: 40, Unit: "ms"}},
		{name: "another scenario", other: bench.Result{Scenario: "chat", Metric: "per super-step, memory", Value: 70, Unit: "µs"}},
		{name: "no backend", other: bench.Result{Scenario: "chat", Metric: "final state of 1000 turns (JSON)", Value: 270, Unit: "KiB"}},
		{name: "another backend", other: bench.Result{Scenario: "loop", Metric: "per super-step, postgres", Value: 900, Unit: "µs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bench.Compare(ours, []bench.Result{tt.other})
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Metric != w.Metric || g.Durable != w.Durable || g.Ratio != w.Ratio || g.Other != tt.other {
					t.Errorf("comparison %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
