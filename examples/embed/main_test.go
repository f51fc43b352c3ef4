package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestEmbeddedConversation(t *testing.T) {
	var out bytes.Buffer
	turns := []string{"My dishwasher WDT780SAEM1 is leaking", "I want to fix it"}
	if err := run(context.Background(), "../../graphs/slot_filling.cue", t.TempDir(), turns, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"What would you like to do?", "[TOOL USED: diagnose_repair]", "WDT780SAEM1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
