package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
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
			raw, err := json.Marshal(map[string]any{"test": mcptest.HTTPServer(mcptest.ServeHTTP(t, server).URL)})
			if err != nil {
				t.Fatal(err)
			}
			src := fmt.Appendf(nil, lifecycleGraph, raw, lifecycletest.TypeName, t.TempDir(), tc.failPrepare)
			g, diags := runtime.LoadSource("tools.cue", src)
			if diags.HasErrors() || g == nil {
				t.Fatalf("graph does not compile:\n%v", diags)
			}
			eng := engine.New(g, memory.New(), engine.Options{})
			if err := eng.Preflight(context.Background()); (err != nil) != tc.failPrepare {
				t.Fatalf("preflight: %v", err)
			}
			if n := sessions(server); n != 1 {
				t.Fatalf("%d sessions after Preflight, want 1", n)
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
