package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/storage/badger"
)

// echoGraph answers every user message with "You said: <text> (#n)", n
// counting the replies the node has written in the test.
func echoGraph(t *testing.T, counter string) string {
	return fmt.Sprintf(`
state: {
	messages: {type: "messages"}
	turns: {type: "int", reducer: "add"}
}
start: "reply"
nodes: reply: {type: "enginetest", config: {counter: %q, emit: "typing", exprs: {
	messages: "[{role: 'assistant', content: 'You said: ' + messages[-1].content}]"
	turns: "1"
}}, next: "END"}`, counter)
}

// backends returns a fresh checkpointer of each kind.
func backends(t *testing.T) map[string]checkpoint.Checkpointer {
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return map[string]checkpoint.Checkpointer{"memory": memory.New(), "badger": db.Checkpointer()}
}

func userSays(text string) map[string]any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}
}

func contents(t *testing.T, state map[string]any) []string {
	t.Helper()
	var out []string
	for _, m := range state["messages"].([]any) {
		out = append(out, m.(map[string]any)["content"].(string))
	}
	return out
}

func history(t *testing.T, cp checkpoint.Checkpointer, thread string) []checkpoint.Checkpoint {
	t.Helper()
	h, err := cp.History(context.Background(), thread, checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func snapshot(t *testing.T, cp checkpoint.Checkpointer, thread, id string) map[string]any {
	t.Helper()
	snap, err := cp.Get(context.Background(), thread, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for k, raw := range snap.Values {
		var v any
		json.Unmarshal(raw, &v)
		out[k] = v
	}
	return out
}

// TestInputCheckpointBeforeEachTurn checks LangGraph's shape of a turn: an
// "input" checkpoint (step -1 on a new thread) with the state before the
// input and the start node next, the start checkpoint (step 0, source
// "loop") with the input applied and the start node next, then the step's
// checkpoint.
func TestInputCheckpointBeforeEachTurn(t *testing.T) {
	g := compileGraph(t, echoGraph(t, uniq(t)))
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	run(t, eng, engine.Request{ThreadID: "x", Input: userSays("hi")})
	run(t, eng, engine.Request{ThreadID: "x", Input: userSays("again")})
	h := history(t, cp, "x")
	type row struct {
		source checkpoint.Source
		step   int
		next   int
		msgs   int
	}
	var got []row
	for _, c := range h {
		msgs, _ := snapshot(t, cp, "x", c.ID)["messages"].([]any)
		got = append(got, row{c.Source, c.Step, len(c.Next), len(msgs)})
	}
	want := []row{{"loop", 4, 0, 4}, {"loop", 3, 1, 3}, {"input", 2, 1, 2}, {"loop", 1, 0, 2}, {"loop", 0, 1, 1}, {"input", -1, 1, 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("history (newest first) = %+v, want %+v", got, want)
	}
	for i := 0; i+1 < len(h); i++ {
		if h[i].ParentID != h[i+1].ID {
			t.Fatalf("checkpoint %d's parent is %s, want %s", i, h[i].ParentID, h[i+1].ID)
		}
	}
	if in := h[2]; string(in.Input) == "" || !strings.Contains(string(in.Input), "again") {
		t.Fatalf("input checkpoint keeps no pending input: %s", in.Input)
	}
	if start := h[1]; len(start.Input) != 0 || !slices.Equal(start.Writers, []string{"input"}) || start.Next[0].Node != "reply" {
		t.Fatalf("start checkpoint: input %s, writers %v, next %v; want the input applied, reply next", start.Input, start.Writers, start.Next)
	}
}

// TestRegenerateAndEditForkTheThread runs from past checkpoints as the
// LangGraph UIs do: regenerate the last answer (continue with no input from
// its turn's start checkpoint, the first in which its question shows) and
// edit an earlier message (new input from the input checkpoint before it). Each fork becomes the thread's state; the old
// branches stay intact in the history, on both backends.
func TestRegenerateAndEditForkTheThread(t *testing.T) {
	for name, cp := range backends(t) {
		t.Run(name, func(t *testing.T) {
			counter := uniq(t)
			g := compileGraph(t, echoGraph(t, counter))
			eng := engine.New(g, cp, engine.Options{})
			run(t, eng, engine.Request{ThreadID: "x", Input: userSays("one")})
			first, _ := run(t, eng, engine.Request{ThreadID: "x", Input: userSays("two")})
			oldHead := first.CheckpointID
			h := history(t, cp, "x")
			turn2Start := h[1]
			if turn2Start.Source != "loop" || len(turn2Start.Next) != 1 || h[2].Source != "input" {
				t.Fatalf("history[1] is %s next %v, want the start checkpoint of turn 2", turn2Start.Source, turn2Start.Next)
			}
			human := first.State["messages"].([]any)[2].(map[string]any)

			// Regenerate: continue from turn 2's start checkpoint; its input
			// is applied once.
			regen, rec := run(t, eng, engine.Request{ThreadID: "x", CheckpointID: turn2Start.ID})
			if regen.Status != engine.StatusCompleted || count(counter) != 3 {
				t.Fatalf("regenerate: %s %v, reply ran %d times (want 3)", regen.Status, regen.Err, count(counter))
			}
			msgs := regen.State["messages"].([]any)
			if got := contents(t, regen.State); !slices.Equal(got, []string{"one", "You said: one", "two", "You said: two"}) {
				t.Fatalf("regenerated messages = %q", got)
			}
			if msgs[2].(map[string]any)["id"] != human["id"] {
				t.Fatalf("the replayed user message changed id: %v, was %v", msgs[2].(map[string]any)["id"], human["id"])
			}
			if old := first.State["messages"].([]any)[3].(map[string]any)["id"]; msgs[3].(map[string]any)["id"] == old {
				t.Fatal("the regenerated answer has the old answer's id")
			}
			if regen.State["turns"] != 2 {
				t.Fatalf("turns = %v after regenerating, want 2", regen.State["turns"])
			}
			latest, err := cp.Latest(context.Background(), "x")
			if err != nil || latest.ID != regen.CheckpointID || latest.ParentID != turn2Start.ID {
				t.Fatalf("latest = %+v (%v), want the regenerated step whose parent is %s", latest, err, turn2Start.ID)
			}
			if !slices.Contains(rec.types(), event.Checkpoint) {
				t.Fatal("no checkpoint event")
			}

			// Edit the first message: new input from turn 1's input checkpoint.
			turn1Input := history(t, cp, "x")[len(history(t, cp, "x"))-1]
			edit, _ := run(t, eng, engine.Request{ThreadID: "x", CheckpointID: turn1Input.ID, Input: userSays("uno")})
			if got := contents(t, edit.State); !slices.Equal(got, []string{"uno", "You said: uno"}) || edit.State["turns"] != 1 {
				t.Fatalf("edited branch = %q, turns %v", got, edit.State["turns"])
			}
			// The old branches are intact.
			if got := contents(t, snapshot(t, cp, "x", oldHead)); !slices.Equal(got, []string{"one", "You said: one", "two", "You said: two"}) {
				t.Fatalf("old head now holds %q", got)
			}
			// Continuing the edited branch, then the old one, never mixes them.
			next, _ := run(t, eng, engine.Request{ThreadID: "x", Input: userSays("dos")})
			if got := contents(t, next.State); !slices.Equal(got, []string{"uno", "You said: uno", "dos", "You said: dos"}) {
				t.Fatalf("edited branch continued = %q", got)
			}
			back, _ := run(t, eng, engine.Request{ThreadID: "x", CheckpointID: oldHead, Input: userSays("three")})
			if got := contents(t, back.State); !slices.Equal(got, []string{"one", "You said: one", "two", "You said: two", "three", "You said: three"}) {
				t.Fatalf("old branch continued = %q", got)
			}
			if got := contents(t, snapshot(t, cp, "x", next.CheckpointID)); !slices.Equal(got, []string{"uno", "You said: uno", "dos", "You said: dos"}) {
				t.Fatalf("edited branch after the old one went on = %q", got)
			}
			if _, err := eng.Run(context.Background(), engine.Request{ThreadID: "x", CheckpointID: "nope"}, nil); err == nil || !strings.Contains(err.Error(), "no checkpoint \"nope\"") {
				t.Fatalf("unknown checkpoint: %v", err)
			}
		})
	}
}

// TestContinueAfterBreakpointAndUpdate checks that a run with no input goes
// on from the checkpoint: past an interrupt_before stop, and after an update
// of the state.
func TestContinueAfterBreakpointAndUpdate(t *testing.T) {
	c := uniq(t)
	g := compileGraph(t, fmt.Sprintf(`
state: {
	draft: {type: "string"}
	out: {type: "string"}
}
start: "write"
nodes: {
	write: {type: "enginetest", config: write: draft: "first draft", next: "publish"}
	publish: {type: "enginetest", config: {counter: "%[1]s/publish", exprs: out: "'published ' + draft"}, next: "END"}
}`, c))
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}, InterruptBefore: []string{"publish"}})
	if res.Status != engine.StatusInterrupted || res.Breakpoint == nil || res.Breakpoint.When != "before" {
		t.Fatalf("first run: %s %+v", res.Status, res.Breakpoint)
	}
	if _, err := eng.UpdateState(context.Background(), "x", "", map[string]any{"draft": "edited draft"}); err != nil {
		t.Fatal(err)
	}
	// The thread stays stopped at the breakpoint, as in LangGraph.
	if snap, err := cp.Latest(context.Background(), "x"); err != nil || engine.StoppedAt(&snap.Checkpoint) == nil {
		t.Fatalf("after the update: next %+v metadata %v (%v)", snap.Next, snap.Metadata, err)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "x"})
	if res.Status != engine.StatusCompleted || res.State["out"] != "published edited draft" || count(c+"/publish") != 1 {
		t.Fatalf("continue: %s out=%v publish ran %d (%v)", res.Status, res.State["out"], count(c+"/publish"), res.Err)
	}

	// Updating as the stopped node skips it: its successors are next.
	res, _ = run(t, eng, engine.Request{ThreadID: "y", Input: map[string]any{}, InterruptBefore: []string{"publish"}})
	if _, err := eng.UpdateState(context.Background(), "y", "publish", map[string]any{"out": "by hand"}); err != nil {
		t.Fatal(err)
	}
	snap, _ := cp.Latest(context.Background(), "y")
	if len(snap.Next) != 0 || len(snap.Interrupts) != 0 {
		t.Fatalf("after updating as publish: next %v interrupts %v, want none", snap.Next, snap.Interrupts)
	}
	res, _ = run(t, eng, engine.Request{ThreadID: "y"})
	if res.State["out"] != "by hand" || count(c+"/publish") != 1 {
		t.Fatalf("out = %v, publish ran %d times", res.State["out"], count(c+"/publish"))
	}
}

