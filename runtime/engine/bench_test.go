package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/load"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// stepsPerRun is the length of the no-op chain each benchmark run executes.
const stepsPerRun = 100

// BenchmarkSuperStep measures the engine's own cost of one super-step: a node
// that writes nothing, one checkpoint per step. ns/step is the figure to read.
func BenchmarkSuperStep(b *testing.B) {
	g, diags := runtime.LoadSource("bench.cue", load.GenerateGraph(stepsPerRun, "enginetest", ""))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	backends := []struct {
		name string
		open func(b *testing.B) checkpoint.Checkpointer
	}{
		{"memory", func(*testing.B) checkpoint.Checkpointer { return memory.New() }},
		{"badger", func(b *testing.B) checkpoint.Checkpointer {
			db, err := badger.Open(b.TempDir(), badger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db.Checkpointer()
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			eng := engine.New(g, be.open(b), engine.Options{RecursionLimit: stepsPerRun + 1})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			cpu := meterCPU(b)
			for i := 0; i < b.N; i++ {
				res, err := eng.Run(ctx, engine.Request{ThreadID: fmt.Sprint("t", i), Input: map[string]any{}}, nil)
				if err != nil || res.Steps != stepsPerRun {
					b.Fatalf("run: %v (%d steps)", err, res.Steps)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*stepsPerRun), "ns/step")
			cpu(stepsPerRun, "cpu-ns/step")
		})
	}
}

// TestConversationStorageIsLinear runs a 1,000-turn conversation on Badger and
// checks that the bytes stored for the thread stay within 3.25× the size of
// the final state: messages are stored once, as append deltas, not once per
// turn. (Each turn writes three checkpoint records, the input checkpoint,
// the start checkpoint and the step's, keeps its input with the first and
// stores it as a delta with the second; records are compact, see
// checkpoint.EncodeRecord, so with messages of about 150 bytes the input kept
// with its checkpoint is the bulk of what is stored beyond the state.)
func TestConversationStorageIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 turns; skipped with -short")
	}
	g := compileGraph(t, `
state: {
	messages: {type: "messages"}
	turns: {type: "int", reducer: "add"}
	last: {type: "string"}
}
start: "reply"
nodes: reply: {type: "enginetest", config: exprs: {
	messages: "[{role: 'assistant', content: 'You said: ' + messages[-1].content + '. Here is a considered answer of about the same length as a real one, with some detail.'}]"
	turns: "1"
	last: "messages[-1].content"
}, next: "END"}`)
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eng := engine.New(g, db.Checkpointer(), engine.Options{})
	ctx := context.Background()
	var final map[string]any
	for i := range 1000 {
		input, err := engine.TextInput(g, fmt.Sprintf("Message number %d from the user, asking about a dishwasher that leaks at night.", i))
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Run(ctx, engine.Request{ThreadID: "long", Input: input}, nil)
		if err != nil {
			t.Fatal(err)
		}
		final = res.State
	}
	stateJSON, _ := json.Marshal(final)
	stored, err := db.ThreadBytes(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(stored) / float64(len(stateJSON))
	t.Logf("1,000 turns: final state %d bytes, stored %d bytes, ratio %.2f", len(stateJSON), stored, ratio)
	if ratio > 3.25 {
		t.Fatalf("stored %d bytes for a final state of %d bytes: ratio %.2f > 3.25", stored, len(stateJSON), ratio)
	}
}
