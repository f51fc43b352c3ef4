package e2e

import (
	"net/http"
	"testing"
)

// TestMCPTypeScriptClient drives /mcp with the official MCP TypeScript
// client (@modelcontextprotocol/sdk): list the tools, call the slot-filling
// tool twice on one thread, hit an interrupt and resume it; then check the
// threads over the API. The server has an API key, sent as a bearer token.
func TestMCPTypeScriptClient(t *testing.T) {
	node := requireTools(t, false)
	f := newFixture(t, "mcp-key-1")
	res := runSpec(t, node, "mcp.spec.mjs", "tools", f, "mcp-key-1")
	thread, _ := res["thread_id"].(string)
	_, st := f.api(t, http.MethodGet, "/threads/"+thread+"/state", nil)
	if field(st, "values", "goal") != "diagnose_repair" {
		t.Errorf("slot-filling thread %s over the API: %v", thread, st)
	}
	refund, _ := res["refund_thread_id"].(string)
	_, st = f.api(t, http.MethodGet, "/threads/"+refund+"/state", nil)
	if field(st, "values", "approved") != "no" {
		t.Errorf("refund thread %s over the API: %v", refund, st)
	}
	// MCP calls are ordinary runs: listed with the thread.
	_, list := f.api(t, http.MethodGet, "/threads/"+refund+"/runs", nil)
	if runs, _ := list.([]any); len(runs) != 2 || field(runs[0], "metadata", "source") != "mcp" {
		t.Errorf("runs of the refund thread: %v", list)
	}
}
