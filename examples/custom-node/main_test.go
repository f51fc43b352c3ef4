package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/node"
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

// TestWordCountStaysInItsRegistry: word_count lives only in the program's
// registry: the default one does not hold it, and a graph using it does not
// load there, the diagnostic naming the type.
func TestWordCountStaysInItsRegistry(t *testing.T) {
	if _, ok := node.Lookup("word_count"); ok {
		t.Error("the default registry holds word_count")
	}
	g, diags := runtime.LoadSource("counter.cue", []byte(graphSource))
	if g != nil || !strings.Contains(diags.Error(), `counter.cue:10:17: [unknown-node-type] nodes.count.type: unknown node type "word_count"`) {
		t.Errorf("with the default registry: graph %v, diagnostics:\n%v", g != nil, diags)
	}
}
