package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/graphctl/graphctl/server/runs"
)

// The recursion limit reads the same from a request decoded by the API
// (float64), a stored config decoded exactly (json.Number) and a config set
// in Go (int, int64).
func TestRecursionLimitOfEveryNumberType(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  map[string]any
		want int
	}{
		{"none", nil, 0},
		{"float64", map[string]any{"recursion_limit": float64(7)}, 7},
		{"json.Number", map[string]any{"recursion_limit": json.Number("7")}, 7},
		{"int", map[string]any{"recursion_limit": 7}, 7},
		{"int64", map[string]any{"recursion_limit": int64(7)}, 7},
		{"configurable", map[string]any{"configurable": map[string]any{"recursion_limit": json.Number("9")}}, 9},
		{"top level first", map[string]any{"recursion_limit": 3, "configurable": map[string]any{"recursion_limit": 9}}, 3},
		{"zero", map[string]any{"recursion_limit": 0}, 0},
		{"negative", map[string]any{"recursion_limit": json.Number("-2")}, 0},
		{"not a number", map[string]any{"recursion_limit": "7"}, 0},
		{"bad json.Number", map[string]any{"recursion_limit": json.Number("x")}, 0},
	} {
		if got := recursionLimit(tt.cfg); got != tt.want {
			t.Errorf("%s: recursionLimit(%v) = %d, want %d", tt.name, tt.cfg, got, tt.want)
		}
	}
}

// A run submitted in this process runs the request it was submitted with;
// one without it (resumed after a restart) runs its stored kwargs.
func TestRunRequestFromSubmitOrKwargs(t *testing.T) {
	body := &runBody{AssistantID: "a", StreamMode: "values", Config: map[string]any{"recursion_limit": float64(4)}}
	kwargs, err := toKwargs(body)
	if err != nil {
		t.Fatal(err)
	}
	rec := &runs.Record{RunID: "r", Kwargs: kwargs}
	got, err := runRequest(context.WithValue(context.Background(), requestKey{}, body), rec)
	if err != nil || got != body {
		t.Fatalf("with the submitted request: %v, %v", got, err)
	}
	got, err = runRequest(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if got == body || got.AssistantID != "a" || got.StreamMode != "values" || recursionLimit(got.Config) != 4 {
		t.Errorf("from kwargs: %+v", got)
	}
	rec.Kwargs = map[string]any{"input": "not an object"}
	if _, err := runRequest(context.Background(), rec); err == nil {
		t.Error("kwargs with a string input decoded")
	}
}