// TestNewInputWhileWaitingStartsOver checks LangGraph's rule: new input on a
// thread waiting at an interrupt drops the interrupt and starts a new turn.
func TestNewInputWhileWaitingStartsOver(t *testing.T) {
	g := compileGraph(t, `
state: {
	answer: {type: "string"}
	topic: {type: "string"}
}
start: "ask"
nodes: ask: {type: "enginetest", config: interrupt: "answer", next: "END"}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	first, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{"topic": "a"}})
	second, _ := run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{"topic": "b"}})
	if second.Status != engine.StatusInterrupted || second.State["topic"] != "b" || second.Interrupts[0].ID == first.Interrupts[0].ID {
		t.Fatalf("new input while waiting: %s topic=%v interrupts %v (first %v) err %v",
			second.Status, second.State["topic"], second.Interrupts, first.Interrupts, second.Err)
	}
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: map[string]any{second.Interrupts[0].ID: "yes"}}})
	if res.Status != engine.StatusCompleted || res.State["answer"] != "yes" {
		t.Fatalf("resume by id map: %s %v (%v)", res.Status, res.State, res.Err)
	}
}

// TestCommandUpdateAndGoto checks LangGraph's Command(update, goto): the
// update is written through the reducers, the goto node runs next.
func TestCommandUpdateAndGoto(t *testing.T) {
	g := compileGraph(t, `
state: {
	answer: {type: "string"}
	log: {type: "list<string>", reducer: "append"}
}
start: "ask"
nodes: {
	ask: {type: "enginetest", config: interrupt: "answer", routes: [{when: "answer == 'special'", to: "special"}], default: "normal"}
	normal: {type: "enginetest", config: write: log: ["normal"], next: "END"}
	special: {type: "enginetest", config: exprs: log: "['special after ' + answer]", next: "END"}
}`)
	eng := engine.New(g, memory.New(), engine.Options{})
	run(t, eng, engine.Request{ThreadID: "x", Input: map[string]any{}})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: "yes"},
		Update: map[string]any{"log": []any{"updated"}}, Goto: []engine.Goto{{Node: "special"}}})
	if res.Status != engine.StatusCompleted {
		t.Fatalf("resume with command: %s %v", res.Status, res.Err)
	}
	if got := res.State["log"].([]any); !slices.Equal(got, []any{"updated", "normal", "special after yes"}) {
		t.Fatalf("log = %v", got)
	}
	// Goto alone on a finished thread runs that node.
	res, _ = run(t, eng, engine.Request{ThreadID: "x", Goto: []engine.Goto{{Node: "normal"}}})
	if got := res.State["log"].([]any); res.Status != engine.StatusCompleted || got[len(got)-1] != "normal" || len(got) != 4 {
		t.Fatalf("goto: %s log = %v (%v)", res.Status, got, res.Err)
	}
	// An update alone writes a checkpoint and runs nothing.
	res, _ = run(t, eng, engine.Request{ThreadID: "x", Update: map[string]any{"answer": "changed"}})
	if res.State["answer"] != "changed" || len(res.Path) != 0 {
		t.Fatalf("update alone: answer %v path %v", res.State["answer"], res.Path)
	}
	if _, err := eng.Run(context.Background(), engine.Request{ThreadID: "x", Goto: []engine.Goto{{Node: "nowhere"}}}, nil); err == nil || !strings.Contains(err.Error(), `goto "nowhere"`) {
		t.Fatalf("goto an unknown node: %v", err)
	}
}

// TestStreamedTextCarriesTheStoredMessageID checks that a node's text
// events name the id its message has in state.
func TestStreamedTextCarriesTheStoredMessageID(t *testing.T) {
	g := compileGraph(t, echoGraph(t, uniq(t)))
	eng := engine.New(g, memory.New(), engine.Options{})
	res, rec := run(t, eng, engine.Request{ThreadID: "x", Input: userSays("hi")})
	msgs := res.State["messages"].([]any)
	stored := msgs[1].(map[string]any)["id"]
	var streamed []any
	for _, ev := range rec.events {
		if ev.Type == event.Text {
			streamed = append(streamed, ev.Payload["message_id"])
		}
	}
	if len(streamed) != 1 || streamed[0] != stored {
		t.Fatalf("text events name %v, the stored reply has id %v", streamed, stored)
	}
	if id, _ := msgs[0].(map[string]any)["id"].(string); len(id) != 36 {
		t.Fatalf("the user message has id %q, want a UUID", id)
	}
	for _, ev := range rec.events {
		if ev.Type == event.NodeEnd && ev.Detail["turns"] != 1 {
			t.Fatalf("node_end detail = %v, want the full update", ev.Detail)
		}
	}
}

// TestBulkUpdateSupersteps applies supersteps as LangGraph's
// bulk_update_state does: as input, as nodes, a copy, and a clear.
func TestBulkUpdateSupersteps(t *testing.T) {
	g := compileGraph(t, echoGraph(t, uniq(t)))
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	ctx := context.Background()
	last, err := eng.BulkUpdateState(ctx, "x", "", [][]engine.StateUpdate{
		{{AsNode: engine.AsInput, Values: userSays("hi")}},
		{{AsNode: "reply", Values: map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": "hi"}, map[string]any{"role": "assistant", "content": "hello"}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := history(t, cp, "x")
	if len(h) != 2 || h[1].Source != "input" || h[1].Step != -1 || h[0].Source != "update" || h[0].ID != last.ID || len(h[0].Next) != 0 {
		t.Fatalf("history after bulk update = %+v", h)
	}
	if got := contents(t, snapshot(t, cp, "x", last.ID)); !slices.Equal(got, []string{"hi", "hello"}) {
		t.Fatalf("values = %q", got)
	}
	// A copy of the input checkpoint beside it, with its pending input; running it answers.
	cpy, err := eng.BulkUpdateState(ctx, "x", h[1].ID, [][]engine.StateUpdate{{{AsNode: engine.AsCopy}}})
	if err != nil || cpy.ParentID != h[1].ParentID || cpy.Source != "fork" || string(cpy.Input) != string(h[1].Input) {
		t.Fatalf("copy = %+v (%v)", cpy, err)
	}
	res, _ := run(t, eng, engine.Request{ThreadID: "x"})
	if got := contents(t, res.State); !slices.Equal(got, []string{"hi", "You said: hi"}) {
		t.Fatalf("run from the copy = %q", got)
	}
	// Clearing the tasks of a thread stopped before a node.
	run(t, eng, engine.Request{ThreadID: "x", Input: userSays("stop"), InterruptBefore: []string{"reply"}})
	end, err := eng.BulkUpdateState(ctx, "x", "", [][]engine.StateUpdate{{{AsNode: engine.AsEnd}}})
	if err != nil || len(end.Next) != 0 || len(end.Interrupts) != 0 {
		t.Fatalf("as __end__: %+v (%v)", end, err)
	}
	for _, bad := range []struct {
		steps [][]engine.StateUpdate
		want  string
	}{
		{nil, "no supersteps"},
		{[][]engine.StateUpdate{{}}, "superstep 0 has no updates"},
		{[][]engine.StateUpdate{{{AsNode: "nope"}}}, `no node "nope"`},
		{[][]engine.StateUpdate{{{AsNode: engine.AsInput}, {AsNode: "reply"}}}, "must be the superstep's only update"},
		{[][]engine.StateUpdate{{{AsNode: "reply", Values: map[string]any{"unknown": 1}}}}, `field "unknown"`},
	} {
		if _, err := eng.BulkUpdateState(ctx, "x", "", bad.steps); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("bulk update %v: error %v, want %q", bad.steps, err, bad.want)
		}
	}
}

// TestCancelRecordsNoError checks that a cancelled run leaves no error with
// the thread, unlike a failed one.
func TestCancelRecordsNoError(t *testing.T) {
	g := compileGraph(t, `
state: out: {type: "string"}
start: "slow"
nodes: slow: {type: "enginetest", config: {sleep: "10s", write: out: "done"}, next: "END"}`)
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *engine.Result)
	go func() {
		res, _ := eng.Run(ctx, engine.Request{ThreadID: "x", Input: map[string]any{}}, func(ev event.Event) {
			if ev.Type == event.NodeStart {
				cancel()
			}
		})
		done <- res
	}()
	res := <-done
	if res.Status != engine.StatusError {
		t.Fatalf("cancelled run: %s", res.Status)
	}
	snap, err := cp.Latest(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, pw := range snap.Pending {
		if pw.Kind == "error" {
			t.Fatalf("a cancelled run recorded an error: %s", pw.Update)
		}
	}
}

// TestRefusedRequestRecordsNoError checks that a request the engine refuses
// (a resume with nothing to answer) leaves the thread as it was: no failure
// is recorded with it.
func TestRefusedRequestRecordsNoError(t *testing.T) {
	g := compileGraph(t, echoGraph(t, uniq(t)))
	cp := memory.New()
	eng := engine.New(g, cp, engine.Options{})
	run(t, eng, engine.Request{ThreadID: "x", Input: userSays("hi")})
	res, _ := run(t, eng, engine.Request{ThreadID: "x", Resume: &engine.Resume{Value: "yes"}})
	if res.Status != engine.StatusError || !strings.Contains(res.Err.Error(), "no pending interrupt") {
		t.Fatalf("resume with nothing pending: %s %v", res.Status, res.Err)
	}
	snap, _ := cp.Latest(context.Background(), "x")
	if len(snap.Pending) != 0 {
		t.Fatalf("a refused resume left writes: %+v", snap.Pending)
	}
}
