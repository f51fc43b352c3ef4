package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A run's answer counts only when it is a 2xx JSON object.
func TestCallObject(t *testing.T) {
	for _, tt := range []struct {
		answer string
		status int
		ok     bool
	}{
		{`{"messages":[]}`, 200, true},
		{" \n{}", 200, true},
		{`[1]`, 200, false},
		{`{"a":`, 200, false},
		{``, 200, false},
		{`{"error":"busy"}`, 409, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tt.status)
			w.Write([]byte(tt.answer))
		}))
		c := NewClient(srv.URL, "", 1)
		var buf bytes.Buffer
		err := c.callObject(context.Background(), "/runs/wait", json.RawMessage(`{}`), &buf)
		if (err == nil) != tt.ok {
			t.Errorf("answer %d %q: error %v, want ok=%v", tt.status, tt.answer, err, tt.ok)
		}
		c.Close()
		srv.Close()
	}
}
