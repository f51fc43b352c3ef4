package checkpoint

import (
	"context"
	"strings"
)

// A subgraph's checkpoints are stored as a thread of their own whose id is
// the parent thread's id, NamespaceSep and the subgraph's namespace. The
// namespace of a subgraph node's task is "node:task"; nested subgraphs join
// their namespaces with "|", as LangGraph's checkpoint_ns does. Every
// Checkpointer stores them without knowing it; listings of threads leave
// them out (IsChildThread), and DeleteThread callers remove them with the
// parent (see ChildThreads).
const NamespaceSep = "\x1f"

// ChildThreadID returns the id under which a subgraph's checkpoints are
// stored: ns is the subgraph's namespace relative to threadID.
func ChildThreadID(threadID, ns string) string {
	if ns == "" {
		return threadID
	}
	return threadID + NamespaceSep + ns
}

// SplitThreadID splits a stored thread id into the root thread's id and the
// namespace below it ("" for a root thread), with nested namespaces joined
// by "|".
func SplitThreadID(id string) (root, ns string) {
	root, rest, found := strings.Cut(id, NamespaceSep)
	if !found {
		return id, ""
	}
	return root, strings.ReplaceAll(rest, NamespaceSep, "|")
}

// IsChildThread reports whether a stored thread id is that of a subgraph's
// checkpoints rather than a thread of its own.
func IsChildThread(id string) bool { return strings.Contains(id, NamespaceSep) }

// NamespacedThreadID returns the stored id of the subgraph checkpoints at
// ns below the root thread, where ns joins nested namespaces with "|".
func NamespacedThreadID(root, ns string) string {
	if ns == "" {
		return root
	}
	return root + NamespaceSep + strings.ReplaceAll(ns, "|", NamespaceSep)
}

// ChildThreads returns the stored ids of every subgraph's checkpoints
// below the thread, at any depth: by key range when the checkpointer is a
// ChildLister, else from the listing of every stored thread.
func ChildThreads(ctx context.Context, c Checkpointer, threadID string) ([]string, error) {
	if cl, ok := c.(ChildLister); ok {
		return cl.Children(ctx, threadID)
	}
	threads, err := c.Threads(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range threads {
		if IsChildOf(t.ThreadID, threadID) {
			out = append(out, t.ThreadID)
		}
	}
	return out, nil
}

// DeleteThreadTree deletes a thread with the checkpoints of its subgraphs,
// each stored thread in a transaction of its own, the thread last.
func DeleteThreadTree(ctx context.Context, c Checkpointer, threadID string) error {
	children, err := ChildThreads(ctx, c, threadID)
	if err != nil {
		return err
	}
	for _, id := range children {
		if err := c.DeleteThread(ctx, id); err != nil {
			return err
		}
	}
	return c.DeleteThread(ctx, threadID)
}
