package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
)

// retryGraph runs the input's contracts on the "test" server with the given
// defaults.call_retry.
func retryGraph(t *testing.T, server map[string]any, callRetry string) *compile.Graph {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"test": server})
	src := fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "tools"
defaults: {mcp_servers: %s, call_retry: %s}
state: contracts: {type: "contracts"}
start: "tools"
nodes: tools: {type: "mcp_tool", next: "END"}
`, raw, callRetry)
	g, diags := runtime.LoadSource("tools.cue", []byte(src))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	return g
}

// rateLimited serves the MCP test server over streamable HTTP, answering
// the first n tools/call requests with 429 and Retry-After.
func rateLimited(t *testing.T, n int) (url string, calls func() []int) {
	s := mcptest.NewServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var mu sync.Mutex
	var statuses []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if strings.Contains(string(body), `"tools/call"`) {
			mu.Lock()
			limited := n > 0
			if limited {
				n--
				statuses = append(statuses, http.StatusTooManyRequests)
			} else {
				statuses = append(statuses, http.StatusOK)
			}
			mu.Unlock()
			if limited {
				w.Header().Set("Retry-After", "0.01")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), statuses...)
	}
}

// TestToolCallRetries: a tool call answered 429 by an HTTP MCP server is
// retried after the Retry-After the server asked for, and one whose stdio
// server crashed is retried on a restarted server; each retry is an event.
func TestToolCallRetries(t *testing.T) {
	t.Run("429 over streamable HTTP", func(t *testing.T) {
		url, calls := rateLimited(t, 2)
		eng := engine.New(retryGraph(t, mcptest.HTTPServer(url), `{initial_interval: "1ms"}`), memory.New(), engine.Options{})
		defer eng.Close()
		input := map[string]any{"contracts": []any{contract("e", "tool_call", "PENDING", "echo", map[string]any{"text": "hi"})}}
		rec := &recorder{}
		res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: input}, rec.sink)
		if err != nil {
			t.Fatal(err)
		}
		if c := byID(t, res.State)["e"]; c["status"] != "COMPLETED" {
			t.Errorf("contract = %v, want COMPLETED after the retries", c)
		}
		if got := calls(); fmt.Sprint(got) != "[429 429 200]" {
			t.Errorf("tools/call answers = %v, want [429 429 200]", got)
		}
		retries := rec.ofType("retry")
		if len(retries) != 2 {
			t.Fatalf("retry events = %v, want 2", retries)
		}
		for i, ev := range retries {
			p := ev.Payload
			if p["call"] != "tool" || p["node"] != "tools" || p["status"] != 429 || p["wait_ms"] != int64(10) || p["attempt"] != i+1 {
				t.Errorf("retry event %d = %v, want a tool call retried after the 10ms asked for", i, p)
			}
		}
	})
	t.Run("stdio server crashed mid-call", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "crashed")
		eng := engine.New(retryGraph(t, mcptest.StdioServer(), `{initial_interval: "1ms"}`), memory.New(), engine.Options{})
		defer eng.Close()
		input := map[string]any{"contracts": []any{contract("c", "tool_call", "PENDING", "crash_once", map[string]any{"marker": marker})}}
		rec := &recorder{}
		res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: input}, rec.sink)
		if err != nil {
			t.Fatal(err)
		}
		c := byID(t, res.State)["c"]
		if c["status"] != "COMPLETED" || fmt.Sprint(c["result"].(map[string]any)["text"]) != "recovered" {
			t.Errorf("contract = %v, want the restarted server's answer", c)
		}
		if retries := rec.ofType("retry"); len(retries) != 1 || retries[0].Payload["call"] != "tool" {
			t.Errorf("retry events = %v, want one tool call retry", retries)
		}
	})
	t.Run("retries off", func(t *testing.T) {
		url, calls := rateLimited(t, 1)
		eng := engine.New(retryGraph(t, mcptest.HTTPServer(url), `{max_attempts: 1}`), memory.New(), engine.Options{})
		defer eng.Close()
		input := map[string]any{"contracts": []any{contract("e", "tool_call", "PENDING", "echo", map[string]any{"text": "hi"})}}
		res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: input}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := byID(t, res.State)["e"]; c["status"] != "FAILED" || len(calls()) != 1 {
			t.Errorf("contract = %v after %v, want FAILED after one call", c, calls())
		}
	})
}
