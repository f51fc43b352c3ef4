package hashvec

import (
	"math"
	"testing"
)

func TestVector(t *testing.T) {
	tests := []struct {
		name     string
		a, b     string
		sameWant bool
	}{
		{"case and punctuation ignored", "The Cat!", "the cat", true},
		{"different words differ", "the cat", "stock prices", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			va, vb := Vector(tt.a, 32), Vector(tt.b, 32)
			same := true
			for i := range va {
				if va[i] != vb[i] {
					same = false
				}
			}
			if same != tt.sameWant {
				t.Errorf("Vector(%q) == Vector(%q): %v, want %v", tt.a, tt.b, same, tt.sameWant)
			}
			var norm float64
			for _, x := range va {
				norm += float64(x) * float64(x)
			}
			if math.Abs(norm-1) > 1e-5 {
				t.Errorf("norm² of %q = %v, want 1", tt.a, norm)
			}
		})
	}
	for _, x := range Vector("", 8) {
		if x != 0 {
			t.Fatalf("empty text: want the zero vector")
		}
	}
}
