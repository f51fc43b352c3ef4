package load

import (
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/graph"
)

// The keys of the defaults block beyond the core ones are those packages
// declare; these tests declare two of their own.
func init() {
	graph.MustRegisterDefaultsKey(graph.DefaultsKey{Name: "model", Schema: "string", Doc: "the default model"})
	graph.MustRegisterDefaultsKey(graph.DefaultsKey{Name: "sources", Schema: "{...}", Doc: "base URLs"})
}

// A declared defaults key is checked against its schema; an undeclared one
// is an error naming it.
func TestDeclaredDefaultsKeys(t *testing.T) {
	const graphText = "dsl_version: \"graphctl/v1\"\nname: \"d\"\nstate: {x: {type: \"string\"}}\nstart: \"END\"\nnodes: {}\ndefaults: %s\n"
	for _, tc := range []struct {
		name, defaults, err string
	}{
		{name: "declared key", defaults: `{model: "openai:gpt-4o"}`},
		{name: "declared key of the wrong kind", defaults: `{model: 3}`, err: "defaults.model"},
		{name: "undeclared key", defaults: `{modle: "openai:gpt-4o"}`, err: "modle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(graphText, "%s", tc.defaults, 1)
			_, diags := Source("d.cue", []byte(src))
			if tc.err == "" {
				if diags.HasErrors() {
					t.Fatalf("unexpected errors: %v", diags)
				}
				return
			}
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.err) {
				t.Fatalf("errors %v, want one naming %q", diags, tc.err)
			}
		})
	}
}
