package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/workspace"
)

// check refuses run flags that name what the graph does not have: a
// negative --recursion-limit, an --interrupt-before/--interrupt-after node
// that is not in the graph.
func (f *runFlags) check(g *compile.Graph) error {
	if f.recursionLimit < 0 {
		return usageError(fmt.Errorf("--recursion-limit must be positive (or 0 for the graph's default), got %d", f.recursionLimit))
	}
	if err := checkpoint.CheckRootThreadID(f.thread); err != nil {
		return usageError(fmt.Errorf("--thread: %w", err))
	}
	for _, fl := range []struct {
		name  string
		nodes []string
	}{{"--interrupt-before", f.interruptBefore}, {"--interrupt-after", f.interruptAfter}} {
		for _, n := range fl.nodes {
			if n == "*" {
				continue
			}
			if _, ok := g.Nodes[n]; !ok {
				return usageError(fmt.Errorf("%s %q: graph %q has no such node (its nodes: %s)", fl.name, n, g.Spec.Name, strings.Join(g.NodeOrder, ", ")))
			}
		}
	}
	return nil
}

// existingThread fails (exit 1) when the thread has no checkpoint: resume
// continues a thread, it never starts one.
func existingThread(ctx context.Context, ws *workspace.Workspace, thread string) error {
	_, err := ws.Checkpointer().Latest(ctx, thread)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return failed(fmt.Errorf("no thread %q in %s: start it with graphctl run", thread, ws.Dir))
	case err != nil:
		return failed(fmt.Errorf("read thread %q: %w", thread, err))
	}
	return nil
}

// parseResumeValue reads --value: JSON, or a bare word taken as a string.
// Input that looks like JSON (it starts with {, [ or ") but does not parse
// is an error rather than a string, so a typo is not stored as the answer.
func parseResumeValue(s string) (any, error) {
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if err == nil {
		return v, nil
	}
	if t := strings.TrimSpace(s); t != "" && strings.ContainsRune(`{["`, rune(t[0])) {
		return nil, fmt.Errorf("--value is not valid JSON: %v (for a plain string, write it without the leading %q or quote it as JSON)", err, t[0])
	}
	return s, nil
}
