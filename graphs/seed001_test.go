package graphs_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
)

// Seed 001 — ExecutionContracts in the cognitive graph — walked criterion by
// criterion against graphs/cognitive.cue through the chat endpoints.

// bookingRequest is a reasoning reply that asks the user to confirm a booking.
func bookingRequest() llmtest.Reply {
	return llmtest.JSON(map[string]any{
		"response": "I can book that. Please confirm the details.",
		"ecs_request": map[string]any{"title": "Book a table at Sushi Dai", "form": map[string]any{"fields": []any{
			map[string]any{"name": "time", "label": "Time", "required": true},
			map[string]any{"name": "guests", "label": "Guests", "type": "number", "required": true},
		}}},
	})
}

// contracts returns a session's contracts by id.
func (s *shipped) contracts(session string) map[string]map[string]any {
	s.t.Helper()
	out := map[string]map[string]any{}
	list, _ := s.state(session)["contracts"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		id, _ := m["id"].(string)
		out[id] = m
	}
	return out
}

// checkpointID returns the id of a session's latest checkpoint.
func (s *shipped) checkpointID(session string) string {
	s.t.Helper()
	code, st := s.do("GET", "/threads/"+session+"/state", nil)
	if code != http.StatusOK {
		s.t.Fatalf("state of %s: %d %v", session, code, st)
	}
	id, _ := st["checkpoint_id"].(string)
	if id == "" {
		if cfg, ok := st["checkpoint"].(map[string]any); ok {
			id, _ = cfg["checkpoint_id"].(string)
		}
	}
	return id
}

// TestSeed001_AC7_ResumeRequiresAWaitingContract: /ecs/continue validates,
// in the session's current state, that the contract it answers is WAITING.
// A contract the client cancelled after answering gets 409 and nothing
// changes: no run, no new checkpoint, the answer still stored.
func TestSeed001_AC7_ResumeRequiresAWaitingContract(t *testing.T) {
	s, model := cognitiveServer(t, bookingRequest())
	evs := s.say("ecs-cancel", "kai", "Book a table for two at Sushi Dai tomorrow at 7pm")
	hitl := evs.of("hitl")
	if len(hitl) != 1 {
		t.Fatalf("events %v, want a hitl request", evs)
	}
	id, _ := hitl[0].Payload["contract_id"].(string)
	if c := s.contracts("ecs-cancel")[id]; c["status"] != "WAITING" {
		t.Fatalf("contract %s is %v, want WAITING", id, c)
	}
	if code, out := s.do("POST", "/ecs/respond", map[string]any{"session_id": "ecs-cancel", "contract_id": id,
		"response": map[string]any{"time": "19:00", "guests": 2}}); code != http.StatusOK {
		t.Fatalf("ecs respond: %d %v", code, out)
	}
	// The client cancels the request (LangGraph's update-state API); the
	// thread still has its pending interrupt.
	if code, out := s.do("POST", "/threads/ecs-cancel/state", map[string]any{"values": map[string]any{
		"contracts": []any{map[string]any{"id": id, "status": "CANCELLED"}}}}); code != http.StatusOK {
		t.Fatalf("cancel the contract: %d %v", code, out)
	}
	before := s.checkpointID("ecs-cancel")
	_, runsBefore := s.do("GET", "/threads/ecs-cancel/runs", nil)

	code, out := s.chatPost("/ecs/continue", map[string]any{"session_id": "ecs-cancel"})
	if code != http.StatusConflict {
		t.Fatalf("continue with a CANCELLED contract: status %d %v, want 409", code, out)
	}
	if body, _ := out[0].Payload["body"].(string); !strings.Contains(body, "CANCELLED, not WAITING") {
		t.Errorf("409 body %s, want it to say the contract is CANCELLED, not WAITING", body)
	}
	if after := s.checkpointID("ecs-cancel"); after != before {
		t.Errorf("checkpoint moved from %s to %s on a refused continue", before, after)
	}
	if _, runsAfter := s.do("GET", "/threads/ecs-cancel/runs", nil); !equalJSON(runsAfter, runsBefore) {
		t.Errorf("runs changed on a refused continue:\nbefore %v\nafter  %v", runsBefore, runsAfter)
	}
	if c := s.contracts("ecs-cancel")[id]; c["status"] != "CANCELLED" || c["result"] != nil {
		t.Errorf("contract after a refused continue: %v", c)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want only the first turn's", n)
	}
	// The answer is still stored: refusing consumed nothing.
	// (The server's own namespace is closed to the store API: read the data dir.)
	if item, err := s.ws.Store().Get(t.Context(), []string{"graphctl", "ecs"}, "ecs-cancel"); err != nil || item.Value["response"] == nil {
		t.Errorf("the stored answer is gone after a refused continue: %v %v", item, err)
	}
	// Answering again is refused the same way.
	if code, _ := s.do("POST", "/ecs/respond", map[string]any{"session_id": "ecs-cancel", "response": map[string]any{"time": "20:00", "guests": 2}}); code != http.StatusConflict {
		t.Errorf("respond to a CANCELLED contract: %d, want 409", code)
	}
}
