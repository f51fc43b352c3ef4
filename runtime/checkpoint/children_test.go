package checkpoint_test

import (
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// TestChildPrefixIsExact checks the property a listing by key range rests
// on: the stored id of a subgraph thread, at any depth, starts with its
// ancestors' child prefixes and with no other thread's, for root ids that
// CheckRootThreadID accepts, even ones that share a prefix or sort right
// next to the separator.
func TestChildPrefixIsExact(t *testing.T) {
	roots := []string{"a", "a\x1e", "a ", "a!", "aa", "ab", "b", "a:b", "a|b", strings.Repeat("x", 256)}
	namespaces := []string{"n:1", "a:2", "sub:sub", "n:1|m:2", "x:" + strings.Repeat("t", 200)}
	type stored struct{ root, ns, id string }
	var ids []stored
	for _, root := range roots {
		if err := checkpoint.CheckRootThreadID(root); err != nil {
			t.Fatalf("CheckRootThreadID(%q): %v", root, err)
		}
		ids = append(ids, stored{root, "", root})
		for _, ns := range namespaces {
			ids = append(ids, stored{root, ns, checkpoint.NamespacedThreadID(root, ns)})
		}
	}
	for _, parent := range ids {
		for _, other := range ids {
			below := checkpoint.IsChildOf(other.id, parent.id)
			want := other.root == parent.root && other.ns != parent.ns &&
				(parent.ns == "" || strings.HasPrefix(other.ns, parent.ns+"|"))
			if below != want {
				t.Errorf("IsChildOf(%q, %q) = %v, want %v", other.id, parent.id, below, want)
			}
		}
	}
	// A nested child built one level at a time is the same id.
	nested := checkpoint.ChildThreadID(checkpoint.ChildThreadID("a", "n:1"), "m:2")
	if nested != checkpoint.NamespacedThreadID("a", "n:1|m:2") || !checkpoint.IsChildOf(nested, "a") {
		t.Errorf("nested child id %q is not below a as n:1|m:2", nested)
	}
}

func TestCheckRootThreadID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"a", true},
		{"7f1c0e4e-2b8a-4c57-9a51-0d8f3f1f9d11", true},
		{"a\x1eb", true},
		{"a\x1fb", false},
		{"\x1f", false},
		{checkpoint.ChildThreadID("a", "n:1"), false},
	}
	for _, tt := range tests {
		if err := checkpoint.CheckRootThreadID(tt.id); (err == nil) != tt.want {
			t.Errorf("CheckRootThreadID(%q) = %v, want ok %v", tt.id, err, tt.want)
		}
	}
}
