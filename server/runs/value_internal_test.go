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
		StartCheckpoint: "c1", StartKnown: true, Error: "boom", Stateless: true, CancelAction: Rollback, StartAt: at.Add(time.Minute)}
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

// A run's metadata frame is what json.Marshal writes for it, with no
// more than its own buffer allocated.
func TestMetadataFrame(t *testing.T) {
	for _, ids := range [][2]string{{"r1", "t1"}, {"", ""}, {"<run>&\"", "tg:42 \u2028 caf\u00e9 \xff"}} {
		want, _ := json.Marshal(map[string]any{"run_id": ids[0], "thread_id": ids[1], "attempt": 1})
		if got := metadataFrame(ids[0], ids[1]); string(got) != string(want) {
			t.Errorf("metadata frame %s, want %s", got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { metadataFrame("run-0001", "thread-0001") }); n > 1 {
		t.Errorf("%v allocations per metadata frame, want 1", n)
	}
}
