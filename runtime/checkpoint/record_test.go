package checkpoint

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// step is a checkpoint as the engine writes it for one step of a chat turn.
func step() Checkpoint {
	id := NewID()
	t, _ := uuidTime(id)
	return Checkpoint{
		ThreadID: "thread-1", ID: id, ParentID: NewID(), Step: 7,
		GraphName: "bench_chat", GraphHash: "9cf570c03cb36503",
		Versions: map[string]int64{"messages": 3, "turns": 3},
		Source:   "loop", Writers: []string{"count"},
		Metadata: map[string]any{"run_id": "run-27ecdfd1f64ad22e", "tasks": []map[string]any{
			{"task": "count", "node": "count", "duration_ms": float64(2) / 1000, "writes": []string{"turns"}},
		}},
		CreatedAt: t.Add(1234 * time.Nanosecond),
	}
}

// viaJSON is what a checkpoint reads back as from a JSON record.
func viaJSON(t *testing.T, cp Checkpoint) Checkpoint {
	t.Helper()
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	var out Checkpoint
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRecordRoundTrip(t *testing.T) {
	withItem := step()
	withItem.Next = []Task{{ID: "search#0001", Node: "search", Item: map[string]any{"q": "x"}, HasItem: true}, {ID: "b", Node: "b"}, {ID: "c#2", Node: "c"}}
	withItem.Interrupts = []Interrupt{{ID: "ask-1", Node: "ask", TaskID: "ask", Field: "answer", Payload: map[string]any{"form": "f"}, When: "during"}}
	input := step()
	input.Source, input.Step, input.Writers = "input", -1, nil
	input.Metadata = map[string]any{"run_id": "run-27ecdfd1f64ad22e"}
	input.Input = json.RawMessage(`{"messages":[{"content":"hi","id":"b393878b-0d66-4869-802c-292ab89f5822","role":"user"}]}`)
	input.VersionFloor = 12
	odd := step()
	odd.ID, odd.ParentID = "00000003-0000000000000002", "parent one"
	odd.GraphHash = "sha256:ABC"
	odd.Source = "something new"
	odd.Metadata = map[string]any{"run_id": 42.0, "user": "u1", "joins": map[string]any{"j": []any{"a"}},
		"tasks": []any{map[string]any{"task": "a", "node": "a", "duration_ms": 0.0005, "writes": []any{}}}}
	odd.CreatedAt = time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	extra := step()
	extra.Metadata["tasks"] = []map[string]any{{"task": "a#1", "node": "a", "duration_ms": 1.5, "writes": []string{}, "attempts": 2}}
	mapTask := step()
	mapTask.Metadata["tasks"] = []map[string]any{{"task": "work#0003", "node": "work", "duration_ms": 0.25, "writes": []string{"results", "x"}}}
	waiting := step()
	waiting.Next = []Task{
		{ID: "review", Node: "review", Namespace: "review:5f0c2b9e-8d3a-5c1e-9a4b-2e7d6c1f0a93", Resume: map[string]any{"ask-1a2b3c": "approve"}},
		{ID: "research#0001", Node: "research", Namespace: "research:research#0001"},
	}
	empty := Checkpoint{ThreadID: "t", ID: "x"}
	emptyMeta := step()
	emptyMeta.Metadata = map[string]any{}
	emptyMeta.Versions = map[string]int64{}
	zeroTime := step()
	zeroTime.CreatedAt = time.Time{}
	tests := map[string]Checkpoint{
		"engine step": step(), "map tasks and interrupts": withItem, "input checkpoint": input,
		"unusual values": odd, "trace entry with extra keys": extra, "map task trace": mapTask,
		"tasks waiting inside subgraphs": waiting,
		"empty":                          empty, "empty metadata and versions": emptyMeta, "zero time": zeroTime,
	}
	for name, cp := range tests {
		t.Run(name, func(t *testing.T) {
			rec, err := EncodeRecord(cp)
			if err != nil {
				t.Fatal(err)
			}
			var got Checkpoint
			if err := DecodeRecord(cp.ThreadID, cp.ID, rec, &got); err != nil {
				t.Fatalf("decode: %v (record %x)", err, rec)
			}
			want := viaJSON(t, cp)
			if !got.CreatedAt.Equal(want.CreatedAt) {
				t.Errorf("CreatedAt = %v, want %v", got.CreatedAt, want.CreatedAt)
			}
			got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("round trip:\n got %s\nwant %s", g, w)
			}
		})
	}
}

