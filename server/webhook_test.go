package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/event"
)

func TestWebhookBypassesAPIKeysAndRunsGraphs(t *testing.T) {
	var f *fixture
	var texts []string
	hook := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Secret") != "s3cret" {
			http.Error(w, "bad secret", http.StatusForbidden)
			return
		}
		var body struct{ User, Text string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		input := map[string]any{"messages": []any{map[string]any{"role": "user", "content": body.Text}}}
		res, err := f.srv.RunOn(r.Context(), "echo", "hook:"+body.User, input, func(ev event.Event) {
			if ev.Type == event.Text {
				texts = append(texts, ev.Payload["content"].(string))
			}
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write([]byte(res.Status))
	})
	f = newFixture(t, func(c *Config) {
		c.APIKeys = []string{"key1"}
		c.Webhooks = []Webhook{{Path: "/webhooks/test", Handler: hook}}
	})
	post := func(path, secret, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, f.http.URL+path, strings.NewReader(body))
		req.Header.Set("X-Secret", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 512)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	if code, body := post("/webhooks/test", "s3cret", `{"user": "42", "text": "hello"}`); code != 200 || body != "completed" {
		t.Fatalf("webhook without an API key: %d %q", code, body)
	}
	if len(texts) != 1 || texts[0] != "You said: hello" {
		t.Fatalf("events from the run: %v", texts)
	}
	if code, _ := post("/webhooks/test", "wrong", `{}`); code != http.StatusForbidden {
		t.Fatalf("the webhook's own check: %d", code)
	}
	// The API itself still needs a key, and the thread the webhook made is there.
	if code, _ := post("/threads/hook:42/history", "", `{}`); code != http.StatusUnauthorized {
		t.Fatalf("API route without a key: %d", code)
	}
	snap, err := f.srv.cp.Latest(t.Context(), "hook:42")
	if err != nil || snap.GraphName != "echo" {
		t.Fatalf("thread of the webhook run: %+v %v", snap, err)
	}
}

func TestWebhookPathsAreChecked(t *testing.T) {
	ok := http.NotFoundHandler()
	tests := []struct {
		name  string
		hooks []Webhook
		want  string
	}{
		{"outside the prefix", []Webhook{{Path: "/threads", Handler: ok}}, "must be /webhooks/<name>"},
		{"empty name", []Webhook{{Path: "/webhooks/", Handler: ok}}, "must be /webhooks/<name>"},
		{"nested", []Webhook{{Path: "/webhooks/a/b", Handler: ok}}, "must be /webhooks/<name>"},
		{"no handler", []Webhook{{Path: "/webhooks/a"}}, "has no handler"},
		{"duplicate", []Webhook{{Path: "/webhooks/a", Handler: ok}, {Path: "/webhooks/a", Handler: ok}}, "two webhooks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkWebhooks(tt.hooks); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if err := checkWebhooks([]Webhook{{Path: "/webhooks/telegram", Handler: ok}}); err != nil {
		t.Fatal(err)
	}
}
