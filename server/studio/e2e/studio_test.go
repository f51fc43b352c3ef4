package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const studioSpec = "studio.spec.mjs"

// TestStudioChat: open the Studio, pick the slot-filling graph, send a
// message, see the running node highlighted and the reply, a second turn
// on the same thread, and the State tab; then check the thread over the API.
func TestStudioChat(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	res := runSpec(t, node, studioSpec, "chat", f)
	thread, _ := res["thread_id"].(string)
	status, st := f.api(t, http.MethodGet, "/threads/"+thread+"/state", nil)
	if status != http.StatusOK || field(st, "values", "goal") != "diagnose_repair" || field(st, "values", "model") != "WDT780SAEM1" {
		t.Fatalf("thread %s state over the API: %d %v", thread, status, st)
	}
	if msgs, _ := field(st, "values", "messages").([]any); len(msgs) != 4 {
		t.Errorf("thread has %d messages, want the two turns (4)", len(msgs))
	}
}

// TestStudioStreamsTokens: a model's reply shows token by token.
func TestStudioStreamsTokens(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	res := runSpec(t, node, studioSpec, "stream", f, streamedReply)
	if n, _ := res["partials"].(float64); n < 3 {
		t.Errorf("the page showed %v partial replies, want the reply growing token by token", res["partials"])
	}
}

// TestStudioInterrupt: answer an interrupt from the form built from its
// payload and watch the run continue.
func TestStudioInterrupt(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	res := runSpec(t, node, studioSpec, "interrupt", f)
	thread, _ := res["thread_id"].(string)
	_, st := f.api(t, http.MethodGet, "/threads/"+thread+"/state", nil)
	if field(st, "values", "approved") != "yes" || len(field(st, "next").([]any)) != 0 {
		t.Fatalf("thread %s after answering: %v", thread, st)
	}
}

// TestStudioAnswerForms: the interrupt answer forms, one kind after the
// other: Reject on a yes/no field, a free-text answer, a JSON value (an
// invalid one is refused in the page first); the answers land in state.
func TestStudioAnswerForms(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	res := runSpec(t, node, studioSpec, "answerForms", f)
	thread, _ := res["thread_id"].(string)
	_, st := f.api(t, http.MethodGet, "/threads/"+thread+"/state", nil)
	values, _ := field(st, "values").(map[string]any)
	details, _ := json.Marshal(values["details"])
	if values["urgent"] != false || values["note"] != "ship it by Friday" || string(details) != `{"priority":2,"tags":["it"]}` {
		t.Fatalf("thread %s answers in state: urgent %v, note %v, details %s", thread, values["urgent"], values["note"], details)
	}
	if len(field(st, "next").([]any)) != 0 {
		t.Errorf("thread %s still has next nodes: %v", thread, field(st, "next"))
	}
}

// TestStudioMultiInterrupt: a thread waiting at two interrupts at once
// (parallel branches) shows both; each is answered from its own card.
func TestStudioMultiInterrupt(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	_, th := f.api(t, http.MethodPost, "/threads", map[string]any{"metadata": map[string]any{"graph_id": "parallel_approval"}})
	thread, _ := field(th, "thread_id").(string)
	status, out := f.api(t, http.MethodPost, "/threads/"+thread+"/runs/wait", map[string]any{"assistant_id": "parallel_approval",
		"input": map[string]any{"amount": 250, "purpose": "a team dinner"}})
	if status != http.StatusOK {
		t.Fatalf("run: %d %v", status, out)
	}
	if _, st := f.api(t, http.MethodGet, "/threads/"+thread+"/state", nil); len(field(st, "interrupts").([]any)) != 2 {
		t.Fatalf("thread %s should wait at two interrupts: %v", thread, field(st, "interrupts"))
	}
	runSpec(t, node, studioSpec, "multiInterrupt", f, thread)
	_, st := f.api(t, http.MethodGet, "/threads/"+thread+"/state", nil)
	if field(st, "values", "manager") != "approve" || field(st, "values", "finance") != "reject" || len(field(st, "interrupts").([]any)) != 0 {
		t.Fatalf("thread %s after both answers: %v", thread, st)
	}
}

