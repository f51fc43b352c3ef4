package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/server/graphs"
)

// Input, interrupt answers and state updates sent over HTTP are checked
// against each field's type and enum: a bad input is a 400 naming the field
// and its allowed values, a bad answer leaves the thread waiting.
func TestHTTPWritesCheckEnum(t *testing.T) {
	dir := t.TempDir()
	src := `dsl_version: "graphctl/v1"
name: "choose"
state: {
	color: {type: "string", enum: ["red", "blue"]}
	size: {type: "int"}
	answer: {type: "string", enum: ["yes", "no"]}
}
start: "ask"
nodes: {
	ask: {type: "interrupt", config: {field: "answer", message: "Sure?"}, next: "END"}
}
`
	if err := os.WriteFile(filepath.Join(dir, "choose.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := openServed(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, diags, err := graphs.Open(dir, func(g *compile.Graph) (*engine.Engine, error) {
		return ws.Engine(g, engine.Options{}), nil
	}, nil)
	if err != nil || reg == nil {
		t.Fatalf("open graphs: %v %v", err, diags)
	}
	f := wrapFixture(t, ws, reg, func(c *Config) { c.ChatGraph = "" })

	for _, tt := range []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"enum", map[string]any{"color": "green"}, `state field \"color\": \"green\" is not one of the allowed values \"red\", \"blue\"`},
		{"type", map[string]any{"size": "big"}, `state field \"size\" (int): want int, got string`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out := f.do("POST", "/runs/wait", map[string]any{"assistant_id": "choose", "input": tt.input})
			if code != 400 || !strings.Contains(mustJSON(out), tt.want) {
				t.Fatalf("%d %s; want 400 containing %s", code, mustJSON(out), tt.want)
			}
		})
	}

	f.do("POST", "/threads", map[string]any{"thread_id": "c1"})
	if code, out := f.do("POST", "/threads/c1/runs/wait", map[string]any{"assistant_id": "choose", "input": map[string]any{"color": "red"}}); code != 200 || field(out, "__interrupt__") == nil {
		t.Fatalf("run: %d %s", code, mustJSON(out))
	}
	code, out := f.do("POST", "/threads/c1/runs/wait", map[string]any{"assistant_id": "choose", "command": map[string]any{"resume": "maybe"}})
	if code != 200 || !strings.Contains(mustJSON(field(out, "__error__")), `\"maybe\" is not one of the allowed values \"yes\", \"no\"`) {
		t.Fatalf("bad answer: %d %s", code, mustJSON(out))
	}
	code, out = f.do("POST", "/threads/c1/state", map[string]any{"values": map[string]any{"answer": "perhaps"}})
	if code != 400 || !strings.Contains(mustJSON(out), "allowed values") {
		t.Fatalf("bad state update: %d %s", code, mustJSON(out))
	}
	code, out = f.do("POST", "/threads/c1/runs/wait", map[string]any{"assistant_id": "choose", "command": map[string]any{"resume": "yes"}})
	if code != 200 || field(out, "answer") != "yes" {
		t.Fatalf("good answer after a bad one: %d %s", code, mustJSON(out))
	}
}
