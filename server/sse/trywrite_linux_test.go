package sse

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// TryWrite never waits on a client that does not read: it stops writing
// once the connection's send buffer fills up, and what it wrote reaches the
// client whole and in order once the client reads.
func TestTryWriteStopsForAClientThatDoesNotRead(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 8<<10)
	written := make(chan int, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := PrepareRequest(w, r)
		n := 0
		for {
			ok, err := sw.TryWrite(Frame{ID: strconv.Itoa(n + 1), Event: "messages", Data: data})
			if err != nil {
				t.Errorf("frame %d: %v", n+1, err)
				break
			}
			if !ok {
				break
			}
			n++
		}
		written <- n
		// The client reads now: a plain write may wait for it.
		sw.Write(Frame{ID: strconv.Itoa(n + 1), Event: "end", Data: []byte("null")})
	}))
	srv.Config.ConnContext = ConnContext
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n int
	select {
	case n = <-written:
	case <-time.After(time.Minute):
		t.Fatal("TryWrite is still writing to a client that reads nothing: it waits on it")
	}
	t.Logf("%d frames of %d KiB written before the send buffer was half full", n, len(data)>>10)
	if n == 0 {
		t.Fatal("TryWrite wrote no frame to an empty connection")
	}
	var got []Frame
	if err := Parse(resp.Body, func(f Frame) error { got = append(got, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != n+1 {
		t.Fatalf("client read %d frames, want the %d TryWrite wrote and the end", len(got), n)
	}
	for i, f := range got[:n] {
		if f.ID != strconv.Itoa(i+1) || f.Event != "messages" || !bytes.Equal(f.Data, data) {
			t.Fatalf("frame %d: id %q event %q, %d bytes of data; want id %d, messages, %d bytes", i, f.ID, f.Event, len(f.Data), i+1, len(data))
		}
	}
}
