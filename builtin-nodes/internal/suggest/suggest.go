// Package suggest finds the known names closest to a misspelled one, for
// "did you mean" hints in config errors and catalog look-ups.
package suggest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/graphctl/graphctl/runtime/diag"
)

// Distance is the edit distance between a and b, compared case-insensitively
// (diag.EditDistance).
func Distance(a, b string) int { return diag.EditDistance(a, b) }

// Closest returns up to limit candidates within maxDist edits of name, or
// sharing its first prefix characters (prefix <= 0 disables that rule),
// nearest first and alphabetical among equals.
func Closest(name string, candidates []string, maxDist, prefix, limit int) []string {
	type scored struct {
		name string
		dist int
	}
	var found []scored
	lower := strings.ToLower(name)
	for _, c := range candidates {
		d := Distance(name, c)
		samePrefix := prefix > 0 && len(lower) >= prefix && len(c) >= prefix &&
			strings.EqualFold(lower[:prefix], c[:prefix])
		if d <= maxDist || samePrefix {
			found = append(found, scored{c, d})
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].dist != found[j].dist {
			return found[i].dist < found[j].dist
		}
		return found[i].name < found[j].name
	})
	if limit > 0 && len(found) > limit {
		found = found[:limit]
	}
	out := make([]string, len(found))
	for i, s := range found {
		out[i] = s.name
	}
	return out
}

// Hint formats a ` (did you mean "x"?)` suffix, or "" when nothing is close.
func Hint(name string, candidates []string) string {
	maxDist := max(2, len(name)/3)
	c := Closest(name, candidates, maxDist, 0, 1)
	if len(c) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", c[0])
}
