package checkpoint

import (
	"regexp"
	"testing"
)

// TestNewIDSortsInCreationOrder checks that ids are time-ordered UUIDs
// (version 6), distinct and increasing however fast they are made, and that
// they sort after ids of the older step-time form.
func TestNewIDSortsInCreationOrder(t *testing.T) {
	uuid6 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	prev := "09999999-ffffffffffffffff" // the older form at step 9,999,999
	for i := range 10000 {
		id := NewID()
		if !uuid6.MatchString(id) {
			t.Fatalf("id %q is not a version 6 UUID", id)
		}
		if id <= prev {
			t.Fatalf("id %d %q does not sort after %q", i, id, prev)
		}
		prev = id
	}
}

func BenchmarkNewID(b *testing.B) {
	for b.Loop() {
		NewID()
	}
}
