package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/graphctl/graphctl/runtime/checkpoint"
)

// TestLangGraphJSBreakpoints runs .ci/langgraph-sdk/breakpoints.mjs: static
// breakpoints (interruptBefore, interruptAfter) through the official
// client, as the Agent Server shows them, on the review and approve test
// graphs.
func TestLangGraphJSBreakpoints(t *testing.T) {
	sdk := requireJSClient(t)
	f := newGraphFixture(t, testGraphsDir(t, "review.cue", "approve.cue"), nil)
	sdk.run(t, "breakpoints.mjs", f.http.URL)
}

// TestLegacyBreakpointThread checks a thread that an earlier version
// stopped at a breakpoint, recorded as an interrupt before the next task:
// it shows as a breakpoint (interrupted, no interrupts) and input null
// goes on from it.
func TestLegacyBreakpointThread(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	input := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "old"}}}
	if code, out := f.do(http.MethodPost, "/threads", map[string]any{"thread_id": "legacy"}); code != http.StatusOK {
		t.Fatalf("create thread: %d %v", code, out)
	}
	if code, out := f.do(http.MethodPost, "/threads/legacy/runs/wait", map[string]any{"assistant_id": "review", "input": input, "interrupt_before": []string{"check"}}); code != http.StatusOK {
		t.Fatalf("run: %d %v", code, out)
	}
	snap, err := f.srv.cp.Latest(ctx, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	old := snap.Checkpoint
	old.ID, old.ParentID, old.Metadata = checkpoint.NewID(), snap.ID, map[string]any{"run_id": "old-run"}
	old.Interrupts = []checkpoint.Interrupt{{ID: "check-before-1a2b", Node: "check", TaskID: "check", When: "before"}}
	if err := f.srv.cp.Put(ctx, old, nil); err != nil {
		t.Fatal(err)
	}

	_, thread := f.do(http.MethodGet, "/threads/legacy", nil)
	th := thread.(map[string]any)
	if th["status"] != "interrupted" || len(th["interrupts"].(map[string]any)) != 0 {
		t.Fatalf("thread: status %v interrupts %v", th["status"], th["interrupts"])
	}
	_, state := f.do(http.MethodGet, "/threads/legacy/state", nil)
	st := state.(map[string]any)
	got, _ := json.Marshal([]any{st["next"], st["interrupts"], st["tasks"].([]any)[0].(map[string]any)["interrupts"]})
	if string(got) != `[["check"],[],[]]` {
		t.Fatalf("state: next, interrupts, tasks[0].interrupts = %s", got)
	}
	code, out := f.do(http.MethodPost, "/threads/legacy/runs/wait", map[string]any{"assistant_id": "review", "input": nil})
	msgs, _ := out.(map[string]any)["messages"].([]any)
	if code != http.StatusOK || len(msgs) != 4 || msgs[3].(map[string]any)["content"] != "Published." {
		t.Fatalf("input null: %d %v", code, out)
	}
	if _, thread := f.do(http.MethodGet, "/threads/legacy", nil); thread.(map[string]any)["status"] != "idle" {
		t.Fatalf("thread after going on: %v", thread)
	}
}
