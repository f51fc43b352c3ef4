package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// A run's answer counts only when it is a 200 JSON object that is not the
// error of a failed run, read in full whether the server sends it with a
// length, in chunks, or up to the end of the connection; the same through
// the keep-alive connection of a load client and through net/http.
func TestRunAnswers(t *testing.T) {
	for _, tt := range []struct {
		answer  string
		status  int
		framing string // "length", "chunked", "close"
		ok      bool
	}{
		{`{"messages":[]}`, 200, "length", true},
		{" \n{}", 200, "length", true},
		{`{"messages":[{"content":"x"}],"n":1}`, 200, "chunked", true},
		{`{"messages":[]}`, 200, "close", true},
		{`[1]`, 200, "length", false},
		{`{"a":`, 200, "length", false},
		{``, 200, "length", false},
		{`{"error":"busy"}`, 409, "length", false},
		{`{"__error__":{"error":"RunError","message":"boom"}}`, 200, "length", false},
		{`{ "__error__":{"error":"RunError","message":"boom"}}`, 200, "chunked", false},
	} {
		var posted bytes.Buffer
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			posted.Reset()
			posted.ReadFrom(r.Body)
			switch tt.framing {
			case "length":
				w.Header().Set("Content-Length", strconv.Itoa(len(tt.answer)))
			case "close":
				w.Header().Set("Connection", "close")
			}
			w.WriteHeader(tt.status)
			half := len(tt.answer) / 2
			w.Write([]byte(tt.answer[:half]))
			if tt.framing == "chunked" {
				w.(http.Flusher).Flush()
			}
			w.Write([]byte(tt.answer[half:]))
		}))
		c := NewClient(srv.URL, "k", 1)
		rc := newRunClient(c)
		if rc.conn == nil {
			t.Fatalf("%s: no connection of its own", srv.URL)
		}
		for round := 0; round < 2; round++ { // the second on the kept connection
			err := rc.run(context.Background(), "/runs/wait", []byte(`{"input":{}}`))
			if (err == nil) != tt.ok {
				t.Errorf("answer %d %q (%s), round %d: error %v, want ok=%v", tt.status, tt.answer, tt.framing, round, err, tt.ok)
			}
			if posted.String() != `{"input":{}}` {
				t.Errorf("the server read %q", posted.String())
			}
			if tt.status == 200 && rc.buf.String() != tt.answer {
				t.Errorf("answer %q read as %q", tt.answer, rc.buf.String())
			}
		}
		var buf bytes.Buffer
		err := c.callObject(context.Background(), "/runs/wait", []byte(`{"input":{}}`), &buf)
		if (err == nil) != tt.ok {
			t.Errorf("answer %d %q through net/http: error %v, want ok=%v", tt.status, tt.answer, err, tt.ok)
		}
		rc.close()
		c.Close()
		srv.Close()
	}
}

// A load client creates threads over its own connection.
func TestRunClientCreatesThreads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/threads" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		w.Write([]byte(`{"thread_id":"t1","metadata":{}}`))
	}))
	defer srv.Close()
	c := NewClient(srv.URL, "k", 1)
	defer c.Close()
	rc := newRunClient(c)
	defer rc.close()
	id, err := rc.createThread(context.Background())
	if err != nil || id != "t1" {
		t.Fatalf("createThread = %q, %v", id, err)
	}
}

// BenchmarkRunClient reports what a load client costs per run against a
// server answering final values of the size of a 10-turn slot-filling
// thread: over its own connection, and through net/http's client as the
// clients did before. The server's share is the same in both.
func BenchmarkRunClient(b *testing.B) {
	answer := []byte(`{"messages":[` + strings.Repeat(`{"content":"Got it: model WDT780SAEM1. I noted the symptoms: leaking. What would you like to do?","id":"86b86418-1f12-43e7-86bd-c7b63c23feac","role":"assistant","type":"ai"},`, 30) + `{}]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		w.Write(answer)
	}))
	defer srv.Close()
	body := []byte(`{"assistant_id":"slot_filling","input":{"messages":[{"role":"user","content":"My dishwasher WDT780SAEM1 is leaking"}]}}`)
	c := NewClient(srv.URL, "", 1)
	defer c.Close()
	b.Run("own-connection", func(b *testing.B) {
		rc := newRunClient(c)
		defer rc.close()
		b.ReportAllocs()
		for b.Loop() {
			if err := rc.run(context.Background(), "/threads/t/runs/wait", body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("net-http", func(b *testing.B) {
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			if err := c.callObject(context.Background(), "/threads/t/runs/wait", body, &buf); err != nil {
				b.Fatal(err)
			}
			if !json.Valid(buf.Bytes()) {
				b.Fatal("not JSON")
			}
		}
	})
}