// A step's record, without the values it points to, is under 100 bytes: a
// fifth of its JSON.
func TestRecordSize(t *testing.T) {
	cp := step()
	rec, err := EncodeRecord(cp)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(cp)
	t.Logf("record %d bytes, JSON %d bytes", len(rec), len(js))
	if len(rec) > 100 {
		t.Errorf("a step's record is %d bytes, want at most 100", len(rec))
	}
}

// Records written as JSON (before the compact form) still read.
func TestRecordReadsJSON(t *testing.T) {
	cp := step()
	js, _ := json.Marshal(cp)
	var got Checkpoint
	if err := DecodeRecord("ignored", "ignored", js, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != cp.ID || got.ThreadID != cp.ThreadID || got.Versions["turns"] != 3 {
		t.Errorf("JSON record read as %+v", got)
	}
}

func TestRecordRejectsCorruptData(t *testing.T) {
	rec, _ := EncodeRecord(step())
	for _, bad := range [][]byte{nil, {0x09}, rec[:len(rec)/2], append(append([]byte{}, rec...), 0)} {
		var cp Checkpoint
		if err := DecodeRecord("t", "x", bad, &cp); err == nil {
			t.Errorf("record %x decoded without error", bad)
		} else if !strings.Contains(err.Error(), "record") {
			t.Errorf("error %q does not say what failed", err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	rec, _ := EncodeRecord(step())
	f.Add(rec)
	f.Add([]byte{recordV1, 0xff, 0xff, 0x03})
	f.Fuzz(func(t *testing.T, data []byte) {
		var cp Checkpoint
		if DecodeRecord("t", "1f1e730d-d1e5-65b7-84da-6f0caf070627", data, &cp) != nil {
			return
		}
		// What decodes encodes and decodes to the same.
		again, err := EncodeRecord(cp)
		if err != nil {
			return // e.g. metadata JSON cannot hold
		}
		var cp2 Checkpoint
		if err := DecodeRecord("t", cp.ID, again, &cp2); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
	})
}

// Sources keep the strings and the record bytes they were stored as: stored
// checkpoints read the same, and the metadata "source" shown to LangGraph
// clients is unchanged.
func TestSourceStoredForms(t *testing.T) {
	tests := []struct {
		source Source
		stored string
		index  int
	}{
		{SourceInput, "input", 1},
		{SourceLoop, "loop", 2},
		{SourceUpdate, "update", 3},
		{SourceResume, "resume", 4},
		{SourceFork, "fork", 5},
		{SourceInterrupt, "interrupt", 6},
	}
	for _, tt := range tests {
		t.Run(tt.stored, func(t *testing.T) {
			if string(tt.source) != tt.stored {
				t.Errorf("source %q, want %q", tt.source, tt.stored)
			}
			if tt.index >= len(sources) || sources[tt.index] != tt.source {
				t.Errorf("source %q is not stored as byte %d", tt.source, tt.index)
			}
			cp := step()
			cp.Source = tt.source
			js, err := json.Marshal(cp)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(js), `"source":"`+tt.stored+`"`) {
				t.Errorf("JSON %s does not hold source %q", js, tt.stored)
			}
			rec, err := EncodeRecord(cp)
			if err != nil {
				t.Fatal(err)
			}
			var got Checkpoint
			if err := DecodeRecord(cp.ThreadID, cp.ID, rec, &got); err != nil {
				t.Fatal(err)
			}
			if got.Source != tt.source {
				t.Errorf("record read back source %q, want %q", got.Source, tt.source)
			}
		})
	}
}

// TestParseUUID checks that only the canonical lowercase form of a UUID is
// parsed (any other reads back as a different string) and that its bytes
// are the hex digits'.
func TestParseUUID(t *testing.T) {
	const canonical = "1f0c0000-0000-6000-8000-0123456789af"
	want := [16]byte{0x1f, 0x0c, 0, 0, 0, 0, 0x60, 0, 0x80, 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xaf}
	if u, ok := parseUUID(canonical); !ok || u != want {
		t.Errorf("parseUUID(%q) = %x, %v; want %x, true", canonical, u, ok, want)
	}
	for _, bad := range []string{
		strings.ToUpper(canonical),
		"1f0c0000-0000-6000-8000-0123456789ag",
		"1f0c0000-0000-6000-8000-0123456789a",
		"1f0c0000-0000-6000-8000_0123456789af",
		"1f0c00000000-6000-8000-0123456789af-",
		"1f0c0000-0000-6000-8000-0123456789a\xff",
		"g00c0000-0000-6000-8000-0123456789af",
	} {
		if _, ok := parseUUID(bad); ok {
			t.Errorf("parseUUID(%q) accepted a non-canonical UUID", bad)
		}
	}
}
