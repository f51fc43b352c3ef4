package main

import (
	"bytes"
	"context"
	"testing"
)

func TestCustomNodeCountsWords(t *testing.T) {
	tests := []struct{ text, want string }{
		{"one", "Your message has 1 word.\n"},
		{"how many words are in this sentence", "Your message has 7 words.\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := run(context.Background(), tt.text, &out); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.want {
			t.Errorf("%q: got %q, want %q", tt.text, out.String(), tt.want)
		}
	}
}
