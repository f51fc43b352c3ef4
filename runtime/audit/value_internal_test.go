package audit

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/graphctl/graphctl/runtime/store/jsonenc"
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

// marshal is v's JSON.
func marshal(t *testing.T, v any) jsonenc.Raw {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The values written to the Store are the records' JSON encodings.
func TestRecordValuesAreTheirJSON(t *testing.T) {
	retrieved := 3
	fullRun := Run{RunID: "r1", ThreadID: "t1", Graph: "g", UserID: "u1", Status: "error", Error: "boom", Resumed: true,
		StartedAt: "2026-01-02T03:04:05Z", EndedAt: "2026-01-02T03:04:06Z", DurationMS: 1000.5,
		Messages: []Message{{Role: "user", Content: "hi", Meta: map[string]any{"chat_id": "7"}, CreatedAt: "2026-01-02T03:04:05Z"}},
		Nodes: []Node{{Node: "n", Type: "llm", Step: 1, StartedAt: "2026-01-02T03:04:05Z", DurationMS: 2, Status: "ok", Attempts: 2,
			Input: map[string]string{"x": "1"}, Output: map[string]string{"y": "2"}, Retrieved: &retrieved, Tokens: map[string]int{"total_tokens": 9}}}}
	fullValue := fullRun.value(marshal(t, fullRun.Messages), marshal(t, fullRun.Nodes))
	fullConv := Conversation{ThreadID: "t1", UserID: "u1", Graph: "g", CreatedAt: "a", UpdatedAt: "b", Runs: 2, Messages: 5}
	for _, tt := range []struct {
		name   string
		record any
		value  map[string]any
	}{
		{"run with every field", fullRun, fullValue},
		{"empty run", Run{}, Run{}.value(jsonenc.Raw("null"), jsonenc.Raw("null"))},
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
	}{{fullRun, fullValue}, {fullConv, fullConv.value()}} {
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

// A stored conversation reads the same without the JSON round trip as
// with it, errors included, over a conversation with values already set.
func TestConversationFromMapIsFromMap(t *testing.T) {
	for _, m := range []map[string]any{
		{},
		{"thread_id": "t", "graph": "g", "created_at": "a", "updated_at": "b", "runs": float64(3), "messages": float64(7)},
		{"thread_id": "t", "user_id": "u", "runs": json.Number("4"), "messages": 2, "other": []any{1}},
		{"runs": int64(5), "messages": float64(-1)},
		{"runs": 2.5},
		{"runs": json.Number("2.0")},
		{"runs": float64(1 << 60)},
		{"runs": "3"},
		{"thread_id": nil},
		{"thread_id": 5},
		{"messages": nil},
		{"graph": true},
	} {
		want := Conversation{ThreadID: "before", Graph: "g0", CreatedAt: "c0", Runs: 9}
		got := want
		wantErr := fromMap(m, &want)
		gotErr := conversationFromMap(m, &got)
		if (wantErr == nil) != (gotErr == nil) || wantErr == nil && got != want {
			t.Errorf("%v: got %+v, %v; want %+v, %v", m, got, gotErr, want, wantErr)
		}
	}
}
