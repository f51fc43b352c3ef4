package graphs_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/graphctl/graphctl/builtin-nodes/extract"
	"github.com/graphctl/graphctl/builtin-nodes/llm/llmtest"
	"github.com/graphctl/graphctl/server/sse"
)

// Seed 002 — the slot-filling appliance assistant — walked criterion by
// criterion against graphs/slot_filling.cue, served as `graphctl serve`
// serves it, through the LangGraph runs API a client (the official SDK's
// runs.stream) uses: POST /threads/{id}/runs/stream with stream modes
// updates (the nodes that ran), custom (the nodes' events) and values.

// turn is one run of a thread as a client sees it.
type turn struct {
	values map[string]any
	nodes  []string
	events []chatEvent
}

// reply is the content of the last assistant message.
func (tr turn) reply() string {
	msgs, _ := tr.values["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["type"] == "ai" || m["role"] == "assistant" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}

func (tr turn) event(typ string) []chatEvent {
	var out []chatEvent
	for _, e := range tr.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// send runs one user message on a thread of a graph and reads the stream.
func (s *shipped) send(graph, thread, text string) turn {
	s.t.Helper()
	return s.runInput(graph, thread, map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}})
}

// readTurn reads a run's stream of updates, custom events and values.
func (s *shipped) readTurn(graph, thread string, resp *http.Response) turn {
	s.t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("run %s on %s: status %d", graph, thread, resp.StatusCode)
	}
	var tr turn
	err := sse.Parse(resp.Body, func(f sse.Frame) error {
		switch f.Event {
		case "updates":
			var up map[string]any
			if err := json.Unmarshal(f.Data, &up); err != nil {
				return err
			}
			for name := range up {
				tr.nodes = append(tr.nodes, name)
			}
		case "custom":
			var e chatEvent
			if err := json.Unmarshal(f.Data, &e); err != nil {
				return err
			}
			tr.events = append(tr.events, e)
		case "values":
			tr.values = nil
			return json.Unmarshal(f.Data, &tr.values)
		case "error":
			s.t.Fatalf("run %s on %s failed: %s", graph, thread, f.Data)
		}
		return nil
	})
	if err != nil {
		s.t.Fatalf("read the stream of %s on %s: %v", graph, thread, err)
	}
	s.settle(thread)
	return tr
}

func slotServer(t *testing.T) *shipped {
	t.Helper()
	t.Setenv("GRAPHCTL_LLM", "")
	return serveShipped(t, "cognitive")
}

// ran reports whether the turn ran exactly the nodes given, in order.
func (tr turn) ran(nodes ...string) bool { return slices.Equal(tr.nodes, nodes) }

// TestSeed002_Step1_AsksHowItCanHelp: "The agent chats asking how can I help you?"
func TestSeed002_Step1_AsksHowItCanHelp(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "hello-1", "Hello there")
	if !tr.ran("extract", "route_goal", "greet") || !strings.Contains(tr.reply(), "How can I help you?") {
		t.Fatalf("nodes %v, reply %q; want the greeting", tr.nodes, tr.reply())
	}
}

// TestSeed002_Step2_FieldsAreAddedPermanently: detected fields (symptom,
// part number, model number, goal) are remembered across turns and a
// restart of the server; symptoms accumulate.
func TestSeed002_Step2_FieldsAreAddedPermanently(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "perm-1", "My dishwasher WDT780SAEM1 is leaking")
	if tr.values["model"] != "WDT780SAEM1" || !equalJSON(tr.values["symptoms"], []any{"leaking"}) {
		t.Fatalf("state %v, want model and symptom", tr.values)
	}
	if ex := tr.event("extract"); len(ex) != 1 || !equalJSON(ex[0].Payload["found"], map[string]any{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}}) {
		t.Errorf("extract events %v", ex)
	}
	s.restart()
	tr = s.send("slot_filling", "perm-1", "It's also making a grinding noise")
	if tr.values["model"] != "WDT780SAEM1" || !equalJSON(tr.values["symptoms"], []any{"leaking", "noisy"}) {
		t.Fatalf("after a restart: state %v, want the model kept and the symptoms accumulated", tr.values)
	}
	tr = s.send("slot_filling", "perm-1", "I want to fix it")
	if tr.values["goal"] != "diagnose_repair" || !strings.Contains(tr.reply(), "Based on your symptoms (leaking, noisy) for WDT780SAEM1") {
		t.Fatalf("state %v, reply %q", tr.values, tr.reply())
	}
}

