package runs

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The value a record is stored as is its JSON encoding, and reads back as
// the record.
func TestRecordValueIsItsJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	full := Record{RunID: "r1", ThreadID: "t1", AssistantID: "a", Status: StatusError, CreatedAt: at, UpdatedAt: at.Add(time.Second),
		Metadata: map[string]any{"k": "v"}, MultitaskStrategy: Enqueue, Kwargs: map[string]any{"input": map[string]any{"n": 1.0}},
		StartCheckpoint: "c1", StartKnown: true, Error: "boom", Stateless: true, CancelAction: Rollback}
	for _, tt := range []struct {
		name string
		rec  Record
	}{
		{"every field", full},
		{"empty", Record{}},
		{"running", Record{RunID: "r2", ThreadID: "t2", Status: StatusRunning, CreatedAt: at, UpdatedAt: at, Metadata: map[string]any{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, _ := json.Marshal(tt.rec)
			got, err := json.Marshal(tt.rec.value())
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			json.Unmarshal(got, &g)
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("value encodes as\n%s\nthe record as\n%s", got, want)
			}
			back, err := fromMap(tt.rec.value())
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(back); string(b) != string(want) {
				t.Errorf("read back as\n%s\nwant\n%s", b, want)
			}
		})
	}
	if n := reflect.TypeOf(full).NumField(); len(full.value()) != n {
		t.Errorf("Record has %d fields, its value %d members: a field is missing from value", n, len(full.value()))
	}
}
