package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func get(t *testing.T, url, key string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestStudioPageOutsideAuth checks that the Studio's files are served
// without a key (the page asks for one) while the API it calls is not.
func TestStudioPageOutsideAuth(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.APIKeys = []string{"k1"} })
	tests := []struct {
		path, key string
		status    int
		ctype     string
		contains  string
	}{
		{"/studio/", "", http.StatusOK, "text/html", `<script type="module" src="app.js">`},
		{"/studio/app.js", "", http.StatusOK, "text/javascript", "import * as api from './api.js'"},
		{"/studio/style.css", "", http.StatusOK, "text/css", "svg .node.running"},
		{"/studio/nope.js", "", http.StatusNotFound, "", "no such Studio file"},
		{"/graphs", "", http.StatusUnauthorized, "", "API key"},
		{"/assistants/chatbot", "", http.StatusUnauthorized, "", "API key"},
		{"/graphs", "k1", http.StatusOK, "application/json", `"graph_id":"chatbot"`},
	}
	for _, tt := range tests {
		status, h, body := get(t, f.http.URL+tt.path, tt.key)
		if status != tt.status || !strings.Contains(h.Get("Content-Type"), tt.ctype) || !strings.Contains(body, tt.contains) {
			t.Errorf("GET %s (key %q) = %d %s %.120q, want %d %s containing %q", tt.path, tt.key, status, h.Get("Content-Type"), body, tt.status, tt.ctype, tt.contains)
		}
	}
	// A page revalidated with its ETag is not sent again.
	_, h, _ := get(t, f.http.URL+"/studio/app.js", "")
	req, _ := http.NewRequest(http.MethodGet, f.http.URL+"/studio/app.js", nil)
	req.Header.Set("If-None-Match", h.Get("ETag"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h.Get("ETag") == "" || resp.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation with ETag %q = %d, want 304", h.Get("ETag"), resp.StatusCode)
	}
	// Without the Studio, its paths are API paths: they need the key.
	off := newFixture(t, func(c *Config) { c.APIKeys = []string{"k1"}; c.NoStudio = true })
	if status, _, _ := get(t, off.http.URL+"/studio/", ""); status != http.StatusUnauthorized {
		t.Errorf("NoStudio: GET /studio/ = %d, want 401", status)
	}
	if status, _, _ := get(t, off.http.URL+"/studio/", "k1"); status != http.StatusNotFound {
		t.Errorf("NoStudio: GET /studio/ with key = %d, want 404", status)
	}
}

// TestGraphsReportsRejectedReload checks GET /graphs after an invalid
// change to a served graph file: the diagnostics name file:line:col with
// the source line, and the last good version is still served.
func TestGraphsReportsRejectedReload(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/graphs/echo.cue")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "echo.cue")
	os.WriteFile(path, good, 0o644)
	f := newGraphFixture(t, dir, nil)
	broken := strings.Replace(string(good), `next: "END"`, `next: "ENDD"`, 1)
	if broken == string(good) {
		t.Fatal("fixture graph changed: cannot break it")
	}
	os.WriteFile(path, []byte(broken), 0o644)
	if _, rejected := f.srv.reg.Reload(); len(rejected) == 0 {
		t.Fatal("the broken file was not rejected")
	}
	status, info := f.do(http.MethodGet, "/graphs", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /graphs = %d %v", status, info)
	}
	diags, _ := field(info, "diagnostics").([]any)
	if len(diags) == 0 {
		t.Fatalf("no diagnostics: %v", info)
	}
	d := diags[0].(map[string]any)
	line := strings.Split(broken, "\n")[int(d["line"].(float64))-1]
	if d["file"] != path || d["code"] == "" || d["col"].(float64) < 1 || d["source"] != line || !strings.Contains(line, "ENDD") {
		t.Errorf("diagnostic %v, want %s with a code, a column and the source line %q", d, path, line)
	}
	graphs, _ := field(info, "graphs").([]any)
	if len(graphs) != 1 || field(graphs[0], "graph_id") != "echo" {
		t.Errorf("graphs %v, want the last good echo still served", graphs)
	}
	// Fixing the file clears the diagnostics.
	os.WriteFile(path, []byte(strings.Replace(string(good), "You said", "You wrote", 1)), 0o644)
	f.srv.reg.Reload()
	if _, info := f.do(http.MethodGet, "/graphs", nil); len(field(info, "diagnostics").([]any)) != 0 {
		t.Errorf("diagnostics after the fix: %v", info)
	}
}