// TestSeed002_Step2_ACorrectedNumberReplacesTheOldOne: extracted values
// always set — a user who corrects a model or part number is taken at their
// word, and the check runs again with the new number.
func TestSeed002_Step2_ACorrectedNumberReplacesTheOldOne(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "fix-1", "Will PS11750057 fit my WDT780SAEM1?")
	if !strings.HasPrefix(strings.TrimPrefix(tr.reply(), "[TOOL USED: check_compatibility]\n\n"), "Yes — PS11750057") {
		t.Fatalf("reply %q, want a yes for the door gasket on WDT780SAEM1", tr.reply())
	}
	tr = s.send("slot_filling", "fix-1", "sorry, it's WDT750SAHZ0, not WDT780SAEM1")
	if tr.values["model"] != "WDT750SAHZ0" || tr.values["part"] != "PS11750057" {
		t.Fatalf("state %v, want the corrected model and the same part", tr.values)
	}
	if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", "compatibility") {
		t.Errorf("nodes %v, want the compatibility check run again", tr.nodes)
	}
	res := tr.event("tool_result")
	if len(res) != 1 || !equalJSON(res[0].Payload["args"], map[string]any{"part": "PS11750057", "model": "WDT750SAHZ0"}) {
		t.Fatalf("tool_result %v, want the check with the corrected model", res)
	}
	if !strings.Contains(tr.reply(), "No — PS11750057") {
		t.Errorf("reply %q, want the gasket not to fit WDT750SAHZ0", tr.reply())
	}
	// A part number corrected alone; the model stays corrected.
	tr = s.send("slot_filling", "fix-1", "My mistake again, the part is PS3406971")
	if tr.values["model"] != "WDT750SAHZ0" || tr.values["part"] != "PS3406971" || !strings.Contains(tr.reply(), "Yes — PS3406971") {
		t.Fatalf("state %v, reply %q", tr.values, tr.reply())
	}
	// A message with no number leaves both as they are.
	tr = s.send("slot_filling", "fix-1", "How do I install it?")
	if tr.values["model"] != "WDT750SAHZ0" || tr.values["part"] != "PS3406971" || !strings.Contains(tr.reply(), "Installation instructions for PS3406971") {
		t.Fatalf("state %v, reply %q", tr.values, tr.reply())
	}
}

// TestSeed002_Step3and4_NoGoalAsksForTheGoal: without a stated goal the
// graph asks what the user wants to do, listing the three options.
func TestSeed002_Step3and4_NoGoalAsksForTheGoal(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "goal-1", "Dishwasher making noise")
	if !tr.ran("extract", "route_goal", "ask_goal") {
		t.Fatalf("nodes %v, want ask_goal", tr.nodes)
	}
	for _, want := range []string{"What would you like to do?", "installation instructions", "compatible", "diagnose and repair"} {
		if !strings.Contains(tr.reply(), want) {
			t.Errorf("reply %q lacks %q", tr.reply(), want)
		}
	}
}

// TestSeed002_Step4_AnOptionNumberPicksTheGoal: ask_goal lists the goals by
// number, and a reply of just the number picks that goal.
func TestSeed002_Step4_AnOptionNumberPicksTheGoal(t *testing.T) {
	s := slotServer(t)
	tests := []struct {
		first, pick, goal, node string
	}{
		{"My dishwasher WDT780SAEM1 is leaking", "3", "diagnose_repair", "diagnose"},
		{"WDT780SAEM1 with part PS3406971", " 2. ", "check_compatibility", "compatibility"},
		{"I have part PS3406971 and a WDT780SAEM1", "#1", "install_instruction", "install"},
	}
	for i, tt := range tests {
		thread := "pick-" + string(rune('a'+i))
		if tr := s.send("slot_filling", thread, tt.first); !tr.ran("extract", "route_goal", "ask_goal") {
			t.Fatalf("%q: nodes %v, want ask_goal", tt.first, tr.nodes)
		}
		tr := s.send("slot_filling", thread, tt.pick)
		if tr.values["goal"] != tt.goal || !tr.ran("extract", "route_goal", "choose_goal", "check_requirements", "route_tool", tt.node) {
			t.Errorf("%q after %q: goal %v, nodes %v; want %s and its tool", tt.pick, tt.first, tr.values["goal"], tr.nodes, tt.goal)
		}
	}
	// A number with other words is not an option: "2 of them leak" is a symptom.
	s.send("slot_filling", "pick-words", "WDT780SAEM1")
	if tr := s.send("slot_filling", "pick-words", "2 of them leak"); tr.values["goal"] != nil && tr.values["goal"] != "" {
		t.Errorf("goal %v from a message that only starts with a number", tr.values["goal"])
	}
	// Picked goal with a field missing asks for it.
	s.send("slot_filling", "pick-missing", "Dishwasher making noise")
	if tr := s.send("slot_filling", "pick-missing", "3"); !equalJSON(tr.values["missing"], []any{"model"}) || !strings.Contains(tr.reply(), "To diagnose the problem") {
		t.Errorf("state %v, reply %q; want the model asked for", tr.values, tr.reply())
	}
}

