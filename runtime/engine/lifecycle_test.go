package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/node/lifecycletest"
)

// probeGraph chains three lifecycle probes a → b → c; failAt names the one
// whose Prepare fails ("" for none).
func probeGraph(prefix, failAt string) string {
	var nodes strings.Builder
	for i, name := range []string{"a", "b", "c"} {
		next := "END"
		if i < 2 {
			next = string("abc"[i+1])
		}
		fmt.Fprintf(&nodes, "\t%s: {type: %q, config: {probe: %q, fail_prepare: %v}, next: %q}\n",
			name, lifecycletest.TypeName, prefix+name, name == failAt, next)
	}
	return "state: {x: {type: \"string\"}}\nstart: \"a\"\nnodes: {\n" + nodes.String() + "}\n"
}

func TestNodeLifecycle(t *testing.T) {
	type counts map[string]lifecycletest.Count
	for _, tc := range []struct {
		name   string
		failAt string
		// run runs the graph after a successful Preflight.
		run bool
		// closedEarly are the nodes a failed Preflight closes itself.
		closedEarly []string
		// want are the counts after Engine.Close, which closes every node
		// once, those never prepared too.
		want counts
	}{
		{name: "failed prepare closes the nodes prepared", failAt: "b",
			closedEarly: []string{"a", "b"},
			want:        counts{"a": {Prepares: 1, Closes: 1}, "b": {Prepares: 1, Closes: 1}, "c": {Closes: 1}}},
		{name: "failed first prepare", failAt: "a", closedEarly: []string{"a"},
			want: counts{"a": {Prepares: 1, Closes: 1}, "b": {Closes: 1}, "c": {Closes: 1}}},
		{name: "normal end closes every node once", run: true,
			want: counts{"a": {Prepares: 1, Closes: 1, Runs: 1}, "b": {Prepares: 1, Closes: 1, Runs: 1}, "c": {Prepares: 1, Closes: 1, Runs: 1}}},
		{name: "close without a run",
			want: counts{"a": {Prepares: 1, Closes: 1}, "b": {Prepares: 1, Closes: 1}, "c": {Prepares: 1, Closes: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := t.TempDir() + "/"
			eng := engine.New(compileGraph(t, probeGraph(prefix, tc.failAt)), memory.New(), engine.Options{})
			err := eng.Preflight(context.Background())
			if tc.failAt != "" {
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("node %q", tc.failAt)) {
					t.Fatalf("preflight error %v, want one naming node %q", err, tc.failAt)
				}
			} else if err != nil {
				t.Fatalf("preflight: %v", err)
			}
			for _, name := range []string{"a", "b", "c"} {
				early := slices.Contains(tc.closedEarly, name)
				if got := lifecycletest.Counts(prefix + name).Closes; got != map[bool]int{true: 1}[early] {
					t.Errorf("node %s closed %d times by Preflight, want closed: %v", name, got, early)
				}
			}
			if tc.run {
				res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: map[string]any{}}, nil)
				if err != nil || res.Status != engine.StatusCompleted {
					t.Fatalf("run: %v %v", res, err)
				}
			}
			// Close after a failed Preflight must not close a node twice.
			if err := eng.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if err := eng.Close(); err != nil {
				t.Fatalf("second close: %v", err)
			}
			for name, want := range tc.want {
				if got := lifecycletest.Counts(prefix + name); got != want {
					t.Errorf("node %s: %+v, want %+v", name, got, want)
				}
			}
		})
	}
}

// A run of a node closed after a failed Preflight fails with the node's
// error instead of using released resources.
func TestClosedNodeRunFails(t *testing.T) {
	eng := engine.New(compileGraph(t, probeGraph(t.TempDir()+"/", "b")), memory.New(), engine.Options{})
	defer eng.Close()
	if err := eng.Preflight(context.Background()); err == nil {
		t.Fatal("preflight succeeded")
	}
	_, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: map[string]any{}}, nil)
	if !errors.Is(err, lifecycletest.ErrClosed) && (err == nil || !strings.Contains(err.Error(), lifecycletest.ErrClosed.Error())) {
		t.Fatalf("run after close: %v, want %v", err, lifecycletest.ErrClosed)
	}
}
