package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const echoGraph = `dsl_version: "graphctl/v1"
name: "echo"
state: messages: {type: "messages"}
start: "answer"
nodes: answer: {type: "reply", config: text: "hi", next: "END"}
`

// TestServeCORSOrigins starts `graphctl serve` with API keys, --cors-origin
// and $GRAPHCTL_CORS_ORIGINS, and sends browser preflights.
func TestServeCORSOrigins(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "echo.cue"), []byte(echoGraph), 0o644)
	t.Setenv(apiKeysEnv, "k1")
	t.Setenv(corsOriginsEnv, "https://env.example, https://other.example")
	url, stop := startServe(t, []string{"serve", "--graphs", dir, "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--cors-origin", "https://app.example", "--cors-origin", "http://localhost:*", "--log-level", "error"})
	defer stop()
	for origin, want := range map[string]int{
		"https://app.example":   204,
		"https://env.example":   204,
		"http://localhost:3000": 204,
		"https://evil.example":  403,
	} {
		req, _ := http.NewRequest("OPTIONS", url+"/threads/search", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("preflight from %s: %d, want %d", origin, resp.StatusCode, want)
		}
		if want == 204 && resp.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("preflight from %s: Access-Control-Allow-Origin %q", origin, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
}

func TestServeRefusesABadCORSOrigin(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "echo.cue"), []byte(echoGraph), 0o644)
	_, errOut, code := run(t, "serve", "--graphs", dir, "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--cors-origin", "localhost:3000")
	if code != 2 || !strings.Contains(errOut, `"localhost:3000"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
