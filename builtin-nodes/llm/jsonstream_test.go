package llm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFieldStreamer(t *testing.T) {
	tests := []struct {
		name, key, json, want string
	}{
		{"plain", "response", `{"response": "Hello there"}`, "Hello there"},
		{"after other fields", "response", `{"a": 1, "b": {"response": "nested"}, "c": [1, "x"], "response": "top"}`, "top"},
		{"escapes", "response", `{"response": "line\nnext \"quoted\" \\ \u00e9\u4f60"}`, "line\nnext \"quoted\" \\ é你"},
		{"multibyte", "response", `{"response": "17 × 23 = 391 😊 好的"}`, "17 × 23 = 391 😊 好的"},
		{"key as a value elsewhere", "response", `{"x": "response", "response": "yes"}`, "yes"},
		{"stops at the end", "response", `{"response": "done", "more": "not this"}`, "done"},
		{"absent", "response", `{"answer": "no"}`, ""},
		{"not a string", "response", `{"response": 5, "r": "x"}`, ""},
	}
	for _, tt := range tests {
		// Every split into chunks must give the same text.
		for size := 1; size <= len(tt.json); size++ {
			var got strings.Builder
			s := newFieldStreamer(tt.key, func(text string) {
				if !utf8.ValidString(text) {
					t.Fatalf("%s, chunks of %d: emitted invalid UTF-8 %q", tt.name, size, text)
				}
				got.WriteString(text)
			})
			for i := 0; i < len(tt.json); i += size {
				end := min(i+size, len(tt.json))
				s.Write([]byte(tt.json[i:end]))
			}
			if got.String() != tt.want || s.Text() != tt.want {
				t.Fatalf("%s, chunks of %d: got %q (Text %q), want %q", tt.name, size, got.String(), s.Text(), tt.want)
			}
		}
	}
}
