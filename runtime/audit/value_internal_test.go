package audit

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decoded is v encoded as JSON and decoded into plain values.
func decoded(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The values written to the Store are the records' JSON encodings.
func TestRecordValuesAreTheirJSON(t *testing.T) {
	retrieved := 3
	fullRun := Run{RunID: "r1", ThreadID: "t1", Graph: "g", UserID: "u1", Status: "error", Error: "boom", Resumed: true,
		StartedAt: "2026-01-02T03:04:05Z", EndedAt: "2026-01-02T03:04:06Z", DurationMS: 1000.5,
		Messages: []Message{{Role: "user", Content: "hi", Meta: map[string]any{"chat_id": "7"}, CreatedAt: "2026-01-02T03:04:05Z"}},
		Nodes: []Node{{Node: "n", Type: "llm", Step: 1, StartedAt: "2026-01-02T03:04:05Z", DurationMS: 2, Status: "ok", Attempts: 2,
			Input: map[string]string{"x": "1"}, Output: map[string]string{"y": "2"}, Retrieved: &retrieved, Tokens: map[string]int{"total_tokens": 9}}}}
	fullConv := Conversation{ThreadID: "t1", UserID: "u1", Graph: "g", CreatedAt: "a", UpdatedAt: "b", Runs: 2, Messages: 5}
	for _, tt := range []struct {
		name   string
		record any
		value  map[string]any
	}{
		{"run with every field", fullRun, fullRun.value()},
		{"empty run", Run{}, Run{}.value()},
		{"conversation with every field", fullConv, fullConv.value()},
		{"empty conversation", Conversation{}, Conversation{}.value()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := decoded(t, tt.value), decoded(t, tt.record); !reflect.DeepEqual(got, want) {
				t.Errorf("value encodes as\n%v\nthe record as\n%v", got, want)
			}
		})
	}
	// A field added to a record must be added to its value too.
	for _, tt := range []struct {
		record any
		value  map[string]any
	}{{fullRun, fullRun.value()}, {fullConv, fullConv.value()}} {
		if n := reflect.TypeOf(tt.record).NumField(); len(tt.value) != n {
			t.Errorf("%T has %d fields, its value %d members", tt.record, n, len(tt.value))
		}
	}
}

// A node's config is read for identifiers once, and a config that differs
// gets its own.
func TestConfigNamesAreReadOncePerConfig(t *testing.T) {
	var r Recorder
	a := map[string]any{"text": "${model} and ${part}"}
	b := map[string]any{"when": "len(symptoms) > 0"}
	first := r.configNames(a)
	if !first["model"] || !first["part"] || first["symptoms"] {
		t.Fatalf("names of a = %v", first)
	}
	if got := r.configNames(a); reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(first).UnsafePointer() {
		t.Errorf("the names of a config were read again")
	}
	if got := r.configNames(b); !got["symptoms"] || got["model"] {
		t.Errorf("names of b = %v", got)
	}
	if got := r.configNames(nil); !reflect.DeepEqual(got, identifiers("null")) {
		t.Errorf("names of no config = %v", got)
	}
}
