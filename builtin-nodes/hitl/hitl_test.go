package hitl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	_ "github.com/graphctl/graphctl/builtin-nodes/flow"
	"github.com/graphctl/graphctl/builtin-nodes/hitl"
	"github.com/graphctl/graphctl/runtime"
	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/checkpoint/memory"
	"github.com/graphctl/graphctl/runtime/compile"
	"github.com/graphctl/graphctl/runtime/engine"
	"github.com/graphctl/graphctl/runtime/event"
	"github.com/graphctl/graphctl/runtime/node"
)

const header = `dsl_version: "graphctl/v1"
name: "hitl"
state: {
	contracts: {type: "contracts"}
	answer: {type: "any"}
	request: {type: "object"}
	after: {type: "string"}
	who: {type: "string", default: "Ana"}
}
start: "ask"
`

// flowGraph routes ask → resume → after; resume sends a rejected answer back
// to ask, which asks again.
const flowGraph = header + `nodes: {
	ask: {type: "hitl", config: {response_field: "answer", request_field: "request", title: "Details for ${who}",
		form: {fields: [{name: "note"}]}},
		routes: [{when: "len(contracts) == 0 && len(request) == 0", to: "END"}], default: "resume"}
	resume: {type: "hitl_resume", config: response_field: "answer",
		catch: [{on: ["invalid_response"], to: "ask"}], next: "after"}
	after: {type: "set", config: set: after: "'ran'", next: "END"}
}`

func compileGraph(t *testing.T, src string) *compile.Graph {
	t.Helper()
	g, diags := runtime.LoadSource("hitl.cue", []byte(src))
	if diags.HasErrors() || g == nil {
		t.Fatalf("graph does not compile:\n%v", diags)
	}
	return g
}

type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) sink(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) last(typ string) (event.Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Type == typ {
			return r.events[i], true
		}
	}
	return event.Event{}, false
}

func contractIn(t *testing.T, res *engine.Result, id string) map[string]any {
	t.Helper()
	items, _ := res.State["contracts"].([]any)
	for _, item := range items {
		if c := item.(map[string]any); c["id"] == id {
			return c
		}
	}
	t.Fatalf("no contract %q in %v", id, res.State["contracts"])
	return nil
}

var planForm = map[string]any{"fields": []any{
	map[string]any{"name": "key", "label": "Key", "required": true},
	map[string]any{"name": "value", "label": "Value", "required": true},
	map[string]any{"name": "category", "options": []any{"plan", "note"}},
}}

func ecs(id string, args map[string]any) map[string]any {
	return map[string]any{"id": id, "action_type": "ecs_request", "status": "PENDING", "arguments": args}
}

