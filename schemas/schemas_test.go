package schemas

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/graphctl/graphctl/runtime/node"
)

func testTypes() []node.Type {
	noop := func(node.Builder) (node.Node, error) {
		return node.Func(func(context.Context, *node.Input) (node.Update, error) { return nil, nil }), nil
	}
	return []node.Type{
		{Name: "reply", Config: `{text: string, role?: *"assistant" | "system", max?: int & >0}`, New: noop},
		{Name: "route", New: noop},
		{Name: "my-tool", Config: `{url!: string, headers?: [string]: string}`, New: noop},
	}
}

func TestFullValidatesNodeConfigs(t *testing.T) {
	src, err := Full(testTypes())
	if err != nil {
		t.Fatal(err)
	}
	ctx := cuecontext.New()
	schema := ctx.CompileString(src)
	if err := schema.Err(); err != nil {
		t.Fatalf("full schema does not compile: %v", err)
	}
	graph := schema.LookupPath(cue.ParsePath("#Graph"))
	head := `dsl_version: "graphctl/v1", name: "g", start: "a", `
	tests := []struct {
		name  string
		doc   string
		valid bool
	}{
		{"reply with text", `nodes: a: {type: "reply", config: text: "hi"}`, true},
		{"reply with a bad role", `nodes: a: {type: "reply", config: {text: "hi", role: "user"}}`, false},
		{"reply with an unknown key", `nodes: a: {type: "reply", config: {text: "hi", x: 1}}`, false},
		{"route without config", `nodes: a: {type: "route", next: "END"}`, true},
		{"route with config", `nodes: a: {type: "route", config: {x: 1}}`, false},
		{"quoted type name", `nodes: a: {type: "my-tool", config: url: "http://127.0.0.1"}`, true},
		{"unregistered type", `nodes: a: {type: "nope"}`, false},
		{"unknown node key", `nodes: a: {type: "route", nxt: "END"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := ctx.CompileString("{" + head + tt.doc + "}")
			if err := doc.Err(); err != nil {
				t.Fatal(err)
			}
			err := graph.Unify(doc).Validate(cue.Concrete(true))
			if (err == nil) != tt.valid {
				t.Errorf("valid = %v, want %v (err: %v)", err == nil, tt.valid, err)
			}
		})
	}
}

func TestFullRejectsBadConfigSchema(t *testing.T) {
	types := append(testTypes(), node.Type{Name: "broken", Config: `{a: `})
	if _, err := Full(types); err == nil {
		t.Fatal("Full accepted a node type with an unparsable config schema")
	}
}

func TestJSONSchema(t *testing.T) {
	out, err := JSONSchema(testTypes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if s, _ := doc["$schema"].(string); !strings.Contains(s, "2020-12") {
		t.Errorf("$schema = %v, want draft 2020-12", doc["$schema"])
	}
	// Follow a path through the schema, resolving $ref into $defs.
	var walk func(v any, path ...string) any
	walk = func(v any, path ...string) any {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/$defs/") {
			m, _ = doc["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		switch len(path) {
		case 0:
			return m
		case 1:
			return m[path[0]]
		}
		return walk(m[path[0]], path[1:]...)
	}
	required, _ := walk(doc, "required").([]any)
	for _, want := range []string{"dsl_version", "name", "start"} {
		found := false
		for _, r := range required {
			found = found || r == want
		}
		if !found {
			t.Errorf("required = %v, missing %q", required, want)
		}
	}
	nodeType, _ := walk(doc, "properties", "nodes", "additionalProperties", "properties", "type").(map[string]any)
	if nodeType["type"] != "string" {
		t.Errorf("nodes → additionalProperties → properties.type = %v, want a string schema", nodeType)
	}
	rules, _ := walk(doc, "properties", "nodes", "additionalProperties", "allOf").([]any)
	if len(rules) != len(testTypes())+1 {
		t.Fatalf("node allOf has %d rules, want one per node type plus the type enum", len(rules))
	}
	then, _ := walk(rules[0], "then", "properties", "config", "properties", "role").(map[string]any)
	if then == nil {
		t.Errorf("the first node type's rule has no config.role schema: %v", rules[0])
	}
	text := string(out)
	for _, want := range []string{`"additionalProperties": false`, `"assistant"`, `"my-tool"`, `"graphctl/v1"`, `"url"`} {
		if !strings.Contains(text, want) {
			t.Errorf("JSON Schema lacks %s", want)
		}
	}
}

func TestConfigFields(t *testing.T) {
	got, err := ConfigFields(testTypes()[0], map[string][]string{"text": {ReadsTemplate}})
	if err != nil {
		t.Fatal(err)
	}
	want := []ConfigField{
		{Name: "text", Type: "a string", Schema: "string", Required: true, Reads: "template"},
		{Name: "role", Type: `one of "assistant", "system"`, Schema: `"assistant" | "system"`, Default: `"assistant"`, Reads: "literal"},
		{Name: "max", Type: "an int greater than 0", Schema: "int & >0"},
	}
	if len(got) != len(want) {
		t.Fatalf("fields = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if fs, err := ConfigFields(testTypes()[1], nil); err != nil || len(fs) != 0 {
		t.Errorf("route fields = %v, %v; want none", fs, err)
	}
	if _, err := ConfigFields(node.Type{Name: "bad", Config: "5"}, nil); err == nil {
		t.Error("a non-struct config schema was accepted")
	}
	// A required non-empty list has a "default" of its first item's type in
	// CUE; it is still required and has no default.
	fs, err := ConfigFields(node.Type{Name: "ns", Config: `{namespace: [string, ...string], limit?: *5 | int & >0}`}, nil)
	if err != nil || len(fs) != 2 || !fs[0].Required || fs[0].Default != "" || fs[1].Required || fs[1].Default != "5" {
		t.Errorf("fields = %+v, %v; want namespace required without default, limit optional with default 5", fs, err)
	}
}