// TestSeed002_Step5and6_MissingFieldsAreAskedFor: with a goal, only the
// fields that goal needs and that are still missing are asked for.
func TestSeed002_Step5and6_MissingFieldsAreAskedFor(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "miss-1", "How do I install a new one?")
	if !tr.ran("extract", "route_goal", "check_requirements", "ask_info") || !equalJSON(tr.values["missing"], []any{"model", "part"}) {
		t.Fatalf("nodes %v, state %v", tr.nodes, tr.values)
	}
	if r := tr.reply(); !strings.Contains(r, "model number") || !strings.Contains(r, "part number") {
		t.Errorf("reply %q, want both fields asked for", r)
	}
	tr = s.send("slot_filling", "miss-1", "The part is PS11750057")
	if !equalJSON(tr.values["missing"], []any{"model"}) || strings.Contains(tr.reply(), "part number") {
		t.Errorf("state %v, reply %q; want only the model asked for", tr.values, tr.reply())
	}
}

// TestSeed002_Step7_ExecutesTheToolWhenReady: with every required field the
// matching tool runs, with the remembered fields as arguments.
func TestSeed002_Step7_ExecutesTheToolWhenReady(t *testing.T) {
	s := slotServer(t)
	tests := []struct {
		text, node, tool string
		args             map[string]any
	}{
		{"WDT780SAEM1 is leaking, can you help me fix it?", "diagnose", "diagnose_repair", map[string]any{"model": "WDT780SAEM1", "symptoms": []any{"leaking"}}},
		{"How do I install PS3406971 in my WDT780SAEM1?", "install", "get_installation_instructions", map[string]any{"part": "PS3406971", "model": "WDT780SAEM1"}},
		{"Is PS3406971 compatible with WDT780SAEM1?", "compatibility", "check_compatibility", map[string]any{"part": "PS3406971", "model": "WDT780SAEM1"}},
	}
	for i, tt := range tests {
		tr := s.send("slot_filling", "tool-"+string(rune('a'+i)), tt.text)
		res := tr.event("tool_result")
		if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", tt.node) || len(res) != 1 ||
			res[0].Payload["tool"] != tt.tool || res[0].Payload["status"] != "COMPLETED" || !equalJSON(res[0].Payload["args"], tt.args) {
			t.Errorf("%q: nodes %v, tool_result %v", tt.text, tr.nodes, res)
		}
		if !strings.HasPrefix(tr.reply(), "[TOOL USED: "+tt.tool+"]") {
			t.Errorf("%q: reply %q", tt.text, tr.reply())
		}
	}
}

// TestSeed002_Step7_AThankYouDoesNotRunTheToolAgain: once the tool has
// answered, a message that only thanks, declines or says goodbye is
// acknowledged; the remembered goal's tool does not run again, and the
// fields stay remembered for the next request.
func TestSeed002_Step7_AThankYouDoesNotRunTheToolAgain(t *testing.T) {
	s := slotServer(t)
	if tr := s.send("slot_filling", "ack", "Is PS3406971 compatible with WDT780SAEM1?"); len(tr.event("tool_result")) != 1 {
		t.Fatalf("nodes %v, want the compatibility check", tr.nodes)
	}
	for _, tt := range []struct{ text, reply string }{
		{"Thanks!", "You are welcome!"}, {"ok", "You are welcome!"}, {"Never mind.", "OK, I will leave it there."}, {"bye", "Goodbye!"},
	} {
		tr := s.send("slot_filling", "ack", tt.text)
		if !tr.ran("extract", "route_goal", "acknowledge") || !strings.HasPrefix(tr.reply(), tt.reply) {
			t.Errorf("%q: nodes %v, reply %q; want %q and no tool", tt.text, tr.nodes, tr.reply(), tt.reply)
		}
	}
	tr := s.send("slot_filling", "ack", "ok, and how do I install it?")
	if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", "install") || tr.values["model"] != "WDT780SAEM1" {
		t.Errorf("nodes %v, state %v; want the installation with the remembered fields", tr.nodes, tr.values)
	}
}

