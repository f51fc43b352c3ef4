package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/mcp/mcptest"
)

// `graphctl tools GRAPH` lists the builtin tools and, connecting to them, the
// tools of the MCP servers the graph declares (here the test MCP server over
// streamable HTTP and the builtin tools served in process), with their
// argument schemas and the names an llm node uses for them; an unreachable
// server is reported and fails the command.
func TestToolsListsBuiltinAndMCPTools(t *testing.T) {
	url := mcptest.StartHTTP(t)
	dir := t.TempDir()
	graph := filepath.Join(dir, "agent.cue")
	src := fmt.Sprintf(`dsl_version: "graphctl/v1"
name: "agent"
defaults: mcp_servers: {
	web: {url: %q}
	local: {builtin: ["calculate"]}
}
state: messages: {type: "messages"}
start: "a"
nodes: a: {type: "reply", config: text: "hi", next: "END"}
`, url)
	if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "tools", graph, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var report toolsReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatal(err)
	}
	refs := map[string]toolInfo{}
	for _, tl := range report.Builtin {
		refs[tl.Ref] = tl
	}
	for _, s := range report.MCP {
		if s.Error != "" {
			t.Errorf("server %s: %s", s.Server, s.Error)
		}
		for _, tl := range s.Tools {
			refs[tl.Ref] = tl
		}
	}
	for _, want := range []string{"calculate", "current_time", "mcp:web/add", "mcp:web/get_weather", "mcp:local/calculate"} {
		if _, ok := refs[want]; !ok {
			t.Errorf("tools lacks %s: %v", want, out)
		}
	}
	add := refs["mcp:web/add"]
	if props, _ := add.InputSchema["properties"].(map[string]any); props["a"] == nil || props["b"] == nil || add.Description == "" {
		t.Errorf("mcp:web/add has schema %v and description %q", add.InputSchema, add.Description)
	}
	text, _, code := run(t, "tools", graph)
	if code != 0 || !strings.Contains(text, "mcp:web/get_weather") || !strings.Contains(text, "city  string  required") {
		t.Errorf("text output:\n%s", text)
	}

	// A server that cannot be reached.
	bad := filepath.Join(dir, "bad.cue")
	if err := os.WriteFile(bad, []byte(strings.Replace(src, url, "http://127.0.0.1:1/mcp", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, "tools", bad, "--timeout", "5s")
	if code != 1 || !strings.Contains(out, `MCP server "web"`) || !strings.Contains(out, "cannot list its tools") || !strings.Contains(errOut, "1 MCP server(s) could not be listed") {
		t.Errorf("unreachable server: exit %d\n%s\n%s", code, out, errOut)
	}
}
