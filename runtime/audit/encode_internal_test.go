package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/graphctl/graphctl/runtime/store"
)

// Messages and nodes are encoded exactly as encoding/json encodes them.
func TestEncodedMessagesAndNodesAreTheirJSON(t *testing.T) {
	zero, three := 0, 3
	tricky := "<a href=\"x\">&</a> \u2028 caf\u00e9 \x7f \xff tab\t"
	for _, tt := range []struct {
		name  string
		msgs  []Message
		nodes []Node
	}{
		{"nil", nil, nil},
		{"empty", []Message{}, []Node{}},
		{"zero values", []Message{{}}, []Node{{}}},
		{"every field", []Message{
			{Role: "user", Content: tricky, Meta: map[string]any{"chat_id": "7", "n": 1.5, "list": []any{"a", nil, true}, "nested": map[string]any{"b": 2.0, "a": "x"}}, CreatedAt: "2026-01-02T03:04:05Z"},
			{Role: "assistant", Content: "ok", Meta: map[string]any{}, CreatedAt: "b"},
		}, []Node{
			{Node: "n", Type: "llm", Step: -2, StartedAt: "s", DurationMS: 1e21, Status: "error", Attempts: 2, Error: tricky, CaughtBy: "c",
				Input: map[string]string{"z": "1", "a": tricky, "m": ""}, Output: map[string]string{"y": "2"}, Retrieved: &zero,
				Tokens: map[string]int{"total_tokens": 9, "prompt_tokens": -1}},
			{Node: "m", DurationMS: 0.000001, Retrieved: &three, Input: map[string]string{}, Tokens: map[string]int{}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				v   any
				enc func() ([]byte, error)
			}{
				{tt.msgs, func() ([]byte, error) { return appendMessages(nil, tt.msgs) }},
				{tt.nodes, func() ([]byte, error) { return appendNodes(nil, tt.nodes) }},
			} {
				want, err := json.Marshal(c.v)
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.enc()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("encoded\n%s\nencoding/json\n%s", got, want)
				}
			}
		})
	}
	// What encoding/json cannot encode is left to the Store's encoder, which
	// reports it.
	bad := []Node{{DurationMS: math.NaN()}}
	if _, err := appendNodes(nil, bad); err == nil {
		t.Error("a NaN duration encoded")
	}
	if _, err := store.PrepareItem([]string{"a"}, "k", Run{Nodes: bad}.value(), store.PutOptions{}, time.Time{}); err == nil {
		t.Error("a run value with a NaN duration encoded")
	}
}

// BenchmarkRunRecordPrepare measures what the Store does with a run's
// record: its value encoded as the Store encodes it.
func BenchmarkRunRecordPrepare(b *testing.B) {
	run := Run{RunID: "r1", ThreadID: "t1", Graph: "slot_filling", Status: "success",
		StartedAt: "2026-01-02T03:04:05Z", EndedAt: "2026-01-02T03:04:06Z", DurationMS: 1.5,
		Messages: []Message{{Role: "user", Content: "My dishwasher WDT780SAEM1 is leaking", CreatedAt: "2026-01-02T03:04:05Z"},
			{Role: "assistant", Content: "What would you like me to do?", Meta: map[string]any{"node": "ask_goal"}, CreatedAt: "2026-01-02T03:04:06Z"}}}
	for i, n := range []string{"extract", "route_goal", "ask_goal"} {
		run.Nodes = append(run.Nodes, Node{Node: n, Type: "extract", Step: i + 1, StartedAt: "2026-01-02T03:04:05Z", DurationMS: 0.1, Status: "ok",
			Input: map[string]string{"messages": "[1 message]"}, Output: map[string]string{"model": "WDT780SAEM1"}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.PrepareItem(RunsNS(run.ThreadID), run.StartedAt+"-"+run.RunID, run.value(), store.PutOptions{Index: []string{}}, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}
