package studio

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler()
	tests := []struct {
		method, path string
		status       int
		header, want string
	}{
		{"GET", "/studio", http.StatusMovedPermanently, "Location", "/studio/"},
		{"GET", "/studio/", http.StatusOK, "Content-Type", "text/html; charset=utf-8"},
		{"HEAD", "/studio/graph.js", http.StatusOK, "Content-Type", "text/javascript; charset=utf-8"},
		{"GET", "/studio/style.css", http.StatusOK, "Content-Security-Policy", "default-src 'self'"},
		{"POST", "/studio/", http.StatusMethodNotAllowed, "Allow", "GET, HEAD"},
		{"GET", "/studio/../studio.go", http.StatusNotFound, "", ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || !strings.Contains(rec.Header().Get(tt.header), tt.want) {
			t.Errorf("%s %s = %d %s=%q, want %d %q", tt.method, tt.path, rec.Code, tt.header, rec.Header().Get(tt.header), tt.status, tt.want)
		}
		if tt.method == "HEAD" && rec.Body.Len() != 0 {
			t.Errorf("HEAD %s sent a body", tt.path)
		}
	}
}

// TestAssetsStaySmall keeps the page small: no bundled libraries.
func TestAssetsStaySmall(t *testing.T) {
	total := 0
	for name, n := range Assets() {
		if !strings.HasSuffix(name, ".js") && !strings.HasSuffix(name, ".css") && !strings.HasSuffix(name, ".html") {
			t.Errorf("unexpected asset %s", name)
		}
		total += n
	}
	if total == 0 || total > 150<<10 {
		t.Errorf("the Studio's files total %d bytes, want some and at most 150 KiB", total)
	}
}
