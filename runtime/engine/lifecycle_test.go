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

// Constructing an engine is enough: the first Run prepares every node once
// (later runs and a later Preflight do not prepare again), and a Prepare that
// fails on the first Run fails that run with its error and closes what was
// prepared, so that the next run fails on the closed node.
func TestRunPreparesNodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		failAt string
		want   map[string]lifecycletest.Count
	}{
		{name: "prepared once by the first run",
			want: map[string]lifecycletest.Count{"a": {Prepares: 1, Runs: 2}, "b": {Prepares: 1, Runs: 2}, "c": {Prepares: 1, Runs: 2}}},
		{name: "failed prepare on the first run", failAt: "b",
			want: map[string]lifecycletest.Count{"a": {Prepares: 1, Closes: 1}, "b": {Prepares: 1, Closes: 1}, "c": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := t.TempDir() + "/"
			eng := engine.New(compileGraph(t, probeGraph(prefix, tc.failAt)), memory.New(), engine.Options{})
			for i, thread := range []string{"t1", "t2"} {
				res, err := eng.Run(context.Background(), engine.Request{ThreadID: thread, Input: map[string]any{}}, nil)
				switch {
				case tc.failAt != "" && i == 0:
					if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("node %q", tc.failAt)) {
						t.Fatalf("first run: %v, want the error of node %q", err, tc.failAt)
					}
					continue
				case tc.failAt != "":
					if err == nil || !strings.Contains(err.Error(), lifecycletest.ErrClosed.Error()) {
						t.Fatalf("second run: %v, want %v", err, lifecycletest.ErrClosed)
					}
					continue
				}
				if err != nil || res.Status != engine.StatusCompleted {
					t.Fatalf("run: %v %v", res, err)
				}
			}
			if err := eng.Preflight(context.Background()); (err != nil) != (tc.failAt != "") {
				t.Fatalf("preflight after the runs: %v", err)
			}
			for name, want := range tc.want {
				if got := lifecycletest.Counts(prefix + name); got != want {
					t.Errorf("node %s before Close: %+v, want %+v", name, got, want)
				}
			}
			if err := eng.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
		})
	}
}

// subgraphProbes writes a parent graph whose node "outer" is a probe, "sub"
// a subgraph of two probes (inner1 → inner2) and "last" a probe; failAt names
// the probe whose Prepare fails.
func subgraphProbes(t *testing.T, prefix, failAt string) *engine.Engine {
	t.Helper()
	probe := func(name string) string {
		return fmt.Sprintf("{type: %q, config: {probe: %q, fail_prepare: %v}", lifecycletest.TypeName, prefix+name, name == failAt)
	}
	g := loadSubgraphs(t, map[string]string{
		"parent.cue": "state: {x: {type: \"string\"}}\nstart: \"outer\"\nnodes: {\n" +
			"\touter: " + probe("outer") + ", next: \"sub\"}\n" +
			"\tsub: {type: \"subgraph\", config: {graph: \"child.cue\"}, next: \"last\"}\n" +
			"\tlast: " + probe("last") + ", next: \"END\"}\n}\n",
		"child.cue": "state: {x: {type: \"string\"}}\nstart: \"inner1\"\nnodes: {\n" +
			"\tinner1: " + probe("inner1") + ", next: \"inner2\"}\n" +
			"\tinner2: " + probe("inner2") + ", next: \"END\"}\n}\n",
	})
	return engine.New(g, memory.New(), engine.Options{})
}

// Preflight reaches the nodes inside subgraph nodes; a failed Prepare inside
// a subgraph closes what was prepared, in the child and in the parent.
func TestPreflightSubgraphNodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		failAt string
		want   map[string]lifecycletest.Count
	}{
		{name: "inner nodes prepared",
			want: map[string]lifecycletest.Count{"outer": {Prepares: 1}, "inner1": {Prepares: 1}, "inner2": {Prepares: 1}, "last": {Prepares: 1}}},
		{name: "inner prepare fails", failAt: "inner2",
			want: map[string]lifecycletest.Count{"outer": {Prepares: 1, Closes: 1}, "inner1": {Prepares: 1, Closes: 1}, "inner2": {Prepares: 1, Closes: 1}, "last": {}}},
		{name: "prepare after the subgraph fails", failAt: "last",
			want: map[string]lifecycletest.Count{"outer": {Prepares: 1, Closes: 1}, "inner1": {Prepares: 1, Closes: 1}, "inner2": {Prepares: 1, Closes: 1}, "last": {Prepares: 1, Closes: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := t.TempDir() + "/"
			eng := subgraphProbes(t, prefix, tc.failAt)
			err := eng.Preflight(context.Background())
			if tc.failAt != "" {
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("node %q", tc.failAt)) {
					t.Fatalf("preflight: %v, want the error of node %q", err, tc.failAt)
				}
			} else if err != nil {
				t.Fatalf("preflight: %v", err)
			}
			for name, want := range tc.want {
				if got := lifecycletest.Counts(prefix + name); got != want {
					t.Errorf("node %s after Preflight: %+v, want %+v", name, got, want)
				}
			}
			if err := eng.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			for name := range tc.want {
				if got := lifecycletest.Counts(prefix + name).Closes; got != 1 {
					t.Errorf("node %s closed %d times after Close, want once", name, got)
				}
			}
		})
	}
}

// A subgraph's inner nodes are prepared when the parent is only run.
func TestRunPreparesSubgraphNodes(t *testing.T) {
	prefix := t.TempDir() + "/"
	eng := subgraphProbes(t, prefix, "")
	defer eng.Close()
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: map[string]any{}}, nil)
	if err != nil || res.Status != engine.StatusCompleted {
		t.Fatalf("run: %v %v", res, err)
	}
	for _, name := range []string{"outer", "inner1", "inner2", "last"} {
		if got := lifecycletest.Counts(prefix + name); got.Prepares != 1 || got.Runs != 1 {
			t.Errorf("node %s: %+v, want prepared once and run once", name, got)
		}
	}
}
