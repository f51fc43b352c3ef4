package sse

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TryWrite writes nothing where it cannot see the connection's send
// buffer: over a plain writer, and over a response whose server does not
// hand its connections to ConnContext.
func TestTryWriteWithoutConnection(t *testing.T) {
	var buf bytes.Buffer
	if ok, err := NewWriter(&buf).TryWrite(Frame{ID: "1", Event: "messages", Data: []byte("{}")}); ok || err != nil || buf.Len() != 0 {
		t.Fatalf("plain writer: TryWrite = %v, %v, wrote %q; want false, nil, nothing", ok, err, buf.String())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := PrepareRequest(w, r)
		if ok, err := sw.TryWrite(Frame{ID: "1", Event: "messages", Data: []byte("{}")}); ok || err != nil {
			t.Errorf("no ConnContext: TryWrite = %v, %v; want false, nil", ok, err)
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