// TestSeed002_Step8_ClearGraphStructure: the graph has the explicit nodes and
// routers of the requirement and no model decides a route — the served
// graph's structure says so.
func TestSeed002_Step8_ClearGraphStructure(t *testing.T) {
	s := slotServer(t)
	code, g := s.do("GET", "/assistants/slot_filling/graph", nil)
	if code != http.StatusOK {
		t.Fatalf("graph: %d %v", code, g)
	}
	types := map[string]string{}
	nodes, _ := g["nodes"].([]any)
	for _, n := range nodes {
		m, _ := n.(map[string]any)
		data, _ := m["data"].(map[string]any)
		typ, _ := data["node_type"].(string)
		types[m["id"].(string)] = typ
	}
	for name, typ := range map[string]string{"extract": "extract", "route_goal": "route", "ask_goal": "reply",
		"check_requirements": "set", "ask_info": "reply", "diagnose": "tool", "install": "tool", "compatibility": "tool"} {
		if types[name] != typ {
			t.Errorf("node %s is %q, want %q (nodes %v)", name, types[name], typ, types)
		}
	}
	for name, typ := range types {
		if typ == "llm" {
			t.Errorf("node %s is an llm node; no model may route", name)
		}
	}
	edges, _ := g["edges"].([]any)
	conditional := 0
	for _, e := range edges {
		m, _ := e.(map[string]any)
		if m["conditional"] == true {
			conditional++
			if src := m["source"]; src != "route_goal" && src != "check_requirements" && src != "route_tool" {
				t.Errorf("conditional edge from %v: only the routers decide", src)
			}
		}
	}
	if conditional == 0 {
		t.Error("no conditional edges")
	}
}

// TestSeed002_Scenario1_ModelAndSymptomThenTheGoal: "My dishwasher
// WDT780SAEM1 is leaking" asks for the goal; "I want to fix it" diagnoses.
func TestSeed002_Scenario1_ModelAndSymptomThenTheGoal(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "s1", "My dishwasher WDT780SAEM1 is leaking")
	if !tr.ran("extract", "route_goal", "ask_goal") {
		t.Fatalf("turn 1 nodes %v", tr.nodes)
	}
	tr = s.send("slot_filling", "s1", "I want to fix it")
	if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", "diagnose") || !strings.Contains(tr.reply(), "PS11750057") {
		t.Fatalf("turn 2 nodes %v, reply %q", tr.nodes, tr.reply())
	}
}

// TestSeed002_Scenario2_PartWithoutModelAsksForTheModel.
func TestSeed002_Scenario2_PartWithoutModelAsksForTheModel(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "s2", "Install PS3406971")
	if !tr.ran("extract", "route_goal", "check_requirements", "ask_info") || !equalJSON(tr.values["missing"], []any{"model"}) {
		t.Fatalf("turn 1 nodes %v, state %v", tr.nodes, tr.values)
	}
	tr = s.send("slot_filling", "s2", "WDT780SAEM1")
	if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", "install") || !strings.Contains(tr.reply(), "Installation instructions for PS3406971") {
		t.Fatalf("turn 2 nodes %v, reply %q", tr.nodes, tr.reply())
	}
}

// TestSeed002_Scenario3_SymptomsOnlyAskGoalThenModel: "Dishwasher making
// noise" asks for the goal, "Fix it" asks for the model it still lacks, and
// the model runs the diagnosis.
func TestSeed002_Scenario3_SymptomsOnlyAskGoalThenModel(t *testing.T) {
	s := slotServer(t)
	if tr := s.send("slot_filling", "s3", "Dishwasher making noise"); !tr.ran("extract", "route_goal", "ask_goal") {
		t.Fatalf("turn 1 nodes %v", tr.nodes)
	}
	if tr := s.send("slot_filling", "s3", "Fix it"); !equalJSON(tr.values["missing"], []any{"model"}) {
		t.Fatalf("turn 2 state %v, want the model asked for", tr.values)
	}
	tr := s.send("slot_filling", "s3", "It's a WDT780SAEM1")
	if !slices.Contains(tr.nodes, "diagnose") || !strings.Contains(tr.reply(), "Based on your symptoms (noisy) for WDT780SAEM1") {
		t.Fatalf("turn 3 nodes %v, reply %q", tr.nodes, tr.reply())
	}
}

