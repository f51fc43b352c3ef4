package sse

import (
	"bytes"
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestWriteParseRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		frames []Frame
	}{
		{"one named", []Frame{{ID: "1", Event: "values", Data: []byte(`{"a":1}`)}}},
		{"no id", []Frame{{Event: "end", Data: []byte("null")}}},
		{"multi-line data", []Frame{{ID: "7", Event: "custom", Data: []byte("line1\nline2")}}},
		{"several", []Frame{{ID: "1", Event: "metadata", Data: []byte(`{"run_id":"r"}`)}, {ID: "2", Event: "updates", Data: []byte(`{}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf)
			for _, f := range tt.frames {
				if err := w.Write(f); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Comment("keep-alive"); err != nil {
				t.Fatal(err)
			}
			var got []Frame
			if err := Parse(&buf, func(f Frame) error { got = append(got, f); return nil }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.frames) {
				t.Fatalf("got %+v, want %+v", got, tt.frames)
			}
		})
	}
}

func TestPrepareHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	w := Prepare(rec)
	if err := w.WriteJSON("3", "values", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	want := "id: 3\nevent: values\ndata: {\"n\":1}\n\n"
	if rec.Body.String() != want {
		t.Fatalf("body %q, want %q", rec.Body.String(), want)
	}
}
