// Package hashvec turns text into deterministic embedding vectors: a hashed
// bag of lower-cased words, L2-normalised, so texts sharing words are close
// under cosine similarity. It serves local demos and tests that must not
// depend on a model server.
package hashvec

import (
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Words splits text into lower-cased words of letters and digits.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Vector returns the dim-dimensional vector of text. An empty text yields
// the zero vector.
func Vector(text string, dim int) []float32 {
	if dim <= 0 {
		dim = 1
	}
	v := make([]float32, dim)
	for _, w := range Words(text) {
		h := fnv.New64a()
		h.Write([]byte(w))
		sum := h.Sum64()
		sign := float32(1)
		if sum&(1<<63) != 0 {
			sign = -1
		}
		v[sum%uint64(dim)] += sign
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
	return v
}