// TestSeed002_Scenario4_FullRequestRunsAtOnce.
func TestSeed002_Scenario4_FullRequestRunsAtOnce(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "s4", "Is PS3406971 compatible with WDT780SAEM1?")
	if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", "compatibility") || !strings.Contains(tr.reply(), "Yes — PS3406971") {
		t.Fatalf("nodes %v, reply %q", tr.nodes, tr.reply())
	}
}

// TestSeed002_Performance_OneModelCallPerMessage: with a model configured,
// each message costs one model call (extract's) and routing none, and a
// model-extracted correction replaces the old number as the rules' does.
func TestSeed002_Performance_OneModelCallPerMessage(t *testing.T) {
	model := llmtest.NewServer(t, llmtest.WithReplies(
		llmtest.JSON(map[string]any{"model": "WDT780SAEM1", "part": nil, "symptoms": []any{"leaking"}, "goal": nil}),
		llmtest.JSON(map[string]any{"model": nil, "part": nil, "symptoms": []any{}, "goal": "diagnose_repair"}),
		llmtest.JSON(map[string]any{"model": "WDT750SAHZ0", "part": nil, "symptoms": []any{}, "goal": nil}),
	))
	t.Setenv("OPENAI_BASE_URL", model.URL())
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("GRAPHCTL_LLM", "openai:gpt-4o-mini")
	s := serveShipped(t, "cognitive")
	for i, text := range []string{"the dishwasher WDT780SAEM1 leaves a puddle", "please sort it out", "oops, the model is really WDT750SAHZ0"} {
		tr := s.send("slot_filling", "perf", text)
		if n := len(model.Requests()); n != i+1 {
			t.Fatalf("after message %d the model got %d requests, want %d", i+1, n, i+1)
		}
		if ex := tr.event("extract"); len(ex) != 1 || ex[0].Payload["mode"] != "llm" {
			t.Errorf("message %d: extract events %v, want the model's extraction", i+1, ex)
		}
		if i == 2 && (tr.values["model"] != "WDT750SAHZ0" || !strings.Contains(tr.reply(), "for WDT750SAHZ0")) {
			t.Errorf("the corrected model: state %v, reply %q", tr.values, tr.reply())
		}
	}
}

// serveWithModelServerDown serves the shipped graphs with the model (llm
// overriding the graphs' default when not empty) at an address nothing
// listens on.
func serveWithModelServerDown(t *testing.T, llm string) *shipped {
	t.Helper()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	t.Setenv("OPENAI_BASE_URL", down.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("GRAPHCTL_LLM", llm)
	return serveShipped(t, "cognitive")
}

// TestSeed002_ModelServerDownFallsBackToTheRules: with a model configured
// but its server down (nothing listening), each message is still understood
// by the rules — the extract step says it fell back — and the tool runs.
func TestSeed002_ModelServerDownFallsBackToTheRules(t *testing.T) {
	s := serveWithModelServerDown(t, "openai:gpt-4o-mini")
	tr := s.send("slot_filling", "down", "Is PS3406971 compatible with WDT780SAEM1?")
	if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", "compatibility") || !strings.Contains(tr.reply(), "Yes — PS3406971") {
		t.Fatalf("nodes %v, reply %q", tr.nodes, tr.reply())
	}
	if fb := tr.event(extract.FallbackEventType); len(fb) != 1 || fb[0].Payload["to"] != extract.ModeRules {
		t.Errorf("fallback events %v, want the extract step's fallback to the rules", fb)
	}
}

// TestSeed002_UnknownModelIsSaidSo: a model number the catalog does not
// have is answered with that and the closest numbers it has; the corrected
// number then gets the diagnosis, without restating the goal.
func TestSeed002_UnknownModelIsSaidSo(t *testing.T) {
	s := slotServer(t)
	tr := s.send("slot_filling", "unknown", "My dishwasher WDT780SAEM2 is leaking, can you fix it?")
	if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", "diagnose") ||
		!strings.Contains(tr.reply(), "I couldn't find model WDT780SAEM2 in the catalog. Did you mean: WDT780SAEM1") {
		t.Fatalf("nodes %v, reply %q", tr.nodes, tr.reply())
	}
	tr = s.send("slot_filling", "unknown", "sorry, it is WDT780SAEM1")
	if !tr.ran("extract", "route_goal", "check_requirements", "route_tool", "diagnose") || tr.values["model"] != "WDT780SAEM1" ||
		strings.Contains(tr.reply(), "couldn't find") {
		t.Fatalf("after the correction: nodes %v, model %v, reply %q", tr.nodes, tr.values["model"], tr.reply())
	}
}
