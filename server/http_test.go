package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCORS sends real preflights and requests with an Origin header.
func TestCORS(t *testing.T) {
	type check struct {
		name, method, origin string
		keys, origins        []string
		wantStatus           int
		wantAllow            string // Access-Control-Allow-Origin, "" for none
	}
	tests := []check{
		{name: "local origin allowed by default without keys", method: "OPTIONS", origin: "http://localhost:3000", wantStatus: 204, wantAllow: "http://localhost:3000"},
		{name: "127.0.0.1 any port by default", method: "OPTIONS", origin: "http://127.0.0.1:5173", wantStatus: 204, wantAllow: "http://127.0.0.1:5173"},
		{name: "foreign origin refused by default", method: "OPTIONS", origin: "https://evil.example", wantStatus: 403},
		{name: "preflight answered before auth", method: "OPTIONS", origin: "https://app.example.com", keys: []string{"k"}, origins: []string{"https://app.example.com"}, wantStatus: 204, wantAllow: "https://app.example.com"},
		{name: "with keys no default origins", method: "OPTIONS", origin: "http://localhost:3000", keys: []string{"k"}, wantStatus: 403},
		{name: "pattern origin", method: "OPTIONS", origin: "https://ui.example.com", origins: []string{"https://*.example.com"}, wantStatus: 204, wantAllow: "https://ui.example.com"},
		{name: "any origin", method: "OPTIONS", origin: "https://x.test", origins: []string{"*"}, wantStatus: 204, wantAllow: "*"},
		{name: "simple request gets the headers", method: "GET", origin: "http://localhost:3000", wantStatus: 200, wantAllow: "http://localhost:3000"},
		{name: "simple request from a foreign origin gets none", method: "GET", origin: "https://evil.example", wantStatus: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(c *Config) { c.APIKeys = tt.keys; c.CORSOrigins = tt.origins })
			req, _ := http.NewRequest(tt.method, f.http.URL+"/info", nil)
			req.Header.Set("Origin", tt.origin)
			if tt.method == "OPTIONS" {
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "content-type, x-api-key")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.wantAllow {
				t.Fatalf("Access-Control-Allow-Origin %q, want %q", got, tt.wantAllow)
			}
			if tt.wantAllow == "" {
				return
			}
			if tt.method == "OPTIONS" {
				if h := resp.Header.Get("Access-Control-Allow-Headers"); !strings.Contains(h, "x-api-key") {
					t.Errorf("Access-Control-Allow-Headers %q lacks the requested x-api-key", h)
				}
				if m := resp.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "PATCH") {
					t.Errorf("Access-Control-Allow-Methods %q lacks PATCH", m)
				}
			} else if e := resp.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(e, "Content-Location") || !strings.Contains(e, "X-Pagination-Next") {
				t.Errorf("Access-Control-Expose-Headers %q", e)
			}
		})
	}
	if _, err := newCORSPolicy([]string{"localhost:3000"}); err == nil || !strings.Contains(err.Error(), "http://") {
		t.Fatalf("an origin without a scheme: %v", err)
	}
}

func TestAuthSchemeAndFailureLimit(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.APIKeys = []string{"secret"}; c.AuthFailures = 3 })
	req := func(auth string) *http.Response {
		r, _ := http.NewRequest("GET", f.http.URL+"/info", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, auth := range []string{"Bearer secret", "bearer secret", "BEARER  secret"} {
		if got := req(auth).StatusCode; got != 200 {
			t.Errorf("%q: %d, want 200", auth, got)
		}
	}
	for i := 0; i < 3; i++ {
		if got := req("Bearer wrong").StatusCode; got != 401 {
			t.Fatalf("wrong key %d: %d, want 401", i+1, got)
		}
	}
	resp := req("Bearer wrong")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("fourth wrong key: %d (Retry-After %q), want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := req("Bearer secret").StatusCode; got != 429 {
		t.Fatalf("a locked-out address is refused before its key is checked: %d", got)
	}
}

// TestSlowBodyIsCutOff trickles a request body over a raw connection.
func TestSlowBodyIsCutOff(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.BodyTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.http.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /threads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
	// Send a byte now and then, far below the minimum rate, until the
	// server answers.
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			done <- nil
			return
		}
		done <- resp
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case resp := <-done:
			if resp == nil {
				t.Fatal("connection closed without a response")
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "too slowly") {
				t.Fatalf("status %d %s, want 408", resp.StatusCode, body)
			}
			return
		case <-tick.C:
			conn.Write([]byte(" "))
		case <-deadline:
			t.Fatal("the server kept reading a trickling body")
		}
	}
}

func TestErrorBodiesCarryDetail(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.do("GET", "/threads/nope", nil)
	if code != 404 || !strings.Contains(fmt.Sprint(field(body, "detail")), "not found") || field(body, "error", "code") != "not_found" {
		t.Fatalf("%d %v", code, body)
	}
}
