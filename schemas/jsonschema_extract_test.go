package schemas_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/encoding/jsonschema"
	"cuelang.org/go/encoding/yaml"

	_ "github.com/graphctl/graphctl/builtin-nodes/all"
	"github.com/graphctl/graphctl/runtime/node"
	"github.com/graphctl/graphctl/schemas"
)

// TestJSONSchemaChecksGraphs reads the generated JSON Schema back with CUE's
// JSON Schema decoder (so it must be a well-formed schema) and checks that it
// accepts a valid graph and rejects a node config with an unknown key.
func TestJSONSchemaChecksGraphs(t *testing.T) {
	b, err := schemas.JSONSchema(node.Types(), nil)
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
	for _, tt := range []struct{ name, graph, want string }{
		{"unknown config key", `{"dsl_version":"graphctl/v1","name":"x","state":{"m":{"type":"messages"}},"start":"a","nodes":{"a":{"type":"reply","config":{"txt":"hi"},"next":"END"}}}`, "txt"},
		{"unknown defaults key", `{"dsl_version":"graphctl/v1","name":"x","defaults":{"recursion_limt":5},"state":{},"start":"a","nodes":{"a":{"type":"route","next":"END"}}}`, "recursion_limt"},
	} {
		err = sch.Unify(ctx.CompileString(tt.graph)).Validate(cue.Concrete(true))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error naming %s", tt.name, err, tt.want)
		}
	}
	// Every shipped graph and example, as an editor would check it.
	files, _ := filepath.Glob("../graphs/*.cue")
	more, _ := filepath.Glob("../examples/*/*.cue")
	yamls, _ := filepath.Glob("../examples/*/*.yaml")
	for _, file := range append(append(files, more...), yamls...) {
		if strings.HasSuffix(file, "_test.cue") || strings.HasSuffix(file, "_test.yaml") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v cue.Value
		if strings.HasSuffix(file, ".yaml") {
			f, err := yaml.Extract(file, src)
			if err != nil {
				t.Fatal(err)
			}
			v = ctx.BuildFile(f)
		} else {
			v = ctx.CompileBytes(src, cue.Filename(file))
		}
		if err := sch.Unify(v).Validate(cue.Concrete(true)); err != nil {
			t.Errorf("the JSON Schema rejects %s: %v", file, err)
		}
	}
}
