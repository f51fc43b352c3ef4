package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node/lifecycletest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// lifecycleGraph is an mcp_tool node followed by a lifecycle probe whose
// Prepare fails when failPrepare is set.
const lifecycleGraph = `dsl_version: "graphctl/v1"
name: "tools"
defaults: mcp_servers: %s
state: contracts: {type: "contracts"}
start: "tools"
nodes: {
	tools: {type: "mcp_tool", config: server: "test", next: "probe"}
	probe: {type: %q, config: {probe: %q, fail_prepare: %v}, next: "END"}
}
`

func sessions(s *sdk.Server) int {
	n := 0
	for range s.Sessions() {
		n++
	}
	return n
}

// sessionCounter serves an MCP server over streamable HTTP and remembers
// every session id the server handed out, so that a test can tell a session
// was opened even after it has been closed again.
type sessionCounter struct {
	mu   sync.Mutex
	seen map[string]bool
	next http.Handler
}

func (c *sessionCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.next.ServeHTTP(&sessionRecorder{ResponseWriter: w, counter: c}, r)
}

func (c *sessionCounter) record(id string) {
	c.mu.Lock()
	c.seen[id] = true
	c.mu.Unlock()
}

// sessionRecorder notes the session id of a response as its header is sent,
// before the client can read it.
type sessionRecorder struct {
	http.ResponseWriter
	counter *sessionCounter
	noted   bool
}

func (s *sessionRecorder) note() {
	if !s.noted {
		s.noted = true
		if id := s.Header().Get("Mcp-Session-Id"); id != "" {
			s.counter.record(id)
		}
	}
}

func (s *sessionRecorder) WriteHeader(code int) {
	s.note()
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionRecorder) Write(p []byte) (int, error) {
	s.note()
	return s.ResponseWriter.Write(p)
}

func (s *sessionRecorder) Flush() {
	s.note()
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *sessionCounter) opened() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// Preparing an mcp_tool node opens a session with its server; closing the
// engine closes it, after a normal end as after a later node's failed Prepare.
func TestEngineCloseEndsMCPSessions(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failPrepare bool
	}{
		{name: "normal end"},
		{name: "failed prepare", failPrepare: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := mcptest.NewServer()
			counter := &sessionCounter{seen: map[string]bool{}, next: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)}
			httpServer := httptest.NewServer(counter)
			t.Cleanup(httpServer.Close)
			raw, err := json.Marshal(map[string]any{"test": mcptest.HTTPServer(httpServer.URL)})
			if err != nil {
				t.Fatal(err)
			}
			src := fmt.Appendf(nil, lifecycleGraph, raw, lifecycletest.TypeName, t.TempDir(), tc.failPrepare)
			g, diags := runtime.LoadSource("tools.cue", src)
			if diags.HasErrors() || g == nil {
				t.Fatalf("graph does not compile:\n%v", diags)
			}
			eng := engine.New(g, memory.New(), engine.Options{})
			// Registered after the HTTP server's cleanup, so it runs first: a
			// failed assertion must not leave a session holding the server open.
			t.Cleanup(func() { _ = eng.Close() })
			if err := eng.Preflight(context.Background()); (err != nil) != tc.failPrepare {
				t.Fatalf("preflight: %v", err)
			}
			if n := counter.opened(); n != 1 {
				t.Fatalf("%d sessions opened by Preflight, want 1", n)
			}
			if err := eng.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			// The server drops the session when the client's DELETE or
			// disconnect reaches it; wait for it with a generous deadline.
			for deadline := time.Now().Add(30 * time.Second); sessions(server) != 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d sessions still open after Engine.Close", sessions(server))
				}
			}
		})
	}
}
