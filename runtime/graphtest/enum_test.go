package graphtest_test

import (
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/graphtest"
)

// A test's input, mock update or expected state that uses a value outside a
// field's enum is reported when the graph is validated, naming the allowed
// values, rather than failing (or passing) at run time.
func TestCheckEnumValuesInTests(t *testing.T) {
	src := `dsl_version: "graphctl/v1"
name: "e"
state: {
	messages: {type: "messages"}
	goal: {type: "string", enum: ["install", "repair"]}
}
start: "a"
nodes: a: {type: "reply", config: text: "ok", next: "END"}
tests: [{name: "bad", mocks: a: update: {goal: "paint"}, turns: [{
	input: {goal: "fly"}
	expect: state: {goal: "swim"}}]}]
`
	g, diags := runtime.LoadSource("e.cue", []byte(src))
	if g == nil || diags.HasErrors() {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	got := graphtest.Check(g)
	for _, want := range []string{
		`mock update of node a: state field "goal": "paint" is not one of the allowed values "install", "repair"`,
		`turn 1 input: state field "goal": "fly" is not one of the allowed values "install", "repair"`,
		`turn 1 expect.state: state field "goal": "swim" is not one of the allowed values "install", "repair"`,
	} {
		if !strings.Contains(got.Error(), want) {
			t.Errorf("diagnostics lack %q:\n%v", want, got)
		}
	}
}