// statuses lists the contract's status in every checkpoint of the thread,
// oldest first, without consecutive repeats.
func statuses(t *testing.T, cp checkpoint.Checkpointer, thread, id string) []string {
	t.Helper()
	ctx := context.Background()
	hist, err := cp.History(ctx, thread, checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(hist) - 1; i >= 0; i-- {
		snap, err := cp.Get(ctx, thread, hist[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		var contracts []map[string]any
		// An input checkpoint holds the turn's input, not yet applied.
		var input struct {
			Contracts []map[string]any `json:"contracts"`
		}
		if len(snap.Input) > 0 {
			if err := json.Unmarshal(snap.Input, &input); err != nil {
				t.Fatal(err)
			}
			contracts = input.Contracts
		}
		if raw, ok := snap.Values["contracts"]; ok && len(snap.Input) == 0 {
			if err := json.Unmarshal(raw, &contracts); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range contracts {
			if c["id"] == id {
				if s, _ := c["status"].(string); len(out) == 0 || out[len(out)-1] != s {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func TestAskInterruptResumeCompletes(t *testing.T) {
	tests := []struct {
		name    string
		input   map[string]any
		id      string
		title   string
		form    map[string]any
		answers []any // resume values, in order; all but the last are rejected
		reject  string
	}{
		{
			name:    "contract with its own form",
			input:   map[string]any{"contracts": []any{ecs("e1", map[string]any{"title": "保存计划到日程", "form": planForm, "message": "Save this?"})}},
			id:      "e1",
			title:   "保存计划到日程",
			form:    planForm,
			answers: []any{map[string]any{"key": "trip", "value": "Kyoto", "category": "plan"}},
		},
		{
			name:    "default form and templated title",
			input:   map[string]any{"contracts": []any{ecs("e2", nil)}},
			id:      "e2",
			title:   "Details for Ana",
			form:    map[string]any{"fields": []any{map[string]any{"name": "note"}}},
			answers: []any{map[string]any{"note": "ok"}},
		},
		{
			name:    "missing field, answered again",
			input:   map[string]any{"contracts": []any{ecs("e3", map[string]any{"form": planForm})}},
			id:      "e3",
			title:   "Details for Ana",
			form:    planForm,
			answers: []any{map[string]any{"key": "trip"}, map[string]any{"key": "trip", "value": "x", "category": "other"}, map[string]any{"key": "trip", "value": "x"}},
			reject:  "missing required fields: value",
		},
		{
			name:    "request field",
			input:   map[string]any{"request": map[string]any{"id": "r1", "title": "Pick", "form": planForm}},
			id:      "r1",
			title:   "Pick",
			form:    planForm,
			answers: []any{map[string]any{"key": "a", "value": "b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := memory.New()
			eng := engine.New(compileGraph(t, flowGraph), cp, engine.Options{})
			rec := &recorder{}
			res, _ := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: tt.input}, rec.sink)
			if res.Status != engine.StatusInterrupted || len(res.Interrupts) != 1 {
				t.Fatalf("status %s, interrupts %v, err %v", res.Status, res.Interrupts, res.Err)
			}
			if c := contractIn(t, res, tt.id); c["status"] != "WAITING" {
				t.Fatalf("contract after ask: %v", c)
			}
			in := res.Interrupts[0]
			if in.Field != "answer" || in.Payload["contract_id"] != tt.id || in.Payload["title"] != tt.title ||
				fmt.Sprint(in.Payload["form"]) != fmt.Sprint(tt.form) {
				t.Errorf("interrupt %+v", in)
			}
			ev, ok := rec.last(hitl.EventType)
			if !ok || fmt.Sprint(ev.Payload) != fmt.Sprint(in.Payload) {
				t.Errorf("hitl event %v, want the interrupt payload %v", ev.Payload, in.Payload)
			}
			for i, answer := range tt.answers {
				rec = &recorder{}
				res, _ = eng.Run(context.Background(), engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: answer}}, rec.sink)
				if i < len(tt.answers)-1 {
					// rejected: the catch routes back to ask, which asks again
					if res.Status != engine.StatusInterrupted {
						t.Fatalf("answer %d: status %s (%v), want a new interrupt", i, res.Status, res.Err)
					}
					if c := contractIn(t, res, tt.id); c["status"] != "WAITING" {
						t.Fatalf("answer %d: rejected answer changed the contract: %v", i, c)
					}
					// The form is asked again, saying what was wrong.
					ev, _ := rec.last(hitl.EventType)
					if problem, _ := ev.Payload["error"].(string); i == 0 && tt.reject != "" && !strings.Contains(problem, tt.reject) {
						t.Errorf("answer %d: the form asked again says %q, want %q", i, problem, tt.reject)
					}
					if again := res.Interrupts[0].Payload; again["error"] != ev.Payload["error"] || again["contract_id"] != tt.id {
						t.Errorf("answer %d: interrupt %v, want the re-asked request", i, again)
					}
					continue
				}
				if res.Status != engine.StatusCompleted {
					t.Fatalf("final answer: status %s: %v", res.Status, res.Err)
				}
			}
			c := contractIn(t, res, tt.id)
			if c["status"] != "COMPLETED" || fmt.Sprint(c["result"]) != fmt.Sprint(tt.answers[len(tt.answers)-1]) {
				t.Errorf("contract after resume: %v", c)
			}
			if res.State["after"] != "ran" {
				t.Errorf("the graph did not go on after hitl_resume")
			}
			// RUNNING is written in the same update as COMPLETED: the contracts
			// reducer rejects WAITING → COMPLETED, so reaching COMPLETED proves it.
			want := "PENDING,WAITING,COMPLETED"
			if tt.input["contracts"] == nil { // created by ask from the request field
				want = "WAITING,COMPLETED"
			}
			if got := strings.Join(statuses(t, cp, "t", tt.id), ","); got != want {
				t.Errorf("statuses across checkpoints: %s, want %s", got, want)
			}
		})
	}
}

// plainGraph routes ask → resume with no catch.
const plainGraph = header + `nodes: {
	ask: {type: "hitl", config: response_field: "answer", next: "resume"}
	resume: {type: "hitl_resume", config: response_field: "answer", next: "END"}
}`

func TestResumeWithoutWaitingContract(t *testing.T) {
	eng := engine.New(compileGraph(t, plainGraph), memory.New(), engine.Options{})
	// Nothing to ask: ask routes on, and resume finds no waiting contract.
	res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: map[string]any{}}, nil)
	if err == nil || node.CodeOf(err) != "invalid_state" || !strings.Contains(err.Error(), "no contract is waiting for a response") {
		t.Fatalf("status %s err %v, want invalid_state", res.Status, err)
	}
}

func TestInvalidResponseWithoutCatch(t *testing.T) {
	eng := engine.New(compileGraph(t, plainGraph), memory.New(), engine.Options{})
	input := map[string]any{"contracts": []any{ecs("e", map[string]any{"form": planForm})}}
	if res, _ := eng.Run(context.Background(), engine.Request{ThreadID: "t", Input: input}, nil); res.Status != engine.StatusInterrupted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	tests := []struct {
		answer any
		want   string
	}{
		{map[string]any{"category": "plan"}, "missing required fields: key, value"},
	}
	for _, tt := range tests {
		res, err := eng.Run(context.Background(), engine.Request{ThreadID: "t", Resume: &engine.Resume{Value: tt.answer}}, nil)
		if node.CodeOf(err) != "invalid_response" || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("err %v, want invalid_response with %q", err, tt.want)
		}
		if c := contractIn(t, res, "e"); c["status"] != "WAITING" {
			t.Errorf("contract: %v", c)
		}
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"undeclared response field", `{response_field: "reply"}`, `writes "reply", which is not a declared state field`},
		{"contracts field of wrong type", `{response_field: "answer", contracts_field: "after"}`, "not contracts"},
		{"request field of wrong type", `{response_field: "answer", request_field: "after"}`, "declare it as object"},
		{"bad default form", `{response_field: "answer", form: {fields: [{label: "x"}]}}`, "has no name"},
		{"unknown title field", `{response_field: "answer", title: "${nobody}"}`, "nobody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := header + fmt.Sprintf(`nodes: ask: {type: "hitl", config: %s, next: "END"}`, tt.config)
			_, diags := runtime.LoadSource("v.cue", []byte(src))
			if !diags.HasErrors() || !strings.Contains(fmt.Sprint(diags), tt.want) {
				t.Fatalf("want an error containing %q, got:\n%v", tt.want, diags)
			}
		})
	}
}
