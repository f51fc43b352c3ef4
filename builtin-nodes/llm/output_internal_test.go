package llm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"ascii cut", "abcdefg", 5, "abcde…"},
		{"cut inside a rune backs off", "ab日本語", 4, "ab…"},
		{"cut at a rune start", "ab日本語", 5, "ab日…"},
		{"japanese reply", strings.Repeat("回答", 100), 120, strings.Repeat("回答", 20) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := truncate(tt.in, tt.n)
			if got != tt.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("truncate(%q, %d) = %q is not valid UTF-8", tt.in, tt.n, got)
			}
		})
	}
}
