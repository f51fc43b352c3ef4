package graphtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/graphtest"
	"github.com/graphctl/graphctl/runtime/node"
)

// unpreparedNodeType is a node type whose Prepare fails, as a model node
// with no model configured does.
const unpreparedNodeType = "graphtest_unprepared"

type unprepared struct{}

func (unprepared) Run(context.Context, *node.Input) (node.Update, error) {
	return node.Update{"answer": "ran without being prepared"}, nil
}

func (unprepared) Prepare(context.Context, *node.Services) error {
	return errors.New("no endpoint configured: set endpoint in the node's config")
}

func init() {
	node.MustRegister(node.Type{
		Name:        unpreparedNodeType,
		Description: "Fails to prepare.",
		New:         func(node.Builder) (node.Node, error) { return unprepared{}, nil },
	})
}

// TestCasesPrepareNodes: a case runs the nodes' Prepare as graphctl run
// does, so a node that cannot be configured fails the case with its message
// instead of running.
func TestCasesPrepareNodes(t *testing.T) {
	src := `dsl_version: "graphctl/v1"
name: "u"
state: answer: {type: "string"}
start: "call"
nodes: call: {type: "` + unpreparedNodeType + `", next: "END"}
tests: [{name: "runs", turns: [{input: {}, expect: state: answer: "ran without being prepared"}]}]`
	g, diags := runtime.LoadSource("u.cue", []byte(src))
	if g == nil || diags.HasErrors() {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	results := graphtest.Run(context.Background(), g, graphtest.Options{TempDir: t.TempDir()})
	if len(results) != 1 || results[0].Passed {
		t.Fatalf("results %+v, want the case failed", results)
	}
	if got := strings.Join(results[0].Failures, "\n"); !strings.Contains(got, `prepare the graph's nodes: node "call": no endpoint configured`) {
		t.Fatalf("failures %q, want the Prepare error", got)
	}
}
