package schemas_test

import (
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/encoding/jsonschema"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/schemas"
)

// TestJSONSchemaChecksGraphs reads the generated JSON Schema back with CUE's
// JSON Schema decoder (so it must be a well-formed schema) and checks that it
// accepts a valid graph and rejects a node config with an unknown key.
func TestJSONSchemaChecksGraphs(t *testing.T) {
	b, err := schemas.JSONSchema(node.Types())
	if err != nil {
		t.Fatal(err)
	}
	ctx := cuecontext.New()
	v := ctx.CompileBytes(b)
	f, err := jsonschema.Extract(v, &jsonschema.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sch := ctx.BuildFile(f)
	if sch.Err() != nil {
		t.Fatal(sch.Err())
	}
	good := ctx.CompileString(`{"dsl_version":"graphctl/v1","name":"x","state":{"m":{"type":"messages"}},"start":"a","nodes":{"a":{"type":"reply","config":{"text":"hi"},"next":"END"}}}`)
	if err := sch.Unify(good).Validate(cue.Concrete(true)); err != nil {
		t.Fatalf("valid graph rejected: %v", err)
	}
	bad := ctx.CompileString(`{"dsl_version":"graphctl/v1","name":"x","state":{"m":{"type":"messages"}},"start":"a","nodes":{"a":{"type":"reply","config":{"txt":"hi"},"next":"END"}}}`)
	err = sch.Unify(bad).Validate(cue.Concrete(true))
	if err == nil || !strings.Contains(err.Error(), "txt") {
		t.Fatalf("a reply config with an unknown key: got %v, want an error naming txt", err)
	}
}
