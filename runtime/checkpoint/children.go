package checkpoint

import (
	"context"
	"fmt"
	"strings"
)

// ChildLister is implemented by checkpointers that find the subgraph
// threads of a thread by key range, without listing every stored thread.
//
// Every stored id below a thread starts with the thread's id and
// NamespaceSep (ChildThreadID), and a root thread's id never contains
// NamespaceSep (CheckRootThreadID): the ids that start with
// threadID+NamespaceSep are exactly the thread's subgraph threads, at any
// depth, and no other thread's.
type ChildLister interface {
	// Children returns the stored ids of every subgraph thread below
	// threadID (those that start with ChildPrefix(threadID)), at any depth,
	// in ascending byte order; none for a thread that has none or does not
	// exist.
	Children(ctx context.Context, threadID string) ([]string, error)
}

// ChildPrefix is the prefix of the stored ids of a thread's subgraph
// threads.
func ChildPrefix(threadID string) string { return threadID + NamespaceSep }

// IsChildOf reports whether the stored id id is that of a subgraph thread
// below threadID, at any depth.
func IsChildOf(id, threadID string) bool { return strings.HasPrefix(id, ChildPrefix(threadID)) }

// CheckRootThreadID rejects the id of a thread of its own that could be
// taken for a subgraph's stored id: one that contains NamespaceSep.
func CheckRootThreadID(id string) error {
	if strings.Contains(id, NamespaceSep) {
		return fmt.Errorf("thread id %q contains the control character %q, which separates subgraph namespaces", id, NamespaceSep)
	}
	return nil
}
