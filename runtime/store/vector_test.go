package store

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestCosine(t *testing.T) {
	tests := []struct {
		name string
		a, b []float32
		want float64
	}{
		{"same direction", []float32{1, 2}, []float32{2, 4}, 1},
		{"orthogonal", []float32{1, 0}, []float32{0, 3}, 0},
		{"opposite", []float32{1, 1}, []float32{-1, -1}, -1},
		{"other dimension", []float32{1, 0}, []float32{1, 0, 0}, 0},
		{"zero vector", []float32{0, 0}, []float32{1, 0}, 0},
		{"empty", nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cosine(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestVectorEncoding(t *testing.T) {
	v := []float32{0.5, -1.25, float32(math.Pi), 0}
	model, got, err := DecodeVector(EncodeVector("openai:bge-m3", v))
	if err != nil || model != "openai:bge-m3" || !slices.Equal(got, v) {
		t.Fatalf("round trip = %q %v %v", model, got, err)
	}
	for _, bad := range [][]byte{nil, {5, 'a'}, append(EncodeVector("m", v), 1)} {
		if _, _, err := DecodeVector(bad); err == nil {
			t.Errorf("DecodeVector(%v) accepted corrupt input", bad)
		}
	}
}

func TestRankVectors(t *testing.T) {
	type doc struct {
		name string
		vec  []float32
		at   int64
	}
	docs := []doc{
		{"far", []float32{0, 1}, 1},
		{"none", nil, 2},
		{"near-old", []float32{1, 0}, 3},
		{"near-new", []float32{2, 0}, 4},
		{"short", []float32{1}, 5},
	}
	ranked := RankVectors([]float32{1, 0}, docs, func(d doc) []float32 { return d.vec },
		func(d doc) time.Time { return time.Unix(d.at, 0) }, 0, 0)
	var names []string
	for _, r := range ranked {
		names = append(names, r.Item.name)
	}
	if want := []string{"near-new", "near-old", "far"}; !slices.Equal(names, want) {
		t.Fatalf("RankVectors = %v, want %v", names, want)
	}
	if ranked[0].Score != 1 || ranked[2].Score != 0 {
		t.Errorf("scores %v %v", ranked[0].Score, ranked[2].Score)
	}
}
