package llmtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestFailuresThenReply(t *testing.T) {
	s := NewServer(t, WithFailures(1, http.StatusTooManyRequests), WithReplies(Text("ok")))
	req := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "look"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}},
	}}}}
	tests := []struct {
		status     int
		retryAfter string
	}{
		{http.StatusTooManyRequests, "1"},
		{http.StatusOK, ""},
		{http.StatusBadRequest, ""}, // no reply left
	}
	for i, tt := range tests {
		resp := post(t, s.URL()+"/chat/completions", req)
		if resp.StatusCode != tt.status || resp.Header.Get("Retry-After") != tt.retryAfter {
			t.Errorf("call %d: status %d Retry-After %q, want %d %q", i+1, resp.StatusCode, resp.Header.Get("Retry-After"), tt.status, tt.retryAfter)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[1].Messages[0].Content != "look" || len(reqs[1].Messages[0].Images) != 1 {
		t.Errorf("recorded requests = %+v", reqs)
	}
}
