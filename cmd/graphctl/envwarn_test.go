package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An unset environment variable is warned about once, under one code, however
// many places (an MCP server's env, nodes using that server, a node's config)
// refer to it.
func TestUnsetEnvironmentVariableWarnedOnce(t *testing.T) {
	t.Setenv("GRAPHCTL_TEST_DOCS_KEY", "")
	os.Unsetenv("GRAPHCTL_TEST_DOCS_KEY")
	graph := filepath.Join(t.TempDir(), "env.cue")
	src := `dsl_version: "graphctl/v1"
name: "env"
defaults: mcp_servers: docs: {command: ["docs-server"], env: {API_KEY: {env: "GRAPHCTL_TEST_DOCS_KEY"}}}
state: {contracts: {type: "contracts"}, out: {type: "any"}}
start: "a"
nodes: {
	a: {type: "mcp_tool", config: server: "docs", next: "b"}
	b: {type: "mcp_tool", config: server: "docs", next: "c"}
	c: {type: "http", config: {url: "http://127.0.0.1:9/x", output: "out", bearer_token: {env: "GRAPHCTL_TEST_DOCS_KEY"}}, next: "END"}
}
`
	if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "validate", graph)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if n := strings.Count(out, "GRAPHCTL_TEST_DOCS_KEY"); n != 1 || !strings.Contains(out, "[env-unset]") {
		t.Fatalf("want one env-unset warning, got %d mentions:\n%s", n, out)
	}
	if !strings.Contains(out, "referenced at nodes.c.config.bearer_token and defaults.mcp_servers.docs.env.API_KEY") &&
		!strings.Contains(out, "referenced at defaults.mcp_servers.docs.env.API_KEY and nodes.c.config.bearer_token") {
		t.Fatalf("the warning does not name both references:\n%s", out)
	}
}

// run, which uses the value, says so too: an unset variable is not an empty
// string the user never hears of.
func TestRunWarnsOfAnUnsetEnvironmentVariable(t *testing.T) {
	t.Setenv("GRAPHCTL_TEST_UNSET", "")
	os.Unsetenv("GRAPHCTL_TEST_UNSET")
	dir := t.TempDir()
	graph := filepath.Join(dir, "env.yaml")
	src := `dsl_version: graphctl/v1
name: env
state:
  messages: {type: messages}
  key: {type: string, default: {env: GRAPHCTL_TEST_UNSET}}
start: a
nodes:
  a: {type: reply, config: {text: "key=${key}"}, next: END}
`
	if err := os.WriteFile(graph, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "run", graph, "-i", "hi", "--data-dir", filepath.Join(dir, "data"))
	if code != 0 || !strings.Contains(out, "key=") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, graph+":5:38: warning: [env-unset] environment variable GRAPHCTL_TEST_UNSET is not set") {
		t.Fatalf("run does not warn of the unset variable:\n%s", errOut)
	}
}
