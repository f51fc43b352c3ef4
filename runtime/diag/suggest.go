package diag

import (
	"fmt"
	"sort"
	"strings"
)

// EditDistance is the optimal-string-alignment distance between a and b,
// compared case-insensitively: insertions, deletions, substitutions and
// transpositions of adjacent characters ("gaol" → "goal") each cost one.
func EditDistance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Closest returns the candidate most likely meant by a misspelt name: the
// nearest within a third of the shorter length in edit distance (at least one
// edit, two for names longer than three characters), preferring the same
// length, then alphabetical order, among equals; "" when none is that close.
// name itself, when among the candidates, is skipped.
func Closest(name string, candidates []string) string {
	best, bestDist := "", -1
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, cand := range sorted {
		if cand == name {
			continue
		}
		limit := max(1, min(len(name), len(cand))/3)
		if len(name) > 3 && len(cand) > 3 {
			limit = max(limit, 2)
		}
		d := EditDistance(name, cand)
		if d > limit {
			continue
		}
		// Among equally near candidates, prefer the one of the same length
		// (a transposition over a dropped character).
		if bestDist < 0 || d < bestDist || (d == bestDist && lenGap(name, cand) < lenGap(name, best)) {
			best, bestDist = cand, d
		}
	}
	return best
}

// DidYouMean returns `; did you mean "x"?` for the closest candidate, or "".
func DidYouMean(name string, candidates []string) string {
	if best := Closest(name, candidates); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

func lenGap(a, b string) int {
	if d := len(a) - len(b); d > 0 {
		return d
	}
	return len(b) - len(a)
}
