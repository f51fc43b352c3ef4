package load

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/node"
)

func init() {
	node.MustRegister(node.Type{
		Name: "loadtest_words", Description: "a config schema with defaults, bounds and nested values",
		Config: `{
	namespace!: [string, ...string]
	limit?: *5 | int & >0
	max?: *10 | uint & >0 & <=100
	field?: *"out" | string
	mode?: *"fast" | "slow" | "auto"
	token?: {env!: string}
	tags?: [...string]
}`,
		New: func(node.Builder) (node.Node, error) {
			return node.Func(func(context.Context, *node.Input) (node.Update, error) { return nil, nil }), nil
		},
	})
}

// cueWords are pieces of CUE's syntax and vocabulary that a user of graph
// files should never have to read.
var cueWords = regexp.MustCompile(`_\|_|\bstruct\b|=~|out of bound|conflicting values|incomplete value|\[\.\.\.|\*\d|\*"|!:|\bint &|missing required field "\d+"|\[ |disjunction|reference "|#[A-Z]|\(\d+ and \d+\)|\buint\b`)

// Every schema violation is said in the graph file's terms: field names,
// allowed values and types, never CUE's notation for them.
func TestMessagesSpeakTheGraphsTerms(t *testing.T) {
	node := func(cfg string) string {
		return hdr + "state: s: {type: \"string\"}\nnodes: a: {type: \"loadtest_words\", config: {namespace: [\"n\"], " + cfg + "}, next: \"END\"}\n"
	}
	tests := []struct{ name, src, want string }{
		{"default int with bound, wrong type", node(`limit: "x"`), `nodes.a.config.limit: must be an int greater than 0 (default 5); got "x"`},
		{"default int with bound, out of bound", node(`limit: 0`), `nodes.a.config.limit: must be an int greater than 0 (default 5); got 0`},
		{"two bounds", node(`max: 500`), `nodes.a.config.max: must be an int greater than 0 and at most 100 (default 10); got 500`},
		{"string with default", node(`field: 3`), `nodes.a.config.field: must be a string (default "out"); got 3`},
		{"enum with default", node(`mode: "slowly"`), `nodes.a.config.mode: must be one of "fast", "slow", "auto" (default "fast"); got "slowly"`},
		{"object wanted", node(`token: "abc"`), `nodes.a.config.token: want object, got string`},
		{"list item", node(`tags: ["a", 2]`), `nodes.a.config.tags.1: want string, got int`},
		{"missing non-empty list", hdr + "nodes: a: {type: \"loadtest_words\", config: {limit: 2}, next: \"END\"}\n", `nodes.a.config: missing required field "namespace"`},
		{"empty non-empty list", hdr + "nodes: a: {type: \"loadtest_words\", config: {namespace: []}, next: \"END\"}\n", `nodes.a.config.namespace: must be a non-empty list of strings, with at least 1 item; got 0 items`},
		{"next of the wrong kind", hdr + "nodes: a: {type: \"loadtest_route\", next: 5}\n", `nodes.a.next: must be a string or a list of strings; got 5`},
		{"bad graph name", "dsl_version: \"graphctl/v1\"\nname: \"my graph\"\nstart: \"a\"\nnodes: a: {type: \"loadtest_route\", next: \"END\"}\n", `name: must be an identifier (letters, digits, _ and -, not starting with a digit or -); got "my graph"`},
		{"bound in the graph schema", hdr + "defaults: recursion_limit: -1\nnodes: a: {type: \"loadtest_route\", next: \"END\"}\n", `defaults.recursion_limit: must be an int greater than 0; got -1`},
		{"state of the wrong kind", hdr + "state: \"x\"\nnodes: a: {type: \"loadtest_route\", next: \"END\"}\n", `state: want object, got string`},
		{"two values for one field", hdr + "nodes: a: {type: \"loadtest_route\", next: \"END\"}\nnodes: a: {type: \"loadtest_set\"}\n", `nodes.a.type is given two different values, "loadtest_set" and "loadtest_route"; keep one`},
		{"two kinds for one field", hdr + "state: {s: {type: \"string\"}}\nstate: \"x\"\nnodes: a: {type: \"loadtest_route\", next: \"END\"}\n", `state is given two values of different types, object and string; keep one`},
		{"a type where a value belongs", hdr + "nodes: a: {type: \"loadtest_route\", next: string}\n", `nodes.a.next: must be a value, not a type (string)`},
		{"unquoted word", hdr + "nodes: a: {type: \"loadtest_route\", next: END}\n", `nodes.a.next: END is not defined; to write the text END, quote it: "END"`},
		{"reducer of the wrong kind", hdr + "state: x: {type: \"string\", reducer: 5}\nnodes: a: {type: \"loadtest_route\", next: \"END\"}\n", `state.x.reducer: must be a string or an object with expr (a string); got 5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Source("g.cue", []byte(tt.src))
			if !diags.HasErrors() {
				t.Fatal("no error")
			}
			found := false
			for _, d := range diags {
				if bad := cueWords.FindString(d.Message); bad != "" {
					t.Errorf("message shows CUE's %q: %s", bad, d.Message)
				}
				found = found || strings.Contains(d.Message, tt.want)
			}
			if !found {
				t.Errorf("diagnostics\n%v\nlack %q", diags, tt.want)
			}
		})
	}
}
