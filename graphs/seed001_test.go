package graphs_test

import (
	"fmt"
	"net/http"
	"slices"
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

// TestSeed001_AC1_SuccessfulToolExecutionThroughAContract: the tool call is
// an ExecutionContract moved PENDING → COMPLETED by the tool node (RUNNING
// while it runs), with the output in result and the observation kept for
// older clients, and a tool_result event.
func TestSeed001_AC1_SuccessfulToolExecutionThroughAContract(t *testing.T) {
	s, _ := cognitiveServer(t, calcReplies("6 * 7", "6 × 7 = 42.")...)
	evs := s.say("c-ok", "", "What is 6 * 7?")
	tr := evs.of("tool_result")
	if len(tr) != 1 {
		t.Fatalf("tool_result events %v", evs)
	}
	id, _ := tr[0].Payload["contract_id"].(string)
	if got := s.contractStatuses("c-ok", id); !slices.Equal(got, []string{"PENDING", "COMPLETED"}) {
		t.Errorf("contract %s statuses across checkpoints %v, want PENDING then COMPLETED", id, got)
	}
	c := s.contracts("c-ok")[id]
	if c["action_type"] != "tool_call" || c["status"] != "COMPLETED" || !strings.Contains(fmt.Sprint(c["result"]), "42") {
		t.Errorf("contract %v, want COMPLETED with the result", c)
	}
	if obs, _ := s.state("c-ok")["observation"].(string); !strings.Contains(obs, "42") {
		t.Errorf("observation %q", obs)
	}
}

// TestSeed001_AC2_ToolFailureThroughAContract: a failing tool moves its
// contract to FAILED with error_message, keeps the observation, and
// reasoning receives the structured error.
func TestSeed001_AC2_ToolFailureThroughAContract(t *testing.T) {
	s, model := cognitiveServer(t, calcReplies("sqrt(-1", "Sorry, that expression is malformed.")...)
	evs := s.say("c-fail", "", "What is sqrt(-1?")
	id, _ := evs.of("tool_result")[0].Payload["contract_id"].(string)
	if got := s.contractStatuses("c-fail", id); !slices.Equal(got, []string{"PENDING", "FAILED"}) {
		t.Errorf("statuses %v, want PENDING then FAILED", got)
	}
	c := s.contracts("c-fail")[id]
	msg, _ := c["error_message"].(string)
	if c["status"] != "FAILED" || msg == "" {
		t.Fatalf("contract %v, want FAILED with error_message", c)
	}
	if obs, _ := s.state("c-fail")["observation"].(string); obs == "" {
		t.Error("observation empty")
	}
	if p := model.Requests()[1].Messages[0].Content; !strings.Contains(p, "[FAILED] tool_call calculate") || !strings.Contains(p, msg) {
		t.Errorf("reasoning prompt lacks the FAILED contract and its error_message %q:\n%s", msg, p)
	}
}

// TestSeed001_AC3_PromptWithECSAndMCPInstructions: the reasoning prompt
// tells the model how to call tools and how to ask the user (ecs_request),
// and the MCP tools are offered.
func TestSeed001_AC3_PromptWithECSAndMCPInstructions(t *testing.T) {
	s, model := cognitiveServer(t, llmtest.JSON(map[string]any{"response": "Sure."}))
	s.say("c-prompt", "", "Can you send an email to my landlord for me?")
	p := systemPrompt(t, model, 0)
	for _, want := range []string{`"tool_call" (optional)`, `"ecs_request" (optional)`, "The conversation pauses until the user submits it", "Executions section"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	tools := model.Requests()[0].Tools
	for _, want := range []string{"local__calculate", "local__current_time", "local__convert_units"} {
		if !slices.Contains(tools, want) {
			t.Errorf("tools offered %v lack %s", tools, want)
		}
	}
}

// TestSeed001_AC4_ParsingCreatesContracts: a tool_call becomes a contract of
// action_type tool_call, an ecs_request one of action_type ecs_request, and
// memory_update entries are stored.
func TestSeed001_AC4_ParsingCreatesContracts(t *testing.T) {
	s, _ := cognitiveServer(t,
		llmtest.JSON(map[string]any{"response": "", "tool_call": map[string]any{"name": "current_time", "arguments": map[string]any{}}}),
		llmtest.JSON(map[string]any{"response": "I'll set that up; please confirm.",
			"ecs_request":   map[string]any{"title": "Schedule a reminder", "form": map[string]any{"fields": []any{map[string]any{"name": "when", "required": true}}}},
			"memory_update": []any{map[string]any{"key": "dentist", "value": "The user has a dentist appointment on Friday", "category": "event"}}}),
	)
	s.say("c-parse", "eve", "Remind me of my dentist appointment on Friday, what time is it now?")
	kinds := map[string]string{}
	for _, c := range s.contracts("c-parse") {
		kinds[c["action_type"].(string)] = c["status"].(string)
	}
	if kinds["tool_call"] != "COMPLETED" || kinds["ecs_request"] != "WAITING" {
		t.Errorf("contracts by action_type %v, want a COMPLETED tool_call and a WAITING ecs_request", kinds)
	}
	mu, _ := s.state("c-parse")["memory_update"].([]any)
	if len(mu) != 1 {
		t.Errorf("memory_update %v", mu)
	}
}

// TestSeed001_AC5_ReadingCompletedExecutions: re-entered after executions,
// reasoning reads each contract's status and result from the Executions
// section of its prompt.
func TestSeed001_AC5_ReadingCompletedExecutions(t *testing.T) {
	s, model := cognitiveServer(t,
		llmtest.JSON(map[string]any{"response": "", "tool_call": map[string]any{"name": "convert_units", "arguments": map[string]any{"value": 100, "from": "c", "to": "f"}}}),
		llmtest.JSON(map[string]any{"response": "", "tool_call": map[string]any{"name": "calculate", "arguments": map[string]any{"expression": "2 ** ("}}}),
		llmtest.JSON(map[string]any{"response": "100 °C is 212 °F; the second calculation failed."}),
	)
	s.say("c-read", "", "Convert 100 C to F, then compute 2 ** (")
	p := model.Requests()[2].Messages[0].Content
	i := strings.Index(p, "Executions")
	if i < 0 {
		t.Fatalf("no Executions section:\n%s", p)
	}
	section := p[i:]
	if !strings.Contains(section, "[COMPLETED] tool_call convert_units") || !strings.Contains(section, "212") || !strings.Contains(section, "[FAILED] tool_call calculate") {
		t.Errorf("Executions section does not list both contracts with their status and result:\n%s", section)
	}
}

// TestSeed001_AC6_CheckpointOnECSSuspension: the suspended state, with its
// contracts, survives a server restart.
func TestSeed001_AC6_CheckpointOnECSSuspension(t *testing.T) {
	s, _ := cognitiveServer(t, calcReplies("3 * 3", "")[0], bookingRequest())
	evs := s.say("c-persist", "", "What's 3 * 3? And book a table for two at Sushi Dai tomorrow at 7pm")
	id, _ := evs.of("hitl")[0].Payload["contract_id"].(string)
	s.restart()
	cs := s.contracts("c-persist")
	if len(cs) != 2 || cs[id]["status"] != "WAITING" {
		t.Fatalf("after a restart: contracts %v, want the COMPLETED tool call and the WAITING request", cs)
	}
}

// TestSeed001_AC7_ResumeWithValidation: /ecs/respond and /ecs/continue
// resume a WAITING contract: WAITING → RUNNING → COMPLETED with the answer
// as result, reasoning runs again, and nothing is left to continue.
func TestSeed001_AC7_ResumeWithValidation(t *testing.T) {
	s, model := cognitiveServer(t, bookingRequest(), llmtest.JSON(map[string]any{"response": "Your table is booked for 19:00."}))
	evs := s.say("c-resume", "", "Book a table for two at Sushi Dai tomorrow at 7pm")
	id, _ := evs.of("hitl")[0].Payload["contract_id"].(string)
	if code, _ := s.do("POST", "/ecs/respond", map[string]any{"session_id": "c-resume", "contract_id": "not-" + id, "response": map[string]any{"time": "19:00", "guests": 2}}); code != http.StatusConflict {
		t.Errorf("respond naming another contract: %d, want 409", code)
	}
	// An answer that misses a required field is not taken: the form is
	// asked again, saying what is missing, and the contract stays WAITING.
	if code, out := s.do("POST", "/ecs/respond", map[string]any{"session_id": "c-resume", "contract_id": id, "response": map[string]any{"time": "19:00"}}); code != http.StatusOK {
		t.Fatalf("respond: %d %v", code, out)
	}
	evs = s.mustChat("/ecs/continue", map[string]any{"session_id": "c-resume"})
	again := evs.of("hitl")
	if len(again) != 1 || again[0].Payload["contract_id"] != id || !strings.Contains(fmt.Sprint(again[0].Payload["error"]), "guests") ||
		evs[len(evs)-1].Payload["status"] != "interrupted" {
		t.Fatalf("continue with an incomplete answer: %v, want the form again naming the missing guests", evs)
	}
	if c := s.contracts("c-resume")[id]; c["status"] != "WAITING" {
		t.Fatalf("contract after an incomplete answer: %v, want WAITING", c)
	}
	if code, out := s.do("POST", "/ecs/respond", map[string]any{"session_id": "c-resume", "contract_id": id, "response": map[string]any{"time": "19:00", "guests": 2}}); code != http.StatusOK {
		t.Fatalf("respond: %d %v", code, out)
	}
	evs = s.mustChat("/ecs/continue", map[string]any{"session_id": "c-resume"})
	if evs.text() != "Your table is booked for 19:00." {
		t.Errorf("continue: %v", evs)
	}
	// RUNNING is the status inside hitl_resume's one update: the contracts
	// reducer accepts WAITING → RUNNING → COMPLETED only in that order.
	if got := s.contractStatuses("c-resume", id); !slices.Equal(got, []string{"PENDING", "WAITING", "COMPLETED"}) {
		t.Errorf("statuses %v, want PENDING, WAITING, COMPLETED across checkpoints", got)
	}
	if c := s.contracts("c-resume")[id]; !equalJSON(c["result"], map[string]any{"guests": 2, "time": "19:00"}) {
		t.Errorf("contract result %v, want the answer", c["result"])
	}
	if len(model.Requests()) != 2 {
		t.Errorf("%d model requests, want reasoning to run again once", len(model.Requests()))
	}
	if code, out := s.do("POST", "/ecs/continue", map[string]any{"session_id": "c-resume"}); code != http.StatusConflict ||
		!strings.Contains(fmt.Sprint(out["detail"]), `session "c-resume" is not waiting for an ECS response`) {
		t.Errorf("second continue: %d %v, want 409 saying the session is not waiting", code, out)
	}
}

// TestSeed001_AC7_ANewMessageCancelsTheWaitingRequest: a user who sends a
// new message instead of filling in a form drops that question; its
// contract is CANCELLED, so the answer to the next form completes the next
// request (not the dropped one), and the dropped one cannot be answered.
func TestSeed001_AC7_ANewMessageCancelsTheWaitingRequest(t *testing.T) {
	taxi := llmtest.JSON(map[string]any{"response": "Please confirm the taxi.", "ecs_request": map[string]any{
		"title": "Book a taxi", "form": map[string]any{"fields": []any{map[string]any{"name": "pickup", "label": "Pickup", "required": true}}}}})
	s, model := cognitiveServer(t, bookingRequest(), taxi, llmtest.JSON(map[string]any{"response": "Your taxi picks you up at home."}))
	table, _ := s.say("ecs-drop", "", "Book a table for two at Sushi Dai tomorrow at 7pm").of("hitl")[0].Payload["contract_id"].(string)
	taxiID, _ := s.say("ecs-drop", "", "Forget the table, book me a taxi instead.").of("hitl")[0].Payload["contract_id"].(string)
	if c := s.contracts("ecs-drop"); c[table]["status"] != "CANCELLED" || c[taxiID]["status"] != "WAITING" {
		t.Fatalf("contracts after the new message: table %v, taxi %v; want CANCELLED and WAITING", c[table]["status"], c[taxiID]["status"])
	}
	if p := model.Requests()[1].Messages[0].Content; !strings.Contains(p, "[CANCELLED] ecs_request") {
		t.Errorf("the second turn's prompt does not show the dropped request as CANCELLED:\n%s", p)
	}
	if code, _ := s.do("POST", "/ecs/respond", map[string]any{"session_id": "ecs-drop", "contract_id": table, "response": map[string]any{"time": "19:00", "guests": 2}}); code != http.StatusConflict {
		t.Errorf("answering the dropped request: %d, want 409", code)
	}
	if code, out := s.do("POST", "/ecs/respond", map[string]any{"session_id": "ecs-drop", "response": map[string]any{"pickup": "home"}}); code != http.StatusOK {
		t.Fatalf("respond: %d %v", code, out)
	}
	evs := s.mustChat("/ecs/continue", map[string]any{"session_id": "ecs-drop"})
	if len(evs.of("hitl")) != 0 || evs.text() != "Your taxi picks you up at home." {
		t.Fatalf("continue: %v, want the taxi answered", evs)
	}
	c := s.contracts("ecs-drop")
	if c[taxiID]["status"] != "COMPLETED" || !equalJSON(c[taxiID]["result"], map[string]any{"pickup": "home"}) || c[table]["status"] != "CANCELLED" {
		t.Errorf("contracts: table %v, taxi %v; want the taxi COMPLETED with the answer", c[table], c[taxiID])
	}
}