// TestStudioDiagnostics: a graph file broken while the server runs shows
// its diagnostics in the page; the last good version stays.
func TestStudioDiagnostics(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	runSpec(t, node, studioSpec, "diagnostics", f)
}

// TestStudioThreadsAndStore: list, search and open threads; browse and
// search the store.
func TestStudioThreadsAndStore(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	var threads []string
	for _, text := range []string{"My dishwasher WDT780SAEM1 is leaking", "hello"} {
		_, th := f.api(t, http.MethodPost, "/threads", map[string]any{"metadata": map[string]any{"graph_id": "slot_filling"}})
		id, _ := field(th, "thread_id").(string)
		status, out := f.api(t, http.MethodPost, "/threads/"+id+"/runs/wait", map[string]any{"assistant_id": "slot_filling",
			"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}})
		if status != http.StatusOK {
			t.Fatalf("run: %d %v", status, out)
		}
		threads = append(threads, id)
	}
	for key, text := range map[string]string{"a": "likes green tea", "b": "drinks coffee every morning"} {
		if status, out := f.api(t, http.MethodPut, "/store/items", map[string]any{"namespace": []string{"memories", "u1"}, "key": key,
			"value": map[string]any{"text": text}}); status >= 300 {
			t.Fatalf("put store item: %d %v", status, out)
		}
	}
	runSpec(t, node, studioSpec, "browse", f, threads[0])
}

// TestStudioAPIKey: with API keys the page asks for one and works with it.
func TestStudioAPIKey(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t, "studio-key-1")
	runSpec(t, node, studioSpec, "apikey", f, "studio-key-1")
}

// TestStudioBreakpoint: pause before a node (clicked on the graph), then
// continue (LangGraph's run with input null).
func TestStudioBreakpoint(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	res := runSpec(t, node, studioSpec, "breakpoint", f)
	thread, _ := res["thread_id"].(string)
	_, st := f.api(t, http.MethodGet, "/threads/"+thread+"/state", nil)
	if field(st, "values", "goal") != "diagnose_repair" || len(field(st, "next").([]any)) != 0 {
		t.Fatalf("thread %s after continuing: %v", thread, st)
	}
}

// TestStudioTimeTravel: pick a past checkpoint on the timeline, see its
// state and diff, edit it and fork, regenerate the last step; then check
// the forked thread over the API.
func TestStudioTimeTravel(t *testing.T) {
	node := requireTools(t, true)
	f := newFixture(t)
	res := runSpec(t, node, studioSpec, "timetravel", f)
	thread, _ := res["thread_id"].(string)
	edited, _ := res["edited_checkpoint"].(string)
	_, st := f.api(t, http.MethodGet, "/threads/"+thread+"/state", nil)
	if field(st, "values", "goal") != "diagnose_repair" {
		t.Fatalf("forked thread state: %v", st)
	}
	msgs, _ := field(st, "values", "messages").([]any)
	last, _ := field(msgs[len(msgs)-1], "content").(string)
	if len(msgs) != 2 || !strings.Contains(last, "diagnose_repair") {
		t.Errorf("forked thread messages %v: want the user message and the diagnosis, not the first answer", msgs)
	}
	// The fork hangs off the edited checkpoint: walking the parents of the
	// state now reaches it.
	_, hist := f.api(t, http.MethodPost, "/threads/"+thread+"/history", map[string]any{"limit": 100})
	parent := map[string]string{}
	for _, h := range hist.([]any) {
		id, _ := field(h, "checkpoint_id").(string)
		p, _ := field(h, "parent_checkpoint_id").(string)
		parent[id] = p
	}
	found := false
	for id := field(st, "checkpoint_id").(string); id != ""; id = parent[id] {
		if id == edited {
			found = true
		}
	}
	if !found {
		t.Errorf("the state now does not descend from the edited checkpoint %s: %v", edited, parent)
	}
}
