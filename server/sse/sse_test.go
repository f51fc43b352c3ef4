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

// Parse reads raw streams as the event-stream format has them: several
// data lines joined by line breaks (empty ones too), fields without a
// space after the colon, CRLF line ends, comments, and events without data.
func TestParseRawStreams(t *testing.T) {
	tests := []struct {
		name, stream string
		want         []Frame
	}{
		{"data lines joined", "id: 1\nevent: e\ndata: a\ndata: b\n\n", []Frame{{ID: "1", Event: "e", Data: []byte("a\nb")}}},
		{"empty first data line", "data:\ndata: x\n\n", []Frame{{Data: []byte("\nx")}}},
		{"no space after the colon", "event:e\ndata:{}\n\n", []Frame{{Event: "e", Data: []byte("{}")}}},
		{"CRLF", "event: e\r\ndata: 1\r\n\r\n", []Frame{{Event: "e", Data: []byte("1")}}},
		{"comments and blank lines", ": hi\n\n\ndata: 1\n: inside\n\n", []Frame{{Data: []byte("1")}}},
		{"no data", "event: end\n\n", []Frame{{Event: "end", Data: []byte{}}}},
		{"unknown field", "retry: 5\n\n", []Frame{{Data: []byte{}}}},
		{"unfinished last frame", "data: 1\n\ndata: 2\n", []Frame{{Data: []byte("1")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Frame
			if err := Parse(bytes.NewBufferString(tt.stream), func(f Frame) error { got = append(got, f); return nil }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkParse reads a stream of token frames as the load client does.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	frame := Frame{ID: "1234", Event: "messages", Data: bytes.Repeat([]byte("x"), 700)}
	for range 1000 {
		w.Write(frame)
	}
	stream := buf.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		Parse(bytes.NewReader(stream), func(Frame) error { n++; return nil })
		if n != 1000 {
			b.Fatalf("%d frames", n)
		}
	}
}

// A frame written with an id prefix is the frame with the prefixed id.
func TestWriteWithIDPrefix(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, f := range []Frame{{ID: "7", Event: "values", Data: []byte(`{"a":1}`)}, {Event: "end", Data: []byte("null")}} {
		if err := w.WriteWithIDPrefix("run-1:", f); err != nil {
			t.Fatal(err)
		}
	}
	want := "id: run-1:7\nevent: values\ndata: {\"a\":1}\n\nid: run-1:\nevent: end\ndata: null\n\n"
	if buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
}
